import type { Redis } from 'ioredis';
import type { Clock } from './clock.js';

export interface Hit {
  /** Count in the current window, this hit included. */
  count: number;
  /** Seconds until the window ends. */
  resetIn: number;
}

/**
 * Fixed-window counters shared by every limit of the platform (request rates, sign-in
 * failures, chat slow mode, bot quotas). In one process they live in memory; with Redis
 * they are shared by every process.
 */
export interface CounterStore {
  /** Adds `by` to the counter `key` for a window of `windowSeconds` and returns the new count. */
  hit(key: string, windowSeconds: number, by?: number): Promise<Hit>;
  /** Reads the counter without changing it. */
  peek(key: string): Promise<Hit>;
  reset(key: string): Promise<void>;
  close(): Promise<void>;
}

export class MemoryCounterStore implements CounterStore {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly clock: Clock, private readonly maxKeys = 1_000_000) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  async hit(key: string, windowSeconds: number, by = 1): Promise<Hit> {
    const now = this.clock.now();
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      if (!window && this.windows.size >= this.maxKeys) this.sweep();
      window = { count: 0, endsAt: now + windowSeconds * 1000 };
      this.windows.set(key, window);
    }
    window.count += by;
    return { count: window.count, resetIn: Math.max(1, Math.ceil((window.endsAt - now) / 1000)) };
  }

  async peek(key: string): Promise<Hit> {
    const now = this.clock.now();
    const window = this.windows.get(key);
    if (!window || window.endsAt <= now) return { count: 0, resetIn: 0 };
    return { count: window.count, resetIn: Math.max(1, Math.ceil((window.endsAt - now) / 1000)) };
  }

  async reset(key: string): Promise<void> {
    this.windows.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  private sweep(): void {
    const now = this.clock.now();
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
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

export class RedisCounterStore implements CounterStore {
  constructor(private readonly redis: Redis, private readonly prefix = 'gp:count:') {}

  async hit(key: string, windowSeconds: number, by = 1): Promise<Hit> {
    const [count, ttl] = (await this.redis.eval(HIT_SCRIPT, 1, this.prefix + key, by, windowSeconds * 1000)) as [number, number];
    return { count, resetIn: Math.max(1, Math.ceil(ttl / 1000)) };
  }

  async peek(key: string): Promise<Hit> {
    const [value, ttl] = await Promise.all([this.redis.get(this.prefix + key), this.redis.pttl(this.prefix + key)]);
    if (value === null || ttl < 0) return { count: 0, resetIn: 0 };
    return { count: Number(value), resetIn: Math.max(1, Math.ceil(ttl / 1000)) };
  }

  async reset(key: string): Promise<void> {
    await this.redis.del(this.prefix + key);
  }

  async close(): Promise<void> {}
}
