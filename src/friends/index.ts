import type { Domain } from '../api/method.js';
import type { Services } from '../services.js';
import { friendsAdd, friendsDelete, friendsGet, friendsGetRequests } from './friend-methods.js';
import { blacklistAdd, blacklistDelete, blacklistGet } from './blacklist-methods.js';
import { attachRelationCache, type RelationCache } from './relation-cache.js';
import { attachBannedUsers, type BannedUsers } from './banned-users.js';

interface FriendsState {
  relationCache?: RelationCache;
  bannedUsers?: BannedUsers;
  stop: () => void;
}

export const friendsDomain: Domain = {
  name: 'friends',
  methods: [friendsAdd, friendsDelete, friendsGet, friendsGetRequests, blacklistAdd, blacklistDelete, blacklistGet],
  async start(services: Services) {
    const relations = await attachRelationCache(services);
    const banned = await attachBannedUsers(services);
    const state: FriendsState = {
      relationCache: relations.cache,
      bannedUsers: banned.bannedUsers,
      stop() {
        banned.detach();
        relations.detach();
      },
    };
    services.state.set('friends', state);
  },
  stop(services: Services) {
    (services.state.get('friends') as FriendsState | undefined)?.stop();
  },
};
