import type { Domain } from '../api/method.js';
import { USERS_CHANGED } from '../infra/channels.js';
import type { Runtime, Services } from '../services.js';
import { removeFromRooms } from './lobby.js';
import { roomMethods } from './methods.js';
import { globallyBanned, inviteCount } from './queries.js';

/** The lobby: rooms players gather in before a game, live on `/ws?subs=rooms`. */
export const roomsDomain: Domain = {
  name: 'rooms',
  methods: roomMethods,
};

/**
 * Counts room invitations in realtime `auth` frames, and takes a globally blocked account out
 * of its room (every process hears the ban; the first to act removes it, the others find it
 * gone); started once every capability's runtime exists.
 */
export interface RoomsRuntime extends Runtime {
  start(services: Services): Promise<void>;
}

export function createRooms(): RoomsRuntime {
  let unsubscribe: (() => void) | undefined;
  return {
    async start(services) {
      services.realtime.addAuthCounter('invites', (userId) => inviteCount(services.db.kysely, userId));
      await services.bus.ready([USERS_CHANGED]);
      unsubscribe = services.bus.subscribe(USERS_CHANGED, (message) => {
        const ids = Array.isArray(message?.user_ids) ? message.user_ids.filter((id) => Number.isSafeInteger(id)).slice(0, 1000) : [];
        if (ids.length === 0) return;
        void globallyBanned(services.db.kysely, ids)
          .then((banned) => removeFromRooms(services, banned))
          .catch((err: unknown) => services.log.error({ err }, 'could not take blocked accounts out of their rooms'));
      });
    },
    stop() {
      unsubscribe?.();
      unsubscribe = undefined;
    },
  };
}

// What the other folders use of this one.
export { lobbyOf } from './list.js';
export { RoomList } from './schemas.js';
