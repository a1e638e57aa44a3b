import type { Redis } from 'ioredis';
import type { Clock } from './clock.js';

export interface Hit {
  /** Count in the current window, this hit included. */
  count: number;
  /** Seconds until the window ends. */
  resetIn: number;
}

export interface Take extends Hit {
  /** The counter was increased (it had room). */
  taken: boolean;
}

/** A limit on a counter: at most `max` in a window of `windowSeconds`. */
export interface Limit {
  key: string;
  windowSeconds: number;
  max: number;
}

/**
 * Fixed-window counters shared by every limit of the platform (request rates, sign-in
 * failures, chat slow mode, bot quotas). In one process they live in memory; with Redis
 * they are shared by every process.
 */
export interface CounterStore {
  /** Adds `by` to the counter `key` for a window of `windowSeconds` and returns the new count. */
  hit(key: string, windowSeconds: number, by?: number): Promise<Hit>;
  /**
   * Adds `by` only when the counter stays at or below `max`, in one atomic step: of any
   * number of concurrent takes, at most `max` succeed. A refused take changes nothing.
   */
  take(key: string, windowSeconds: number, max: number, by?: number): Promise<Take>;
  /**
   * Counts one against each limit in turn, each atomically, and stops at the first one past its
   * max: the limits after it are not counted. Answers that one's hit, undefined when every limit
   * had room. Meant for the request limits: with Redis, limits of 200 and more are counted by
   * leases (see RedisCounterStore), so a refusal may come up to a hundredth of the limit early
   * per process, never late.
   */
  hitLimits(limits: readonly Limit[]): Promise<Hit | undefined>;
  /** Reads the counter without changing it. */
  peek(key: string): Promise<Hit>;
  /**
   * Sets the text `key` holds (for `windowSeconds`) and answers the one it held before, null
   * when none, in one atomic step: of concurrent exchanges with one value, one sees another.
   */
  exchange(key: string, value: string, windowSeconds: number): Promise<string | null>;
  reset(key: string): Promise<void>;
  close(): Promise<void>;
}

/** Bounds of the in-memory counters: entries, and bytes their names take. */
export const MEMORY_COUNTER_LIMITS = { entries: 200_000, nameBytes: 16 * 1024 * 1024 } as const;

interface CounterWindow {
  count: number;
  /** ms */
  endsAt: number;
}

/** Whole seconds in `ms`, at least 1: when a window ends, as a hit tells it. */
const wholeSeconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/** Whole seconds until the window ends, at least 1. */
function secondsLeft(window: CounterWindow, now: number): number {
  return wholeSeconds(window.endsAt - now);
}

export class MemoryCounterStore implements CounterStore {
  private readonly windows = new Map<string, CounterWindow>();
  /** The few texts `exchange` keeps (not counters: their keys are the platform's own, never a client's). */
  private readonly texts = new Map<string, { value: string; endsAt: number }>();
  private readonly sweeper: NodeJS.Timeout;
  private nameBytes = 0;

  constructor(
    private readonly clock: Clock,
    private readonly maxKeys: number = MEMORY_COUNTER_LIMITS.entries,
    private readonly maxNameBytes: number = MEMORY_COUNTER_LIMITS.nameBytes,
  ) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  async hit(key: string, windowSeconds: number, by = 1): Promise<Hit> {
    return this.hitNow(key, windowSeconds, by);
  }

  /** Synchronous, so that a take's read and increment cannot interleave with another call. */
  private hitNow(key: string, windowSeconds: number, by: number): Hit {
    const now = this.clock.now();
    const window = this.windowOf(key, windowSeconds, now);
    window.count += by;
    return { count: window.count, resetIn: secondsLeft(window, now) };
  }

