import type { Core } from '../services.js';
import { BUS_LOST, WORLD_CHANGED } from './bus.js';

export interface ChangeCacheOptions<V = unknown> {
  /** Seconds, by the server's clock. */
  now: () => number;
  /** False while announcements may be missed (Redis disconnected): the cache is then bypassed. */
  usable: () => boolean;
  /** Seconds an entry is served at most: bounds the harm of an announcement that never arrived. */
  lifetime: number;
  maxEntries: number;
  /** With `maxWeight`: the size of a value; the entries stored longest ago go first past the total. */
  weigh?: (value: V) => number;
  maxWeight?: number;
}

/**
 * Values read from the database, kept in memory per user id and dropped when a change to that
 * user is announced on the bus. A fill that started before an invalidation is not stored
 * (`startFill` / `store`), so a slow read can never put back a value older than the change.
 */
export class ChangeCache<V> {
  private readonly entries = new Map<number, { value: V; loadedAt: number; weight: number }>();
  private generation = 0;
  private weight = 0;
  /** Lookups answered from memory and not (metrics). */
  hits = 0;
  misses = 0;

  constructor(private readonly options: ChangeCacheOptions<V>) {}

  /** Marks the start of a database read whose values may later be stored. */
  startFill(): number {
    return this.generation;
  }

  get(id: number): V | undefined {
    return this.options.usable() ? this.fresh(id, this.options.now()) : undefined;
  }

  /** The cached value of each of `ids` into `found` at the same index (one clock reading for all); the ids not cached into `missing`. */
  getMany(ids: readonly number[], found: (V | undefined)[], missing: number[]): void {
    if (!this.options.usable()) {
      missing.push(...ids);
      return;
    }
    const now = this.options.now();
    for (let i = 0; i < ids.length; i++) {
      const value = this.fresh(ids[i], now);
      found[i] = value;
      if (value === undefined) missing.push(ids[i]);
    }
  }

  private fresh(id: number, now: number): V | undefined {
    const entry = this.entries.get(id);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    if (now - entry.loadedAt >= this.options.lifetime) {
      this.forget(id);
      this.misses++;
      return undefined;
    }
    this.hits++;
    return entry.value;
  }

  /** Whether values read since `fill` began may be stored. */
  mayStore(fill: number): boolean {
    return fill === this.generation && this.options.usable();
  }

  /** Stores a value read since `fill` began, unless something was invalidated meanwhile. */
  store(fill: number, id: number, value: V): void {
    this.put(fill, id, value, this.options.now());
  }

  /**
   * Stores a value made from the cached one (undefined when none) and data read since `fill`
   * began; it keeps the cached value's age, so what it carries over still expires on time.
   */
  update(fill: number, id: number, change: (cached: V | undefined) => V): void {
    const now = this.options.now();
    const cached = this.get(id);
    this.put(fill, id, change(cached), cached === undefined ? now : this.entries.get(id)!.loadedAt);
  }

  private put(fill: number, id: number, value: V, loadedAt: number): void {
    if (!this.mayStore(fill)) return;
    this.forget(id);
    if (this.entries.size >= this.options.maxEntries) this.forgetOldest();
    const weight = this.options.weigh?.(value) ?? 0;
    this.entries.set(id, { value, loadedAt, weight });
    this.weight += weight;
    const { maxWeight } = this.options;
    if (maxWeight !== undefined) while (this.weight > maxWeight && this.forgetOldest());
  }

  /** Forgets the entry stored longest ago; false when there is none. */
  private forgetOldest(): boolean {
    const oldest = this.entries.keys().next();
    if (oldest.done) return false;
    this.forget(oldest.value);
    return true;
  }

