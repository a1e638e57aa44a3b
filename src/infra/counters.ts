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
   * Counts one against each limit in turn, in one atomic step (one round trip to Redis), and
   * stops at the first one past its max: the limits after it are not counted. Answers that
   * one's hit, undefined when every limit had room.
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

/** Whole seconds until the window ends, at least 1. */
function secondsLeft(window: CounterWindow, now: number): number {
  return Math.max(1, Math.ceil((window.endsAt - now) / 1000));
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

const HIT_LIMITS_SCRIPT = `
for i = 1, #KEYS do
  local window = tonumber(ARGV[2 * i - 1])
  local count = redis.call('INCR', KEYS[i])
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl < 0 then
    redis.call('PEXPIRE', KEYS[i], window)
    ttl = window
  end
  if count > tonumber(ARGV[2 * i]) then
    return {count, ttl}
  end
end
return {0, 0}
`;

/** The scripts, as commands of the connection: sent by their SHA1 (EVALSHA), the text only when Redis has not seen it yet. */
interface CounterCommands {
  counterTake(key: string, by: number, windowMs: number, max: number): Promise<[number, number, number]>;
  counterHit(key: string, by: number, windowMs: number): Promise<[number, number]>;
  counterHitLimits(keyCount: number, ...keysThenArgs: (string | number)[]): Promise<[number, number]>;
}

export class RedisCounterStore implements CounterStore {
  private readonly commands: CounterCommands;

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'gp:count:',
  ) {
    redis.defineCommand('counterTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    redis.defineCommand('counterHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    redis.defineCommand('counterHitLimits', { lua: HIT_LIMITS_SCRIPT });
    this.commands = redis as unknown as CounterCommands;
  }

  async take(key: string, windowSeconds: number, max: number, by = 1): Promise<Take> {
    const [taken, count, ttl] = await this.commands.counterTake(this.prefix + key, by, windowSeconds * 1000, max);
    return { taken: taken === 1, count, resetIn: Math.max(1, Math.ceil((ttl < 0 ? windowSeconds * 1000 : ttl) / 1000)) };
  }

  async hit(key: string, windowSeconds: number, by = 1): Promise<Hit> {
    const [count, ttl] = await this.commands.counterHit(this.prefix + key, by, windowSeconds * 1000);
    return { count, resetIn: Math.max(1, Math.ceil(ttl / 1000)) };
  }

  async hitLimits(limits: readonly Limit[]): Promise<Hit | undefined> {
    const keysThenArgs: (string | number)[] = [];
    for (const limit of limits) keysThenArgs.push(this.prefix + limit.key);
    for (const limit of limits) keysThenArgs.push(limit.windowSeconds * 1000, limit.max);
    const [count, ttl] = await this.commands.counterHitLimits(limits.length, ...keysThenArgs);
    return count === 0 ? undefined : { count, resetIn: Math.max(1, Math.ceil(ttl / 1000)) };
  }

  async peek(key: string): Promise<Hit> {
    const [value, ttl] = await Promise.all([this.redis.get(this.prefix + key), this.redis.pttl(this.prefix + key)]);
    if (value === null || ttl < 0) return { count: 0, resetIn: 0 };
    return { count: Number(value), resetIn: Math.max(1, Math.ceil(ttl / 1000)) };
  }

  async exchange(key: string, value: string, windowSeconds: number): Promise<string | null> {
    return (await this.redis.call('SET', this.prefix + key, value, 'PX', windowSeconds * 1000, 'GET')) as string | null;
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(this.prefix + key);
  }

  async close(): Promise<void> {}
}
