import type { Core, Services } from '../services.js';
import { FRIENDS_CHANGED } from '../infra/channels.js';
import {
  ChangeCache,
  announceChange,
  attachCache,
  forgetUsersOn,
  type AttachedCache,
  type CacheConditions,
} from '../infra/change-cache.js';

/** Viewers with more relations than this are not cached (their lookups query the few ids asked about). */
const MAX_CACHED_RELATIONS = 2_000;
const MAX_VIEWERS = 20_000;
/** All viewers' relations together: bounds the memory the cache may take (tens of megabytes). */
const MAX_TOTAL_RELATIONS = 1_000_000;
/** Seconds an entry is used at most: bounds the harm of an announcement that never arrived. */
const ENTRY_LIFETIME = 60;

/** Every relation of one viewer: other user id -> kind (1 friends, 2 outgoing, 3 incoming; blocks apart). */
export interface ViewerRelations {
  kinds: Map<number, number>;
  blocked: Set<number>;
  blockedBy: Set<number>;
  /** The viewer's friends in friends.get order (newest friendship first, ties: higher id first), blocked accounts included. */
  friendsByAge: number[];
}

/**
 * Each viewer's relations, kept in memory so `friendship` on profiles costs no query.
 * Whoever changes the graph (src/friends/graph.ts, the only writer) announces the two users
 * on `friends.changed` after committing; a world import announces `world.changed`. As with
 * profiles, a load that raced a change is not kept, and the cache is used only where every
 * announcement reaches this process (SQLite, or Redis while connected).
 */
export class RelationCache extends ChangeCache<number, ViewerRelations | 'too_many'> {
  constructor(conditions: CacheConditions) {
    super(conditions, { lifetime: ENTRY_LIFETIME, maxEntries: MAX_VIEWERS, weigh: sizeOf, maxWeight: MAX_TOTAL_RELATIONS });
  }

  static readonly maxCachedRelations = MAX_CACHED_RELATIONS;
  static readonly maxTotalRelations = MAX_TOTAL_RELATIONS;
}

function sizeOf(relations: ViewerRelations | 'too_many'): number {
  if (relations === 'too_many') return 1;
  return relations.kinds.size + relations.blocked.size + relations.blockedBy.size + relations.friendsByAge.length;
}

/** Relations kept where every announcement reaches this process. */
export function attachRelationCache(core: Core): Promise<AttachedCache<RelationCache>> {
  return attachCache(core, {
    name: 'friends.relations',
    create: (conditions) => new RelationCache(conditions),
    listeners: (cache) => [forgetUsersOn(FRIENDS_CHANGED, cache)],
  });
}

/** After committing a change to the graph: this process forgets the users at once, then every process is told. */
export function announceRelationsChanged(services: Services, userIds: number[]): Promise<void> {
  const cache = services.friends.relations;
  return announceChange(services, FRIENDS_CHANGED, { user_ids: userIds }, () => cache?.invalidate(userIds));
}
