import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Algorithm, hash, verify } from '@node-rs/argon2';

/** argon2id at OWASP's minimum (19 MiB, 2 passes, 1 lane). Hashing runs on libuv's thread pool. */
export const PASSWORD_HASH_OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * Hashes computed at once. Each keeps a core busy for tens of milliseconds and the thread
 * pool would run four: a burst of sign-ins would then take every core and starve the event
 * loop, so that every other request waits. The rest queue, and one core stays free.
 */
const MAX_CONCURRENT_HASHES = Math.max(1, availableParallelism() - 1);

/** Password hashing for one process (or one import): at most MAX_CONCURRENT_HASHES at once. */
export class PasswordHasher {
  private hashing = 0;
  private readonly waiting: (() => void)[] = [];
  private dummyHash: Promise<string> | undefined;

  private async limited<T>(work: () => Promise<T>): Promise<T> {
    if (this.hashing >= MAX_CONCURRENT_HASHES) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.hashing++;
    try {
      return await work();
    } finally {
      // The slot passes straight to the next in line, if any.
      const next = this.waiting.shift();
      if (next) next();
      else this.hashing--;
    }
  }

  hash(password: string): Promise<string> {
    return this.limited(() => hashPassword(password));
  }

  verify(encoded: string, password: string): Promise<boolean> {
    return this.limited(() => verifyPassword(encoded, password));
  }

  /**
   * Checks a password against an account's hash, or, when there is no account (or it has no
   * password), against a hash of a random password with the same parameters: an unknown
   * e-mail costs as much as a wrong password and answers the same.
   */
  async check(encoded: string | null | undefined, password: string): Promise<boolean> {
    if (encoded) return this.verify(encoded, password);
    await this.verify(await this.prepareDummyHash(), password);
    return false;
  }

  /** Computes the stand-in hash once (done at start so no request pays for it). */
  prepareDummyHash(): Promise<string> {
    this.dummyHash ??= this.hash(randomBytes(16).toString('hex'));
    return this.dummyHash;
  }
}

/** One hash, not queued: for tools and tests (a server hashes through its PasswordHasher). */
export function hashPassword(password: string): Promise<string> {
  return hash(password, PASSWORD_HASH_OPTIONS);
}

async function verifyPassword(encoded: string, password: string): Promise<boolean> {
  try {
    return await verify(encoded, password);
  } catch {
    return false;
  }
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
