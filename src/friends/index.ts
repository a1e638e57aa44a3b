import type { Domain } from '../api/method.js';
import type { Services } from '../services.js';
import { friendsAdd, friendsDelete, friendsGet, friendsGetRequests } from './friend-methods.js';
import { blacklistAdd, blacklistDelete, blacklistGet } from './blacklist-methods.js';
import { attachRelationCache, type RelationCache } from './relation-cache.js';

interface FriendsState {
  relationCache?: RelationCache;
  stop: () => void;
}

export const friendsDomain: Domain = {
  name: 'friends',
  methods: [friendsAdd, friendsDelete, friendsGet, friendsGetRequests, blacklistAdd, blacklistDelete, blacklistGet],
  async start(services: Services) {
    const { cache, detach } = await attachRelationCache(services);
    const state: FriendsState = { relationCache: cache, stop: detach };
    services.state.set('friends', state);
  },
  stop(services: Services) {
    (services.state.get('friends') as FriendsState | undefined)?.stop();
  },
};
