import type { Domain } from '../api/method.js';
import type { Services } from '../services.js';
import { friendsAdd, friendsDelete, friendsGet, friendsGetRequests } from './friend-methods.js';
import { blacklistAdd, blacklistDelete, blacklistGet } from './blacklist-methods.js';
import { attachRelationCache } from './relation-cache.js';
import { attachBannedUsers } from './banned-users.js';

const STATE_KEY = 'friends';

export const friendsDomain: Domain = {
  name: 'friends',
  methods: [friendsAdd, friendsDelete, friendsGet, friendsGetRequests, blacklistAdd, blacklistDelete, blacklistGet],
  async start(services: Services) {
    const stops = [await attachRelationCache(services), await attachBannedUsers(services)];
    // Realtime connections show the incoming requests waiting for an answer.
    services.realtime.addAuthCounter('friends_requests', async (userId) => {
      const row = await services.db.kysely
        .selectFrom('friend_requests')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('to_user_id', '=', userId)
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    });
    services.state.set(STATE_KEY, stops);
  },
  stop(services: Services) {
    for (const stop of (services.state.get(STATE_KEY) as (() => void)[] | undefined) ?? []) stop();
  },
};
