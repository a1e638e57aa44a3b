import type { Core, Services } from '../services.js';
import { USERS_CHANGED } from '../infra/channels.js';
import { ChangeCache, attachCache, listen, type AttachedCache, type CacheConditions } from '../infra/change-cache.js';
import { bannedIds } from './queries.js';

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
export class BannedUsers extends ChangeCache<typeof ALL, ReadonlySet<number> | 'too_many'> {
  constructor(conditions: CacheConditions) {
    super(conditions, { lifetime: LIFETIME, maxEntries: 1 });
  }

  /** The blocked ids, or undefined when there are too many to keep. */
  async ids(services: Services): Promise<ReadonlySet<number> | undefined> {
    let ids = this.get(ALL);
    if (ids === undefined) {
      const fill = this.startFill();
      const banned = await bannedIds(services.db, MAX_KEPT + 1);
      ids = banned.length > MAX_KEPT ? 'too_many' : new Set(banned);
      this.store(fill, ALL, ids);
    }
    return ids === 'too_many' ? undefined : ids;
  }
}

/** The set, kept where every announcement reaches this process (a world import or a lost connection empties it too). */
export function attachBannedUsers(core: Core): Promise<AttachedCache<BannedUsers>> {
  return attachCache(core, {
    name: 'friends.bannedUsers',
    create: (conditions) => new BannedUsers(conditions),
    // Any user's change may be a ban or its end: the whole set is read again.
    listeners: (cache) => [listen(USERS_CHANGED, () => cache.clear())],
  });
}
