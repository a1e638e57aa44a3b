import { sql } from 'kysely';
import type { Services } from '../services.js';
import { USERS_CHANGED } from '../users/profile-cache.js';
import { cacheConditions, invalidationsReachUs, listenForChanges, type ChangeCacheOptions } from '../infra/change-cache.js';

/** More globally blocked accounts than this are not kept: lists then filter them in SQL. */
const MAX_KEPT = 10_000;
/** Seconds the set is used at most: bounds the harm of an announcement that never arrived. */
const LIFETIME = 60;

/**
 * The ids of globally blocked accounts, which every relation list leaves out. A ban (or any
 * other profile change) is announced on `users.changed`, a world import on `world.changed`:
 * either empties the set, and the next list reads it again (one query on a partial index).
 * A read that overlapped an announcement is used once and not kept.
 */
export class BannedUsers {
  private ids: Set<number> | 'too_many' | undefined;
  private loadedAt = 0;
  private generation = 0;

  constructor(private readonly conditions: Pick<ChangeCacheOptions, 'now' | 'usable'>) {}

  clear(): void {
    this.generation++;
    this.ids = undefined;
  }

  /** The blocked ids, or undefined when they cannot be used from memory. */
  async get(services: Services): Promise<ReadonlySet<number> | undefined> {
    const { now, usable } = this.conditions;
    if (!usable()) return undefined;
    if (this.ids !== undefined && now() - this.loadedAt < LIFETIME) return this.ids === 'too_many' ? undefined : this.ids;
    const generation = this.generation;
    const rows = await services.db.kysely.selectFrom('users').select('user_id').where('global_ban', '=', sql.lit(1)).limit(MAX_KEPT + 1).execute();
    const ids = rows.length > MAX_KEPT ? 'too_many' : new Set(rows.map((r) => Number(r.user_id)));
    if (generation === this.generation && usable()) {
      this.ids = ids;
      this.loadedAt = now();
    }
    return ids === 'too_many' ? undefined : ids;
  }
}

export function bannedUsersOf(services: Services): BannedUsers | undefined {
  return (services.state.get('friends') as { bannedUsers?: BannedUsers } | undefined)?.bannedUsers;
}

/** Creates the set (where invalidations reach this process) and wires it to the bus. */
export async function attachBannedUsers(services: Services): Promise<{ bannedUsers?: BannedUsers; detach: () => void }> {
  if (!invalidationsReachUs(services)) return { detach: () => undefined };
  const bannedUsers = new BannedUsers(cacheConditions(services));
  const detach = await listenForChanges(services, bannedUsers, { [USERS_CHANGED]: () => bannedUsers.clear() });
  return { bannedUsers, detach };
}
