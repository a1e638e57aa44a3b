import type { Services } from '../services.js';
import { REVOCATION_CHANNEL } from '../auth/tokens.js';

export const USERS_CHANGED = 'users.changed';
export const WORLD_CHANGED = 'world.changed';

/** How long a cached profile may be served, seconds: bounds how stale `online` can get across processes. */
const ENTRY_LIFETIME = 30;
const MAX_ENTRIES = 50_000;

interface Entry<Row> {
  row: Row;
  loadedAt: number;
}

/**
 * Profile rows kept in memory for users.get and every profile embedded in other answers.
 *
 * Correctness rests on invalidation: whoever changes a user's profile columns (nick, ban,
 * mute, flags...) publishes `users.changed` {user_ids} after committing, and a world import
 * publishes `world.changed`; each process drops the rows concerned. A fill that started
 * before an invalidation is not stored (`generation`), so a slow read can never put back a
 * row older than the change. The cache is only used where every invalidation reaches this
 * process: SQLite (one process), or any database with Redis carrying the bus, and only
 * while the Redis connection is up (it is emptied whenever the connection drops, since
 * messages may have been missed meanwhile).
 */
export class ProfileCache<Row extends { user_id: number; domain: string | null }> {
  private readonly byId = new Map<number, Entry<Row>>();
  private readonly idByDomain = new Map<string, number>();
  private generation = 0;

  constructor(
    private readonly now: () => number,
    private readonly usable: () => boolean,
  ) {}

  /** Marks the start of a database read whose rows may later be stored. */
  startFill(): number {
    return this.generation;
  }

  get(id: number): Row | undefined {
    if (!this.usable()) return undefined;
    const entry = this.byId.get(id);
    if (entry === undefined) return undefined;
    if (this.now() - entry.loadedAt >= ENTRY_LIFETIME) {
      this.forget(id);
      return undefined;
    }
    return entry.row;
  }

  getByDomain(domain: string): Row | undefined {
    const id = this.idByDomain.get(domain);
    return id === undefined ? undefined : this.get(id);
  }

  /** Stores rows read since `fill` began, unless something was invalidated meanwhile. */
  store(fill: number, rows: Iterable<Row>): void {
    if (fill !== this.generation || !this.usable()) return;
    const loadedAt = this.now();
    for (const row of rows) {
      this.forget(row.user_id);
      if (this.byId.size >= MAX_ENTRIES) this.forget(this.byId.keys().next().value!);
      // A copy: rows as the SQLite driver builds them keep their many columns in a
      // dictionary, about four times the memory of the same fields in a plain object.
      this.byId.set(row.user_id, { row: { ...row }, loadedAt });
      if (row.domain !== null) this.idByDomain.set(row.domain, row.user_id);
    }
  }

  invalidate(ids: number[]): void {
    this.generation++;
    for (const id of ids) this.forget(id);
  }

  clear(): void {
    this.generation++;
    this.byId.clear();
    this.idByDomain.clear();
  }

  get size(): number {
    return this.byId.size;
  }

  private forget(id: number): void {
    const entry = this.byId.get(id);
    if (entry === undefined) return;
    this.byId.delete(id);
    const domain = entry.row.domain;
    if (domain !== null && this.idByDomain.get(domain) === id) this.idByDomain.delete(domain);
  }
}

function userIdsOf(message: unknown): number[] | null {
  if (message === null || typeof message !== 'object') return null;
  const ids = (message as { user_ids?: unknown }).user_ids;
  if (!Array.isArray(ids)) return null;
  return ids.filter((id): id is number => typeof id === 'number' && Number.isSafeInteger(id));
}

/** Whether an in-memory cache hears of every change made by any process of this deployment. */
export function invalidationsReachUs(services: Services): boolean {
  return services.db.dialect === 'sqlite' || services.redis !== undefined;
}

/**
 * Creates the cache and wires it to the bus; returns a function that detaches it.
 * `users.changed` without a readable `user_ids` list empties the whole cache.
 */
export async function attachProfileCache<Row extends { user_id: number; domain: string | null }>(
  services: Services,
): Promise<{ cache: ProfileCache<Row>; detach: () => void }> {
  const redis = services.redis;
  const cache = new ProfileCache<Row>(
    () => Math.floor(services.clock.now() / 1000),
    () => redis === undefined || redis.status === 'ready',
  );
  const bus = services.bus as typeof services.bus & { ready?: (channels: string[]) => Promise<void> };
  // Subscribe before the first fill, so no invalidation can slip past an entry.
  if (typeof bus.ready === 'function') await bus.ready([USERS_CHANGED, WORLD_CHANGED, REVOCATION_CHANNEL]);
  const unsubscribers = [
    services.bus.subscribe(USERS_CHANGED, (message) => {
      const ids = userIdsOf(message);
      if (ids === null) cache.clear();
      else cache.invalidate(ids);
    }),
    services.bus.subscribe(WORLD_CHANGED, () => cache.clear()),
    // A ban ends the user's sessions before it is announced as a user change; forgetting the
    // user on the first of the two notices shortens the time another process may lag.
    services.bus.subscribe(REVOCATION_CHANNEL, (message) => {
      const userId = (message as { userId?: unknown } | null)?.userId;
      if (typeof userId === 'number') cache.invalidate([userId]);
    }),
  ];
  const onConnectionLost = () => cache.clear();
  redis?.on('close', onConnectionLost);
  return {
    cache,
    detach() {
      for (const unsubscribe of unsubscribers) unsubscribe();
      redis?.off('close', onConnectionLost);
      cache.clear();
    },
  };
}

/**
 * Announces that users' profile columns changed: this process forgets them at once, then
 * every process (this one included) is told on the bus. Call after the change is committed.
 */
export async function announceUsersChanged(services: Services, userIds: number[]): Promise<void> {
  profileCacheOf(services)?.invalidate(userIds);
  try {
    await services.bus.publish(USERS_CHANGED, { user_ids: userIds });
  } catch (err) {
    // The change is committed; other processes stop using their caches while Redis is away.
    services.log.warn({ err }, 'could not announce a change of users');
  }
}

export function profileCacheOf(services: Services): ProfileCache<any> | undefined {
  return (services.state.get('users') as { profileCache?: ProfileCache<any> } | undefined)?.profileCache;
}
