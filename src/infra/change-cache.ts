import type { Core } from '../services.js';
import type { Bus } from './bus.js';
import { BUS_LOST, WORLD_CHANGED, type Channel, type UsersChanged } from './channels.js';

/** When a cache may be used: its clock, and whether every announcement reaches it right now. */
export interface CacheConditions {
  /** Seconds, by the server's clock. */
  now: () => number;
  /** False while announcements may be missed (the bus is behind or disconnected): nothing is served or stored then. */
  usable: () => boolean;
}

export interface CacheLimits<V> {
  /** Seconds an entry is served at most: bounds the harm of an announcement that never arrived. */
  lifetime: number;
  maxEntries: number;
  /** With `maxWeight`: the size of a value; the entries stored longest ago go first past the total. */
  weigh?: (value: V) => number;
  maxWeight?: number;
}

/**
 * Values read from the database, kept in memory by key and dropped when a change is announced
 * on the bus. Every cache of the server is one of these, under one policy: entries have a
 * lifetime and the cache a bound; nothing is served or stored while an announcement may be
 * missed; a fill that started before an invalidation is not stored (`startFill` / `store`), so
 * a slow read can never put back a value older than the change.
 */
export class ChangeCache<K, V> {
  private readonly entries = new Map<K, { value: V; loadedAt: number; weight: number }>();
  private generation = 0;
  private weight = 0;
  /** Lookups answered from memory and not (metrics). */
  hits = 0;
  misses = 0;

  constructor(
    private readonly conditions: CacheConditions,
    private readonly limits: CacheLimits<V>,
  ) {}

  /** Marks the start of a database read whose values may later be stored. */
  startFill(): number {
    return this.generation;
  }

  get(key: K): V | undefined {
    return this.conditions.usable() ? this.fresh(key, this.conditions.now()) : undefined;
  }

  /** The cached value of each of `keys` into `found` at the same index (one clock reading for all); the keys not cached into `missing`. */
  getMany(keys: readonly K[], found: (V | undefined)[], missing: K[]): void {
    if (!this.conditions.usable()) {
      missing.push(...keys);
      return;
    }
    const now = this.conditions.now();
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const value = this.fresh(key, now);
      found[i] = value;
      if (value === undefined) missing.push(key);
    }
  }

  private fresh(key: K, now: number): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    if (now - entry.loadedAt >= this.limits.lifetime) {
      this.forget(key);
      this.misses++;
      return undefined;
    }
    this.hits++;
    return entry.value;
  }

  /** Whether values read since `fill` began may be stored. */
  mayStore(fill: number): boolean {
    return fill === this.generation && this.conditions.usable();
  }

  /** Stores a value read since `fill` began, unless something was invalidated meanwhile. */
  store(fill: number, key: K, value: V): void {
    const now = this.conditions.now();
    this.put(fill, key, value, now, now);
  }

  /**
   * Stores a value made from the cached one (undefined when none) and data read since `fill`
   * began; it keeps the cached value's age, so what it carries over still expires on time.
   */
  update(fill: number, key: K, change: (cached: V | undefined) => V): void {
    const now = this.conditions.now();
    const cached = this.get(key);
    this.put(fill, key, change(cached), cached === undefined ? now : this.entries.get(key)!.loadedAt, now);
  }

  private put(fill: number, key: K, value: V, loadedAt: number, now: number): void {
    if (!this.mayStore(fill)) return;
    this.forget(key);
    this.forgetExpired(now);
    if (this.entries.size >= this.limits.maxEntries) this.forgetOldest();
    const weight = this.limits.weigh?.(value) ?? 0;
    this.entries.set(key, { value, loadedAt, weight });
    this.weight += weight;
    const { maxWeight } = this.limits;
    if (maxWeight !== undefined) while (this.weight > maxWeight && this.forgetOldest());
  }

  /**
   * Forgets the entries past their lifetime, from the one stored longest ago until one that is
   * not: an entry that can no longer be served keeps no memory (and no work for the garbage
   * collector), whether or not its key is asked for again.
   */
  forgetExpired(now = this.conditions.now()): void {
    const oldestServable = now - this.limits.lifetime;
    for (const [key, entry] of this.entries) {
      if (entry.loadedAt > oldestServable) return;
      this.forget(key);
    }
  }

  /** Forgets the entry stored longest ago; false when there is none. */
  private forgetOldest(): boolean {
    const oldest = this.entries.keys().next();
    if (oldest.done) return false;
    this.forget(oldest.value);
    return true;
  }

  invalidate(keys: readonly K[]): void {
    this.generation++;
    for (const key of keys) this.forget(key);
  }

  /** Forgets every entry whose value matches. */
  invalidateWhere(matches: (value: V) => boolean): void {
    this.generation++;
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.forget(key);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.weight = 0;
    this.onClear();
  }

  get size(): number {
    return this.entries.size;
  }

  protected forget(key: K): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.weight -= entry.weight;
    this.onForget(key, entry.value);
  }

  protected onForget(_key: K, _value: V): void {}
  protected onClear(): void {}
}

