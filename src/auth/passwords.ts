import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Algorithm, hash, verify } from '@node-rs/argon2';

/** argon2id at OWASP's minimum (19 MiB, 2 passes, 1 lane). Hashing runs on libuv's thread pool. */
export const PASSWORD_HASH_OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * Hashes computed at once. Each keeps a core busy for tens of milliseconds and the thread
 * pool would run four: a burst of sign-ins would then take every core and starve the event
 * loop, so that every other request waits. The rest queue here, and one core stays free.
 */
const MAX_CONCURRENT_HASHES = Math.max(1, availableParallelism() - 1);
let hashing = 0;
const waiting: (() => void)[] = [];

async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (hashing >= MAX_CONCURRENT_HASHES) await new Promise<void>((resolve) => waiting.push(resolve));
  else hashing++;
  try {
    return await work();
  } finally {
    // The slot passes straight to the next in line, if any.
    const next = waiting.shift();
    if (next) next();
    else hashing--;
  }
}

export function hashPassword(password: string): Promise<string> {
  return limited(() => hash(password, PASSWORD_HASH_OPTIONS));
}

export async function verifyPassword(encoded: string, password: string): Promise<boolean> {
  try {
    return await limited(() => verify(encoded, password));
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
