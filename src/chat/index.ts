import type { Domain } from '../api/method.js';
import { gchatGet, gchatSend } from './methods.js';

export const chatDomain: Domain = {
  name: 'chat',
  methods: [gchatGet, gchatSend],
};

// What the other folders use of this one.
export { MessageIds } from './message-id.js';
export type { SystemMessageFields } from './messages.js';
export { deleteMessage, postSystemMessage, setChatStatus } from './moderation.js';
export { lockChatWriters } from './queries.js';
export { GchatGetResult } from './schemas.js';
export { readChatSettings } from './runtime.js';