/** What a cache is attached with: the shared core, before the capabilities start. */
export type CacheCore = Pick<Core, 'db' | 'redis' | 'bus' | 'clock' | 'metrics'>;

/**
 * Whether every announcement of this deployment reaches this process: one process (SQLite), or
 * several joined by Redis. Elsewhere nothing is cached.
 */
export function invalidationsReachUs(core: Pick<Core, 'db' | 'redis'>): boolean {
  return core.db.dialect === 'sqlite' || core.redis !== undefined;
}

/** A channel a cache listens to, and what its messages do to it. */
export interface CacheListener {
  channel: Channel<unknown>;
  subscribe(bus: Bus): () => void;
}

export function listen<M>(channel: Channel<M>, handler: (message: M) => void): CacheListener {
  return { channel, subscribe: (bus) => bus.subscribe(channel, handler) };
}

/** The user ids of a change announcement, or null when it names none readably. */
function userIdsOf(message: unknown): number[] | null {
  if (message === null || typeof message !== 'object') return null;
  const ids = (message as Partial<UsersChanged>).user_ids;
  if (!Array.isArray(ids)) return null;
  return ids.filter((id): id is number => typeof id === 'number' && Number.isSafeInteger(id));
}

/** `{ user_ids }` on the channel forgets those users; any other message there empties the cache. */
export function forgetUsersOn(
  channel: Channel<UsersChanged>,
  cache: Pick<ChangeCache<number, unknown>, 'invalidate' | 'clear'>,
): CacheListener {
  return listen(channel, (message) => {
    const ids = userIdsOf(message);
    if (ids === null) cache.clear();
    else cache.invalidate(ids);
  });
}

/** How often an attached cache forgets its expired entries when nothing is stored in it. */
const EXPIRED_SWEEP_MS = 10_000;

/** A cache wired to the bus (undefined where announcements may not reach this process), and what detaches it. */
export interface AttachedCache<C> {
  cache: C | undefined;
  detach(): void;
}

/**
 * Creates a cache where every announcement reaches this process, and wires it to the bus: its
 * listeners' channels, and a world import and every loss of the bus empty it. Subscribes in Redis
 * before the first fill, so no announcement slips past an entry. The cache is usable while the
 * bus is current (`Bus.isCurrent`).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any cache, whatever it keeps
export async function attachCache<C extends ChangeCache<any, any>>(
  core: CacheCore,
  definition: {
    /** The cache's name in the metrics. */
    name: string;
    create: (conditions: CacheConditions) => C;
    listeners: (cache: C) => CacheListener[];
  },
): Promise<AttachedCache<C>> {
  if (!invalidationsReachUs(core)) return { cache: undefined, detach: () => undefined };
  const { bus, clock } = core;
  const cache = definition.create({ now: () => Math.floor(clock.now() / 1000), usable: () => bus.isCurrent() });
  const listeners = [...definition.listeners(cache), listen(WORLD_CHANGED, () => cache.clear()), listen(BUS_LOST, () => cache.clear())];
  await bus.ready(listeners.map((l) => l.channel));
  const unsubscribers = listeners.map((l) => l.subscribe(bus));
  const unwatch = core.metrics.watchCache(definition.name, () => cache);
  // A server that goes quiet lets its expired entries go too.
  const sweeper = setInterval(() => cache.forgetExpired(), EXPIRED_SWEEP_MS);
  sweeper.unref();
  return {
    cache,
    detach() {
      clearInterval(sweeper);
      unwatch();
      for (const unsubscribe of unsubscribers) unsubscribe();
      cache.clear();
    },
  };
}

/**
 * After committing a change: this process forgets what it concerns at once, then every process
 * (this one included) is told on the bus. A failed publication is logged: the change is
 * committed, and other processes stop using their caches while Redis is away.
 */
export async function announceChange<M>(
  services: Pick<Core, 'bus' | 'log'>,
  channel: Channel<M>,
  message: M,
  forgetHere: () => void,
): Promise<void> {
  forgetHere();
  try {
    await services.bus.publish(channel, message);
  } catch (err) {
    services.log.warn({ err, channel: channel.name }, 'could not announce a change');
  }
}
