import type { Domain } from '../api/method.js';
import type { Core, Runtime } from '../services.js';
import { friendsAdd, friendsDelete, friendsGet, friendsGetRequests } from './friend-methods.js';
import { blacklistAdd, blacklistDelete, blacklistGet, blacklistRemove } from './blacklist-methods.js';
import { attachRelationCache, type RelationCache } from './relation-cache.js';
import { attachBannedUsers, type BannedUsers } from './banned-users.js';
import { incomingRequestCount } from './queries.js';

export const friendsDomain: Domain = {
  name: 'friends',
  methods: [friendsAdd, friendsDelete, friendsGet, friendsGetRequests, blacklistAdd, blacklistRemove, blacklistDelete, blacklistGet],
};

/** The caches of the social graph; undefined where announcements may not reach this process. */
export interface FriendsRuntime extends Runtime {
  relations: RelationCache | undefined;
  bannedUsers: BannedUsers | undefined;
}

export async function startFriends(core: Core): Promise<FriendsRuntime> {
  const relations = await attachRelationCache(core);
  const bannedUsers = await attachBannedUsers(core);
  // Realtime connections show the incoming requests waiting for an answer.
  core.realtime.addAuthCounter('friends_requests', (userId) => incomingRequestCount(core.db, userId));
  return {
    relations: relations.cache,
    bannedUsers: bannedUsers.cache,
    stop() {
      relations.detach();
      bannedUsers.detach();
    },
  };
}

// What the other folders use of this one.
export { friendsJson } from './friend-methods.js';
export { addFriendRequest, blockUser, makeFriends, removeRelation, unblockUser } from './graph.js';
export { Friendship, friendshipValues, isBlock } from './relations.js';
