import { sql } from 'kysely';
import type { Services } from '../services.js';
import { USERS_CHANGED } from '../users/profile-cache.js';
import { ChangeCache, cacheConditions, invalidationsReachUs, listenForChanges } from '../infra/change-cache.js';

/** More globally blocked accounts than this are not kept: lists then filter them in SQL. */
const MAX_KEPT = 10_000;
/** Seconds the set is used at most: bounds the harm of an announcement that never arrived. */
const LIFETIME = 60;

/** The one key of the cache: the set of every blocked account. */
const ALL = 0;

/**
 * The ids of globally blocked accounts, which every relation list leaves out. A ban (or any
 * other profile change) is announced on `users.changed`, a world import on `world.changed`:
 * either empties the cache, and the next list reads the set again (one query on a partial
 * index). A read that overlapped an announcement is used once and not kept.
 */
export class BannedUsers extends ChangeCache<ReadonlySet<number> | 'too_many'> {
  constructor(now: () => number, usable: () => boolean) {
    super({ now, usable, lifetime: LIFETIME, maxEntries: 1 });
  }

  /** The blocked ids, or undefined when there are too many to keep. */
  async ids(services: Services): Promise<ReadonlySet<number> | undefined> {
    let ids = this.get(ALL);
    if (ids === undefined) {
      const fill = this.startFill();
      const rows = await services.db.kysely.selectFrom('users').select('user_id').where('global_ban', '=', sql.lit(1)).limit(MAX_KEPT + 1).execute();
      ids = rows.length > MAX_KEPT ? 'too_many' : new Set(rows.map((r) => Number(r.user_id)));
      this.store(fill, ALL, ids);
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
  const { now, usable } = cacheConditions(services);
  const bannedUsers = new BannedUsers(now, usable);
  const detach = await listenForChanges(services, bannedUsers, { [USERS_CHANGED]: () => bannedUsers.clear() });
  return { bannedUsers, detach };
}
