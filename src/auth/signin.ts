import { ApiError, Code, authError, badParam } from '../api/errors.js';
import type { Services } from '../services.js';
import { admitSignin } from './defence.js';
import { requestAddress } from './ip.js';
import { needsRehash } from './passwords.js';
import { issueUserSession, type SessionData } from './sessions.js';
import { startTotpChallenge } from './totp.js';

export const MIN_PASSWORD_LENGTH = 10;

export interface SigninRequest {
  email: string;
  password: string;
  captcha?: string;
  ip: string;
}

export type SigninOutcome = SessionData | { totp_session_token: string };

/**
 * auth.signin. The order matters: cheap parameter checks, then the brute-force defence
 * (before any hashing), then exactly one password verification whether or not the e-mail
 * exists, and only after a right password anything that depends on the account's state.
 */
export async function signIn(services: Services, request: SigninRequest): Promise<SigninOutcome> {
  if (request.password.length < MIN_PASSWORD_LENGTH)
    throw badParam('password', `must be at least ${MIN_PASSWORD_LENGTH} characters`);
  const email = request.email.trim().toLowerCase();
  const ip = requestAddress(request.ip);
  const user =
    email === ''
      ? undefined
      : await services.db.kysely
          .selectFrom('users')
          .select(['user_id', 'password_hash', 'totp_secret', 'global_ban', 'captcha_always', 'bot_owner_id'])
          .where('email', '=', email)
          .executeTakeFirst();

  const attempt = await admitSignin(services, { email, ip, captcha: request.captcha, captchaAlways: user?.captcha_always === 1 });
  const passwordRight = await services.auth.passwords.check(user?.password_hash, request.password);
  // Bots get their tokens from bots.getToken; for sign-in they do not exist.
  if (!user || !passwordRight || user.bot_owner_id !== null) throw authError('wrong e-mail or password');
  await attempt.succeeded();

  if (needsRehash(user.password_hash!)) await upgradeHash(services, user.user_id, user.password_hash!, request.password);
  if (user.global_ban === 1) throw new ApiError(Code.GLOBAL_BAN, 'the account is globally blocked');
  if (user.totp_secret) return { totp_session_token: await startTotpChallenge(services, user.user_id, ip) };
  return issueUserSession(services, user.user_id, ip);
}

/** Re-hashes a password stored with weaker parameters, unless it was changed meanwhile. */
async function upgradeHash(services: Services, userId: number, oldHash: string, password: string): Promise<void> {
  const newHash = await services.auth.passwords.hash(password);
  await services.db.kysely
    .updateTable('users')
    .set({ password_hash: newHash })
    .where('user_id', '=', userId)
    .where('password_hash', '=', oldHash)
    .execute();
}