  /** The counter's current window, a new one when it has none or its window has ended. */
  private windowOf(key: string, windowSeconds: number, now: number): CounterWindow {
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      if (!window) this.makeRoom(key);
      window = { count: 0, endsAt: now + windowSeconds * 1000 };
      this.windows.set(key, window);
    }
    return window;
  }

  async hitLimits(limits: readonly Limit[]): Promise<Hit | undefined> {
    const now = this.clock.now();
    for (const { key, windowSeconds, max } of limits) {
      const window = this.windowOf(key, windowSeconds, now);
      if (++window.count > max) return { count: window.count, resetIn: secondsLeft(window, now) };
    }
    return undefined;
  }

  async take(key: string, windowSeconds: number, max: number, by = 1): Promise<Take> {
    const current = this.peekNow(key);
    if (current.count + by > max) return { taken: false, count: current.count, resetIn: Math.max(1, current.resetIn) };
    return { taken: true, ...this.hitNow(key, windowSeconds, by) };
  }

  async peek(key: string): Promise<Hit> {
    return this.peekNow(key);
  }

  private peekNow(key: string): Hit {
    const now = this.clock.now();
    const window = this.windows.get(key);
    if (!window || window.endsAt <= now) return { count: 0, resetIn: 0 };
    return { count: window.count, resetIn: secondsLeft(window, now) };
  }

  async exchange(key: string, value: string, windowSeconds: number): Promise<string | null> {
    const now = this.clock.now();
    const held = this.texts.get(key);
    this.texts.set(key, { value, endsAt: now + windowSeconds * 1000 });
    return held && held.endsAt > now ? held.value : null;
  }

  async reset(key: string): Promise<void> {
    this.forget(key);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  /** Entries held (never more than the bound). */
  get size(): number {
    return this.windows.size;
  }

  /**
   * Before a new entry: past either bound, expired entries go, then the oldest ones (which a
   * flood of new names would otherwise push the process's memory up with).
   */
  private makeRoom(key: string): void {
    this.nameBytes += key.length;
    if (this.windows.size < this.maxKeys && this.nameBytes <= this.maxNameBytes) return;
    this.sweep();
    for (const oldest of this.windows.keys()) {
      if (this.windows.size < this.maxKeys && this.nameBytes <= this.maxNameBytes) break;
      this.forget(oldest);
    }
  }

  private forget(key: string): void {
    if (this.windows.delete(key)) this.nameBytes -= key.length;
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.forget(key);
    for (const [key, text] of this.texts) if (text.endsAt <= now) this.texts.delete(key);
  }
}

const HIT_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {count, ttl}
`;

const TAKE_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
if current + tonumber(ARGV[1]) > tonumber(ARGV[3]) then
  return {0, current, ttl}
end
local count = redis.call('INCRBY', KEYS[1], ARGV[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {1, count, ttl}
`;

/**
 * Counts ARGV[3] units at once when they all fit under the max ARGV[2] (a lease the process
 * spends without asking again), else one; answers the units counted, the count and the
 * milliseconds the window has left.
 */
