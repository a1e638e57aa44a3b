import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Algorithm, hash, verify } from '@node-rs/argon2';
import { rateLimited } from '../api/errors.js';

/** argon2id at OWASP's minimum (19 MiB, 2 passes, 1 lane). Hashing runs on libuv's thread pool. */
export const PASSWORD_HASH_OPTIONS = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * Hashes computed at once. Each keeps a core busy for tens of milliseconds and the thread
 * pool would run four: a burst of sign-ins would then take every core and starve the event
 * loop, so that every other request waits. The rest queue, and one core stays free.
 */
const MAX_CONCURRENT_HASHES = Math.max(1, availableParallelism() - 1);

/** Password checks that may wait for a hasher in a server process, in each queue; past it, code 7. */
export const DEFAULT_PASSWORD_HASH_QUEUE = 16;

/** How long a hash took (ms), as a moving average starts: argon2id at PASSWORD_HASH_OPTIONS on one core. */
const FIRST_HASH_MS_ESTIMATE = 50;

/**
 * Password hashing for one process (or one import): at most MAX_CONCURRENT_HASHES at once, the
 * rest waiting in two queues of at most `maxWaiting` each. Favoured work (a sign-in from an
 * address or device the account signed in from before) waits in its own queue and goes first,
 * so anonymous checks from many addresses (unknown e-mails, guesses) can neither slow it nor
 * crowd it out. Work that finds its queue full is refused with code 7 and the time the queue
 * ahead of it should take.
 */
export class PasswordHasher {
  private hashing = 0;
  private readonly favoured: (() => void)[] = [];
  private readonly others: (() => void)[] = [];
  private dummyHash: Promise<string> | undefined;
  private averageMs = FIRST_HASH_MS_ESTIMATE;

  constructor(private readonly maxWaiting: number = Number.POSITIVE_INFINITY) {}

  private async limited<T>(work: () => Promise<T>, favoured = false): Promise<T> {
    if (this.hashing < MAX_CONCURRENT_HASHES) this.hashing++;
    else {
      const queue = favoured ? this.favoured : this.others;
      if (queue.length >= this.maxWaiting) throw rateLimited(this.secondsToDrain(this.favoured.length + this.others.length));
      await new Promise<void>((resolve) => queue.push(resolve));
    }
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.averageMs += (performance.now() - started - this.averageMs) / 8;
      // The slot passes straight to the next in line, favoured first, if any.
      const next = this.favoured.shift() ?? this.others.shift();
      if (next) next();
      else this.hashing--;
    }
  }

  /** Whole seconds, at least 1, until `waiting` hashes ahead would be done. */
  private secondsToDrain(waiting: number): number {
    return Math.max(1, Math.ceil(((waiting + 1) * this.averageMs) / MAX_CONCURRENT_HASHES / 1000));
  }

  hash(password: string): Promise<string> {
    return this.limited(() => hashPassword(password));
  }

  verify(encoded: string, password: string, options: { favoured?: boolean } = {}): Promise<boolean> {
    return this.limited(() => verifyPassword(encoded, password), options.favoured);
  }

  /**
   * Checks a password against an account's hash, or, when there is no account (or it has no
   * password), against a hash of a random password with the same parameters: an unknown
   * e-mail costs as much as a wrong password and answers the same.
   */
  async check(encoded: string | null | undefined, password: string, options: { favoured?: boolean } = {}): Promise<boolean> {
    if (encoded) return this.verify(encoded, password, options);
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
