import type { Services } from '../services.js';
import type { Executor } from '../db/connection.js';
import { RelationCache, type ViewerRelations } from './relation-cache.js';
import { KIND_BLOCKED, KIND_BLOCKED_BY, friendIdsByAge, relationRows } from './queries.js';

/** Values of `friendship`: the viewer's relation to another user. */
export const Friendship = {
  NONE: 0,
  FRIENDS: 1,
  OUTGOING_REQUEST: 2,
  INCOMING_REQUEST: 3,
  VIEWER_BLOCKED_THEM: 4,
  THEY_BLOCKED_VIEWER: 5,
  BOTH_BLOCKED: 6,
} as const;

/** Whether a relation is a block, either way. */
export const isBlock = (relation: number): boolean =>
  relation === Friendship.VIEWER_BLOCKED_THEM || relation === Friendship.THEY_BLOCKED_VIEWER || relation === Friendship.BOTH_BLOCKED;

function relationsFrom(rows: { id: number; kind: number }[], friendsByAge: number[] = []): ViewerRelations {
  const relations: ViewerRelations = { kinds: new Map(), blocked: new Set(), blockedBy: new Set(), friendsByAge };
  for (const { id, kind } of rows) {
    if (kind === KIND_BLOCKED) relations.blocked.add(id);
    else if (kind === KIND_BLOCKED_BY) relations.blockedBy.add(id);
    // Friendship and requests exclude each other; should both be stored, friendship shows.
    else if (!relations.kinds.has(id) || kind === Friendship.FRIENDS) relations.kinds.set(id, kind);
  }
  return relations;
}

/** Blocks win over friendship and requests (which a block cancels anyway). */
function valueOf(relations: ViewerRelations, id: number): number {
  if (relations.blocked.size === 0 && relations.blockedBy.size === 0) return relations.kinds.get(id) ?? Friendship.NONE;
  const blocked = relations.blocked.has(id);
  const blockedBy = relations.blockedBy.has(id);
  if (blocked && blockedBy) return Friendship.BOTH_BLOCKED;
  if (blocked) return Friendship.VIEWER_BLOCKED_THEM;
  if (blockedBy) return Friendship.THEY_BLOCKED_VIEWER;
  return relations.kinds.get(id) ?? Friendship.NONE;
}

function valuesFor(relations: ViewerRelations, ids: number[]): Map<number, number> {
  return new Map(ids.map((id) => [id, valueOf(relations, id)]));
}

/** The viewer's relations: all of them when cached, else those with `otherIds` (one query). */
async function relationsWith(services: Services, viewerId: number, otherIds: number[]): Promise<ViewerRelations> {
  return (await cachedRelations(services, viewerId)) ?? relationsFrom(await relationRows(services.db.kysely, viewerId, otherIds));
}

/**
 * The viewer's relation to each other user, as `friendship` shows it: 0 none, 1 friends,
 * 2 outgoing request, 3 incoming request, 4 viewer blocked them, 5 they blocked viewer,
 * 6 both blocked each other. From the viewer's cached relations when they are cached (the
 * first lookup loads them all, unless there are very many), else one query.
 */
export async function friendshipValues(services: Services, viewerId: number, otherIds: number[]): Promise<Map<number, number>> {
  if (otherIds.length === 0) return new Map();
  return valuesFor(await relationsWith(services, viewerId, otherIds), otherIds);
}

/**
 * The same as a function of the other user's id, for answers that show many users: only
 * `otherIds` may be asked about (others may answer 0 whatever their relation).
 */
export async function friendshipLookup(services: Services, viewerId: number, otherIds: number[]): Promise<(otherId: number) => number> {
  const relations = await relationsWith(services, viewerId, otherIds);
  return (otherId) => valueOf(relations, otherId);
}

/**
 * Every relation of a user from the relation cache, loaded into it when missing; undefined
 * where there is no usable cache or the user has too many relations to keep.
 */
export async function cachedRelations(services: Services, userId: number): Promise<ViewerRelations | undefined> {
  const cache = services.friends.relations;
  if (!cache) return undefined;
  let relations = cache.get(userId);
  if (relations === undefined) {
    const fill = cache.startFill();
    const limit = RelationCache.maxCachedRelations + 1;
    const rows = await relationRows(services.db.kysely, userId, undefined, limit);
    if (rows.length > RelationCache.maxCachedRelations) relations = 'too_many';
    else {
      relations = relationsFrom(rows, await friendIdsByAge(services.db, userId, limit));
    }
    cache.store(fill, userId, relations);
  }
  return relations === 'too_many' ? undefined : relations;
}

/** `friendshipValues` read through `executor` (inside a transaction, for example), never cached. */
export async function friendshipValuesWith(executor: Executor, viewerId: number, otherIds: number[]): Promise<Map<number, number>> {
  if (otherIds.length === 0) return new Map();
  return valuesFor(relationsFrom(await relationRows(executor, viewerId, otherIds)), otherIds);
}
