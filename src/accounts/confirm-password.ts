import { ApiError, Code, rateLimited } from '../api/errors.js';
import type { Services } from '../services.js';
import { findUser } from './queries.js';

/** Wrong passwords a signed-in user may send to the methods that ask for one, per window. */
export const CONFIRM_PASSWORD_LIMIT = { max: 10, windowSeconds: 60 * 60 } as const;

export const wrongPassword = () => new ApiError(Code.WRONG_PASSWORD, 'the password is wrong');

/**
 * Checks the account's password before a sensitive change, and answers the hash it was
 * checked against (the change must find it unchanged). Each check is counted before it is
 * made, so concurrent guesses cannot exceed the allowance: past it, 7. An account without a
 * password (made by an operator) answers 1605 like a wrong one.
 */
export async function confirmPassword(services: Services, userId: number, password: string): Promise<string> {
  const key = `confirm:fail:${userId}`;
  const { windowSeconds } = CONFIRM_PASSWORD_LIMIT;
  const hit = await services.counters.hit(key, windowSeconds);
  const release = () => services.counters.hit(key, windowSeconds, -1);
  if (hit.count > CONFIRM_PASSWORD_LIMIT.max) {
    await release();
    throw rateLimited(hit.resetIn);
  }
  const row = await findUser(services.db.kysely, userId, ['password_hash']);
  const right = await services.auth.passwords.check(row?.password_hash, password).catch(async (error: unknown) => {
    // Refused before being checked (the hashers' queue is full): not a wrong password.
    await release();
    throw error;
  });
  if (!right || !row?.password_hash) throw wrongPassword();
  await release();
  return row.password_hash;
}
