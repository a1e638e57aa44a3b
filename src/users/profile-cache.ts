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
/**
 * The memory all cached profiles may take, bytes (as `profileBytes` counts them): some
 * 150,000 profiles of typical size (about 650 bytes each), so that a platform's active
 * users are all kept.
 */
const MAX_BYTES = 100 * 1024 * 1024;
/** What a profile takes in memory besides its texts' characters: its object, the cache's entry and map slots. */
const PROFILE_OVERHEAD_BYTES = 400;

/** Characters V8 cannot store in one byte. */
const WIDE_CHARACTERS = /[\u0100-\uffff]/;

/** The characters of a text, bytes: one each, or two when any needs more. */
const textBytes = (text: string): number => (WIDE_CHARACTERS.test(text) ? 2 : 1) * text.length;

/** A profile's memory, bytes. */
function profileBytes(profile: Profile): number {
  return PROFILE_OVERHEAD_BYTES + textBytes(profile.text) + (profile.domain === null ? 0 : textBytes(profile.domain));
}

/**
 * Profiles kept in memory for users.get and every profile embedded in other answers.
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
    super(conditions, {
      lifetime: ENTRY_LIFETIME,
      maxEntries: Math.floor(MAX_BYTES / PROFILE_OVERHEAD_BYTES),
      weigh: profileBytes,
      maxWeight: MAX_BYTES,
    });
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
