import { randomBytes } from 'node:crypto';
import { Algorithm, hash, verify } from '@node-rs/argon2';

/** argon2id at OWASP's minimum (19 MiB, 2 passes, 1 lane). Hashing runs on libuv's thread pool. */
export const PASSWORD_HASH_OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, PASSWORD_HASH_OPTIONS);
}

export async function verifyPassword(encoded: string, password: string): Promise<boolean> {
  try {
    return await verify(encoded, password);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Checks a password against an account's hash, or, when there is no account (or it has no
 * password), against a hash of a random password with the same parameters: an unknown
 * e-mail costs as much as a wrong password and answers the same.
 */
export async function checkPassword(encoded: string | null | undefined, password: string): Promise<boolean> {
  if (encoded) return verifyPassword(encoded, password);
  await verifyPassword(await prepareDummyHash(), password);
  return false;
}

/** Computes the stand-in hash once per process (done at start so no request pays for it). */
export function prepareDummyHash(): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'));
  return dummyHash;
}

/** True when a stored hash is weaker than the current parameters (upgraded on next sign-in). */
export function needsRehash(encoded: string): boolean {
  const match = /^\$argon2(id|i|d)\$v=\d+\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(encoded);
  if (!match) return true;
  const [, variant, m, t, p] = match;
  return (
    variant !== 'id' ||
    Number(m) < PASSWORD_HASH_OPTIONS.memoryCost ||
    Number(t) < PASSWORD_HASH_OPTIONS.timeCost ||
    Number(p) < PASSWORD_HASH_OPTIONS.parallelism
  );
}
