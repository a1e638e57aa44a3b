import type { Services } from '../services.js';
import { WORLD_CHANGED, invalidationsReachUs } from '../users/profile-cache.js';

/** Published after every change to the social graph: the users whose relations changed. */
export const FRIENDS_CHANGED = 'friends.changed';

/** Viewers with more relations than this are not cached (their lookups query the few ids asked about). */
const MAX_CACHED_RELATIONS = 2_000;
const MAX_VIEWERS = 20_000;
/** Seconds an entry is used at most: bounds the harm of an announcement that never arrived. */
const ENTRY_LIFETIME = 60;

/** Every relation of one viewer: other user id -> kind (1 friends, 2 outgoing, 3 incoming; blocks apart). */
export interface ViewerRelations {
  kinds: Map<number, number>;
  blocked: Set<number>;
  blockedBy: Set<number>;
}

/**
 * Each viewer's relations, kept in memory so `friendship` on profiles costs no query.
 * Whoever changes the graph (src/friends/graph.ts, the only writer) announces the two users
 * on `friends.changed` after committing; a world import announces `world.changed`. As with
 * profiles, a load that raced a change is not kept, and the cache is used only where every
 * announcement reaches this process (SQLite, or Redis while connected).
 */
export class RelationCache {
  private readonly byViewer = new Map<number, { relations: ViewerRelations | 'too_many'; loadedAt: number }>();
  private generation = 0;

  constructor(
    private readonly now: () => number,
    private readonly usable: () => boolean,
  ) {}

  startFill(): number {
    return this.generation;
  }

  get(viewerId: number): ViewerRelations | 'too_many' | undefined {
    if (!this.usable()) return undefined;
    const entry = this.byViewer.get(viewerId);
    if (entry === undefined) return undefined;
    if (this.now() - entry.loadedAt >= ENTRY_LIFETIME) {
      this.byViewer.delete(viewerId);
      return undefined;
    }
    return entry.relations;
  }

  store(fill: number, viewerId: number, relations: ViewerRelations | 'too_many'): void {
    if (fill !== this.generation || !this.usable()) return;
    if (this.byViewer.size >= MAX_VIEWERS && !this.byViewer.has(viewerId)) this.byViewer.delete(this.byViewer.keys().next().value!);
    this.byViewer.set(viewerId, { relations, loadedAt: this.now() });
  }

  invalidate(userIds: number[]): void {
    this.generation++;
    for (const id of userIds) this.byViewer.delete(id);
  }

  clear(): void {
    this.generation++;
    this.byViewer.clear();
  }

  static readonly maxCachedRelations = MAX_CACHED_RELATIONS;
}

export function relationCacheOf(services: Services): RelationCache | undefined {
  return (services.state.get('friends') as { relationCache?: RelationCache } | undefined)?.relationCache;
}

/** Creates the cache (where invalidations reach this process) and wires it to the bus. */
export async function attachRelationCache(services: Services): Promise<{ cache?: RelationCache; detach: () => void }> {
  if (!invalidationsReachUs(services)) return { detach: () => undefined };
  const redis = services.redis;
  const cache = new RelationCache(
    () => Math.floor(services.clock.now() / 1000),
    () => redis === undefined || redis.status === 'ready',
  );
  const bus = services.bus as typeof services.bus & { ready?: (channels: string[]) => Promise<void> };
  if (typeof bus.ready === 'function') await bus.ready([FRIENDS_CHANGED, WORLD_CHANGED]);
  const unsubscribers = [
    services.bus.subscribe(FRIENDS_CHANGED, (message) => {
      const ids = (message as { user_ids?: unknown } | null)?.user_ids;
      if (Array.isArray(ids)) cache.invalidate(ids.filter((id): id is number => typeof id === 'number'));
      else cache.clear();
    }),
    services.bus.subscribe(WORLD_CHANGED, () => cache.clear()),
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

/** Tells every process that these users' relations changed (this one forgets them at once). */
export async function announceRelationsChanged(services: Services, userIds: number[]): Promise<void> {
  relationCacheOf(services)?.invalidate(userIds);
  try {
    await services.bus.publish(FRIENDS_CHANGED, { user_ids: userIds });
  } catch (err) {
    // The change is committed; other processes stop using their caches while Redis is away.
    services.log.warn({ err }, 'could not announce a change of relations');
  }
}
