import type { Domain } from '../api/method.js';
import type { Core } from '../services.js';
import { messageMethods } from './methods.js';
import { unreadTotal } from './queries.js';

export { IM_SYNC_EVENT } from './live.js';

export const messagesDomain: Domain = {
  name: 'messages',
  methods: messageMethods,
};

/** Realtime connections show the user's unread private messages (`messages_new` in the `auth` frame; `im.sync` events carry it live). */
export function startMessages(core: Core): void {
  core.realtime.addAuthCounter('messages_new', (userId) => unreadTotal(core.db.kysely, userId));
}