const LEASE_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local lease = tonumber(ARGV[3])
local units = 1
if lease > 1 and current + lease <= tonumber(ARGV[2]) then units = lease end
local count = redis.call('INCRBY', KEYS[1], units)
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {units, count, ttl}
`;

/**
 * Units of a request limit a process takes from Redis at once and spends request by request: a
 * hundredth of the limit (none below 200), at most MAX_LEASE. Every unit was counted in Redis
 * within the limit before it is spent, so the processes together never admit more than the
 * limit; a process that stops sending before the window ends leaves its lease's rest unused.
 */
const LEASE_SHARE = 100;
const MAX_LEASE = 64;
/** Leases kept at most; past it, those whose window has ended go, then all. */
const MAX_LEASES = 50_000;

const leaseSize = (max: number): number => Math.min(MAX_LEASE, Math.floor(max / LEASE_SHARE));

interface Lease {
  /** Units left to spend. */
  left: number;
  /** ms (Date.now, as Redis counts), when the window ends. */
  endsAt: number;
}

/** The scripts, as commands of the connection: sent by their SHA1 (EVALSHA), the text only when Redis has not seen it yet. */
interface CounterCommands {
  counterTake(key: string, by: number, windowMs: number, max: number): Promise<[number, number, number]>;
  counterHit(key: string, by: number, windowMs: number): Promise<[number, number]>;
  counterLease(key: string, windowMs: number, max: number, lease: number): Promise<[number, number, number]>;
}

/**
 * Counters in Redis, shared by every process. The request limits (`hitLimits`) are counted by
 * leases (LEASE_SHARE): a request costs a round trip to Redis only every few requests of its
 * address or token.
 */
export class RedisCounterStore implements CounterStore {
  private readonly commands: CounterCommands;
  private readonly leases = new Map<string, Lease>();
  /** Keys whose lease is being asked for. */
  private readonly leasing = new Set<string>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'gp:count:',
  ) {
    redis.defineCommand('counterTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    redis.defineCommand('counterHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    redis.defineCommand('counterLease', { numberOfKeys: 1, lua: LEASE_SCRIPT });
    this.commands = redis as unknown as CounterCommands;
  }

  async take(key: string, windowSeconds: number, max: number, by = 1): Promise<Take> {
    const [taken, count, ttl] = await this.commands.counterTake(this.prefix + key, by, windowSeconds * 1000, max);
    return { taken: taken === 1, count, resetIn: wholeSeconds(ttl < 0 ? windowSeconds * 1000 : ttl) };
  }

  async hit(key: string, windowSeconds: number, by = 1): Promise<Hit> {
    const [count, ttl] = await this.commands.counterHit(this.prefix + key, by, windowSeconds * 1000);
    return { count, resetIn: wholeSeconds(ttl) };
  }

  async hitLimits(limits: readonly Limit[]): Promise<Hit | undefined> {
    for (const limit of limits) {
      const over = await this.hitLeased(limit);
      if (over) return over;
    }
    return undefined;
  }

  /** Counts one against the limit, from this process's lease when it holds one; the hit when past its max. */
  private async hitLeased({ key, windowSeconds, max }: Limit): Promise<Hit | undefined> {
    if (this.spend(key)) return undefined;
    // One lease of a key is asked for at a time; the requests that meanwhile find none count one each.
    const leasing = !this.leasing.has(key);
    if (leasing) this.leasing.add(key);
    let answer: [number, number, number];
    try {
      answer = await this.commands.counterLease(this.prefix + key, windowSeconds * 1000, max, leasing ? leaseSize(max) : 1);
    } finally {
      if (leasing) this.leasing.delete(key);
    }
    const [units, count, ttl] = answer;
    // Units this process leased while this request asked are spent before it is refused.
    if (count > max) return this.spend(key) ? undefined : { count, resetIn: wholeSeconds(ttl) };
    if (units > 1) this.keepLease(key, units - 1, Date.now() + ttl);
    return undefined;
  }

  /** Spends a unit of the key's lease; false when none is left in the current window. */
  private spend(key: string): boolean {
    const lease = this.leases.get(key);
    if (lease === undefined || lease.left < 1) return false;
    if (lease.endsAt <= Date.now()) {
      this.leases.delete(key);
      return false;
    }
    lease.left--;
    return true;
  }

  /** Adds units to the key's lease (what was left of an earlier window is gone). */
  private keepLease(key: string, units: number, endsAt: number): void {
    const held = this.leases.get(key);
    if (held !== undefined && held.endsAt > Date.now()) {
      held.left += units;
      return;
    }
    if (held === undefined && this.leases.size >= MAX_LEASES) {
      const now = Date.now();
      for (const [other, lease] of this.leases) if (lease.endsAt <= now) this.leases.delete(other);
      if (this.leases.size >= MAX_LEASES) this.leases.clear();
    }
    this.leases.set(key, { left: units, endsAt });
  }

  async peek(key: string): Promise<Hit> {
    const [value, ttl] = await Promise.all([this.redis.get(this.prefix + key), this.redis.pttl(this.prefix + key)]);
    if (value === null || ttl < 0) return { count: 0, resetIn: 0 };
    return { count: Number(value), resetIn: wholeSeconds(ttl) };
  }

  async exchange(key: string, value: string, windowSeconds: number): Promise<string | null> {
    return (await this.redis.call('SET', this.prefix + key, value, 'PX', windowSeconds * 1000, 'GET')) as string | null;
  }

  async reset(key: string): Promise<void> {
    this.leases.delete(key);
    await this.redis.del(this.prefix + key);
  }

  async close(): Promise<void> {}
}