  invalidate(ids: number[]): void {
    this.generation++;
    for (const id of ids) this.forget(id);
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

  protected forget(id: number): void {
    const entry = this.entries.get(id);
    if (entry === undefined) return;
    this.entries.delete(id);
    this.weight -= entry.weight;
    this.onForget(id, entry.value);
  }

  protected onForget(_id: number, _value: V): void {}
  protected onClear(): void {}
}

/** Whether an in-memory cache hears of every change made by any process of this deployment. */
export function invalidationsReachUs(services: Pick<Core, 'db' | 'redis'>): boolean {
  return services.db.dialect === 'sqlite' || services.redis !== undefined;
}

/** The clock of a cache of this deployment, and when it is usable: while every announcement can reach it. */
function cacheConditions(services: Core): Pick<ChangeCacheOptions, 'now' | 'usable'> {
  const redis = services.redis;
  return {
    now: () => Math.floor(services.clock.now() / 1000),
    usable: () => redis === undefined || redis.status === 'ready',
  };
}

/** The user ids of a change announcement `{ user_ids }`, or null when it names none readably. */
function userIdsOf(message: unknown): number[] | null {
  if (message === null || typeof message !== 'object') return null;
  const ids = (message as { user_ids?: unknown }).user_ids;
  if (!Array.isArray(ids)) return null;
  return ids.filter((id): id is number => typeof id === 'number' && Number.isSafeInteger(id));
}

/**
 * Wires a cache to the bus: each channel's handler runs on its announcements, a world import
 * empties it, and so does every loss of a Redis connection (announcements may have been
 * missed meanwhile). Subscribes before the first fill, so no announcement slips past an entry.
 * Returns a function that detaches it.
 */
async function listenForChanges(
  services: Core,
  cache: { clear(): void },
  handlers: Record<string, (message: unknown) => void>,
): Promise<() => void> {
  const channels = [...Object.keys(handlers), WORLD_CHANGED];
  const bus = services.bus as typeof services.bus & { ready?: (channels: string[]) => Promise<void> };
  if (typeof bus.ready === 'function') await bus.ready(channels);
  const unsubscribers = [
    ...Object.entries(handlers).map(([channel, handler]) => services.bus.subscribe(channel, handler)),
    ...[WORLD_CHANGED, BUS_LOST].map((channel) => services.bus.subscribe(channel, () => cache.clear())),
  ];
  return () => {
    for (const unsubscribe of unsubscribers) unsubscribe();
    cache.clear();
  };
}

/** A cache wired to the bus (undefined where announcements may not reach this process), and what detaches it. */
export interface AttachedCache<C> {
  cache: C | undefined;
  detach(): void;
}

/**
 * Creates a per-user cache where every announcement reaches this process and wires it to the
 * bus: `{ user_ids }` on `channel` forgets those users, any other message there empties it;
 * `more` handles further channels.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any cache, whatever it keeps
export async function attachCache<C extends ChangeCache<any>>(
  core: Core,
  definition: {
    /** The cache's name in the metrics. */
    name: string;
    channel: string;
    create: (now: () => number, usable: () => boolean) => C;
    more?: (cache: C) => Record<string, (message: unknown) => void>;
  },
): Promise<AttachedCache<C>> {
  if (!invalidationsReachUs(core)) return { cache: undefined, detach: () => undefined };
  const { now, usable } = cacheConditions(core);
  const cache = definition.create(now, usable);
  const detach = await listenForChanges(core, cache, {
    [definition.channel]: (message) => {
      const ids = userIdsOf(message);
      if (ids === null) cache.clear();
      else cache.invalidate(ids);
    },
    ...definition.more?.(cache),
  });
  const unwatch = core.metrics.watchCache(definition.name, () => cache);
  return {
    cache,
    detach() {
      unwatch();
      detach();
    },
  };
}

/**
 * Forgets the users at once in this process, then tells every process (this one included) on
 * the bus. Call after the change is committed.
 */
export async function announceChange(
  services: Pick<Core, 'bus' | 'log'>,
  cache: { invalidate(ids: number[]): void } | undefined,
  channel: string,
  userIds: number[],
): Promise<void> {
  cache?.invalidate(userIds);
  try {
    await services.bus.publish(channel, { user_ids: userIds });
  } catch (err) {
    // The change is committed; other processes stop using their caches while Redis is away.
    services.log.warn({ err, channel }, 'could not announce a change');
  }
}
