import type { Core, Services } from '../services.js';
import { SESSIONS_REVOKED, USERS_CHANGED } from '../infra/channels.js';
import {
  ChangeCache,
  announceChange,
  attachCache,
  forgetUsersOn,
  listen,
  type AttachedCache,
  type CacheConditions,
} from '../infra/change-cache.js';
import type { Profile } from './profiles.js';

/** How long a cached profile may be served, seconds: bounds how stale `online` can get across processes. */
const ENTRY_LIFETIME = 30;
const MAX_ENTRIES = 50_000;

/**
 * Profile rows kept in memory for users.get and every profile embedded in other answers.
 *
 * Correctness rests on invalidation: whoever changes a user's profile columns (nick, ban,
 * mute, flags...) announces `users.changed` {user_ids} after committing, and a world import
 * announces `world.changed`; each process drops the rows concerned (src/infra/change-cache.ts).
 * The cache is only used where every announcement reaches this process: SQLite (one
 * process), or any database with Redis carrying the bus, while the connection is up.
 */
export class ProfileCache extends ChangeCache<number, Profile> {
  private readonly idByDomain = new Map<string, number>();

  constructor(conditions: CacheConditions) {
    super(conditions, { lifetime: ENTRY_LIFETIME, maxEntries: MAX_ENTRIES });
  }

  getByDomain(domain: string): Profile | undefined {
    const id = this.idByDomain.get(domain);
    return id === undefined ? undefined : this.get(id);
  }

  /** Stores profiles read since `fill` began, unless something was invalidated meanwhile. */
  storeProfiles(fill: number, profiles: Iterable<Profile>): void {
    if (!this.mayStore(fill)) return;
    for (const profile of profiles) {
      this.store(fill, profile.user_id, profile);
      if (profile.domain !== null) this.idByDomain.set(profile.domain, profile.user_id);
    }
  }

  protected override onForget(id: number, profile: Profile): void {
    if (profile.domain !== null && this.idByDomain.get(profile.domain) === id) this.idByDomain.delete(profile.domain);
  }

  protected override onClear(): void {
    this.idByDomain.clear();
  }
}

/**
 * Profiles kept where every announcement reaches this process. `users.changed` without a
 * readable `user_ids` list empties the whole cache.
 */
export function attachProfileCache(core: Core): Promise<AttachedCache<ProfileCache>> {
  return attachCache(core, {
    name: 'users.profiles',
    create: (conditions) => new ProfileCache(conditions),
    listeners: (cache) => [
      forgetUsersOn(USERS_CHANGED, cache),
      // A ban ends the user's sessions before it is announced as a user change; forgetting the
      // user on the first of the two notices shortens the time another process may lag.
      listen(SESSIONS_REVOKED, (revocation) => {
        if ('userId' in revocation && typeof revocation.userId === 'number') cache.invalidate([revocation.userId]);
      }),
    ],
  });
}

/**
 * After committing a change to users' profile columns: this process forgets them at once,
 * then every process (this one included) is told on the bus.
 */
export function announceUsersChanged(services: Services, userIds: number[]): Promise<void> {
  return announceChange(services, USERS_CHANGED, { user_ids: userIds }, () => {
    services.users.profiles?.invalidate(userIds);
    services.friends.bannedUsers?.clear();
  });
}
