import type { Domain } from '../api/method.js';
import type { Core, Runtime } from '../services.js';
import { usersGet } from './users-get.js';
import { privacyMethods } from './privacy.js';
import { usersSearch } from './search.js';
import { attachProfileCache, type ProfileCache } from './profile-cache.js';
import { describeAccount } from './account-facts.js';

export const usersDomain: Domain = {
  name: 'users',
  methods: [usersGet, usersSearch, ...privacyMethods],
};

export interface UsersRuntime extends Runtime {
  /** Profiles kept in memory; undefined where announcements may not reach this process. */
  profiles: ProfileCache | undefined;
}

/** Keeps profiles, and keeps this process's connected users online. */
export async function startUsers(core: Core): Promise<UsersRuntime> {
  const profiles = await attachProfileCache(core);
  const { presence } = core;
  describeAccount(core);
  const heartbeat = setInterval(() => {
    presence.touchConnected().catch((err) => core.log.warn({ err }, 'presence refresh failed'));
  }, presence.writeEvery * 1000);
  heartbeat.unref();
  return {
    profiles: profiles.cache,
    stop() {
      clearInterval(heartbeat);
      profiles.detach();
    },
  };
}

// What the other folders use of this one.
export { emailLookupKey, normaliseEmail } from './email.js';
export { formOf, MAX_LIST_COUNT, pagingParams, profilesInOrder, profileTextsInOrder } from './lists.js';
export { Presence } from './presence.js';
export { announceUsersChanged } from './profile-cache.js';
export {
  inactiveObject,
  isGloballyBanned,
  loadProfiles,
  loadProfilesByKey,
  loadUsers,
  Profile,
  profileObject,
  profileTexts,
  requireUser,
  shownProfile,
} from './profiles.js';
export { BANNED, NOT_BANNED, nickOrDomainStarts, storedUserIds } from './queries.js';
export { Rank, RANK_KINDS, rankColumn, storedRank, WorldRank } from './rank.js';
export type { RankKind } from './rank.js';
export {
  checkDomain,
  checkNewPassword,
  checkNick,
  COMMON_PASSWORDS_REFUSED,
  DOMAIN_MAX,
  DOMAIN_MIN,
  NICK_RULE,
  PASSWORD_MAX,
  PASSWORD_MIN,
  PASSWORD_RULE,
} from './rules.js';
export { UserEither, UserFull, UserInactive, UserRelated, UserShort } from './schemas.js';
export { nickColumns, nickKey } from './search-keys.js';
