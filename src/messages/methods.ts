import { Type } from '@sinclair/typebox';
import { ApiError, Code, badParam } from '../api/errors.js';
import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Strict } from '../api/schema-types.js';
import type { Executor } from '../db/connection.js';
import { checkedMessageText } from '../infra/text.js';
import { inactiveObject, isGloballyBanned, loadProfiles, profileObject, requireUser } from '../users/index.js';
import type { Services } from '../services.js';
import { deleteMessage, messageOf, readConversation, storeOutgoing } from './conversation.js';
import { takeSendLimits } from './limits.js';
import { selectDialogs, selectHistory } from './queries.js';
import { DialogsGetResult, HistoryGetResult, PrivateMessage, SendResult, Sync } from './schemas.js';
import { EMPTY_SYNC, syncAfter } from './sync.js';

export const MAX_TEXT_LENGTH = 1000;

const idLast = P.optional(
  P.uint({
    description:
      'a point of the timeline (an event id from `sync` or an `im.sync` frame, or a msg_id): the page holds what is older, `sync` what came after',
  }),
);
const paging = {
  id_last: idLast,
  offset: P.optional(P.uint({ maximum: 100_000, default: 0, description: 'entries to skip (after id_last)' })),
  count: P.optional(P.uint({ minimum: 1, maximum: 100, default: 20, description: '1 to 100' })),
};

/** Users as conversations show them: the short form, users.get's placeholder for a deleted or globally blocked account. */
async function usersData(services: Services, ids: number[]) {
  const unique = [...new Set(ids)].sort((a, b) => a - b);
  const profiles = await loadProfiles(services, unique);
  return unique.map((id) => {
    const profile = profiles.get(id);
    if (!profile) return inactiveObject('not_exists', { user_id: id });
    return isGloballyBanned(profile) ? inactiveObject('global_ban', profile) : profileObject(services, profile, 'short');
  });
}

const syncFor = (k: Executor, userId: number, after: number | undefined, partnerId?: number) =>
  after === undefined ? Promise.resolve(EMPTY_SYNC) : syncAfter(k, userId, after, partnerId);

const imSend = defineMethod({
  name: 'im.send',
  summary: 'Send a private message to a user',
  description:
    "The same send_id from the same sender answers the first message's msg_id and stores nothing more. The receiver is told live (`im.sync` events). " +
    'Limits per sender (configurable): a burst in any 10 seconds, a rate an hour, and for young accounts the conversations started a day (7 with retry_after).',
  auth: 'required',
  bots: true,
  params: P.object({
    user_id: P.optional(P.uint({ minimum: 1, description: 'the receiver' })),
    chat_id: P.optional(P.uint({ description: 'group chats are not offered: answers 2' })),
    text: P.optional(
      P.string({
        maxLength: 10_000,
        description:
          `1 to ${MAX_TEXT_LENGTH} characters once surrounding spaces are removed, at least one of them visible; ` +
          'no control characters but tabs and line breaks, no bidirectional embeddings, overrides or isolates, no lone surrogates',
      }),
    ),
    image_token: P.optional(P.string({ maxLength: 256, description: 'images are not offered: answers 2' })),
    send_id: P.optional(P.string({ minLength: 1, maxLength: 64, description: "the client's key for this message (idempotency)" })),
  }),
  result: SendResult,
  errors: {
    7: 'a sending limit is reached; data.retry_after says in how many seconds it resets',
    101: 'the receiver does not exist or is globally blocked',
    104: 'the caller is muted; data.muted_until says until when',
    107: "one of the two (or the bot's owner) has blocked the other",
    412: "the caller's account is blocked",
    701: "the receiver's privacy settings refuse messages from the caller",
  },
  handler: async ({ services, caller }, params) => {
    if (params.chat_id !== undefined) throw badParam('chat_id', 'group chats are not offered; write to a user with user_id');
    if (params.user_id === undefined) throw badParam('user_id', 'is required');
    if (params.image_token !== undefined) throw badParam('image_token', 'images are not offered; send text');
    if (params.text === undefined) throw badParam('text', 'is required');
    if (params.user_id === caller.userId) throw badParam('user_id', 'you cannot write to yourself');
    const checked = checkedMessageText(params.text, MAX_TEXT_LENGTH);
    if ('problem' in checked) throw badParam('text', checked.problem);
    const taken = await takeSendLimits(services, caller.userId, params.user_id);
    try {
      const { msgId, created } = await storeOutgoing(services, {
        senderId: caller.userId,
        receiverId: params.user_id,
        text: checked.text,
        sendId: params.send_id ?? null,
      });
      if (!created) await taken.giveBack();
      return { msg_id: msgId };
    } catch (error) {
      await taken.giveBack();
      throw error;
    }
  },
});

const imDialogsGet = defineMethod({
  name: 'im.dialogsGet',
  summary: "The caller's conversations, newest activity first",
  description:
    "Each with its newest message and the count of the partner's messages the caller has not read. With id_last: only conversations whose newest message is older, " +
    'and `sync` holds the changes after it (else `sync` is empty).',
  auth: 'required',
  bots: true,
  params: P.object(paging),
  result: DialogsGetResult,
  handler: async ({ services, caller }, params) => {
    const k = services.db.kysely;
    const [rows, sync] = await Promise.all([
      selectDialogs(k, caller.userId, { before: params.id_last, offset: params.offset ?? 0, count: params.count ?? 20 }),
      syncFor(k, caller.userId, params.id_last),
    ]);
    const dialogs = rows.map((row) => ({ message: messageOf(row.message), new_counter: row.new_counter, user_id: row.partner_id }));
    return { dialogs, sync, users_data: await usersData(services, [caller.userId, ...dialogs.map((d) => d.user_id)]) };
  },
});

const imHistoryGet = defineMethod({
  name: 'im.historyGet',
  summary: 'The messages of a conversation, newest first',
  description:
    "Reading marks the partner's unread messages read (`is_read` 1); the partner is told live. With id_last: only older messages, and `sync` holds the " +
    "conversation's changes after it (else `sync` is empty).",
  auth: 'required',
  bots: true,
  params: P.object({ user_id: P.uint({ minimum: 1, description: 'the partner' }), ...paging }),
  result: HistoryGetResult,
  errors: { 101: 'no such user' },
  handler: async ({ services, caller }, params) => {
    const partnerId = params.user_id;
    if (partnerId !== caller.userId) await requireUser(services, partnerId);
    await readConversation(services, caller.userId, partnerId);
    const k = services.db.kysely;
    const [rows, sync] = await Promise.all([
      selectHistory(k, caller.userId, partnerId, { before: params.id_last, offset: params.offset ?? 0, count: params.count ?? 20 }),
      syncFor(k, caller.userId, params.id_last, partnerId),
    ]);
    return { messages: rows.map(messageOf), sync, users_data: await usersData(services, [caller.userId, partnerId]) };
  },
});

const imSync = defineMethod({
  name: 'im.sync',
  summary: "The changes to the caller's conversations after id_last",
  description:
    'What a client that was away has missed, in one call (as the WebSocket frame `4api["im.sync", {"id_last": N}]`): events of type 1 (new message), 2 (read), ' +
    '3 (deleted), oldest first, at most 100; ask again from the last id for more.',
  auth: 'required',
  bots: true,
  params: P.object({ id_last: P.uint({ description: 'the last event id the client has seen (0: from the start)' }) }),
  result: Sync,
  handler: ({ services, caller }, params) => syncAfter(services.db.kysely, caller.userId, params.id_last),
});

const imDelete = defineMethod({
  name: 'im.delete',
  summary: 'Delete your own private message for both parties',
  description:
    'Allowed within the delete window after sending (`--im-delete-window`, default a day). The message disappears from both histories, an unread one stops counting, and both parties are told live (event type 3).',
  auth: 'required',
  bots: true,
  extension: true,
  params: P.object({ msg_id: P.uint({ minimum: 1, description: 'one of your messages' }) }),
  errors: { 4: 'the delete window of the message has passed' },
  handler: async ({ services, caller }, params) => {
    const window = services.config.im.deleteWindow;
    const now = Math.floor(services.clock.now() / 1000);
    await deleteMessage(services, params.msg_id, (message) => {
      if (message.sender_id !== caller.userId) throw badParam('msg_id', `no message ${params.msg_id} of yours`);
      if (message.ts_created + window < now)
        throw new ApiError(Code.FORBIDDEN, `a message may be deleted only within ${window} seconds of sending`);
    });
  },
});

const adminImHistory = defineMethod({
  auth: 'admin',
  extension: true,
  name: 'admin.imHistory',
  summary: 'Read the private conversation between two users (audited)',
  description: 'Newest first, as im.historyGet shows it; marks nothing read.',
  params: P.object({
    user_id: P.uint({ minimum: 1, description: 'one party' }),
    partner_id: P.uint({ minimum: 1, description: 'the other party' }),
    id_last: P.optional(P.uint({ description: 'only messages older than this msg_id' })),
    offset: paging.offset,
    count: paging.count,
  }),
  result: Type.Object({ messages: Type.Array(PrivateMessage), users_data: HistoryGetResult.properties.users_data }, Strict),
  handler: async ({ services }, params) => {
    const rows = await selectHistory(services.db.kysely, params.user_id, params.partner_id, {
      before: params.id_last,
      offset: params.offset ?? 0,
      count: params.count ?? 20,
    });
    return { messages: rows.map(messageOf), users_data: await usersData(services, [params.user_id, params.partner_id]) };
  },
});

const adminImDelete = defineMethod({
  auth: 'admin',
  extension: true,
  name: 'admin.imDelete',
  summary: 'Delete a private message for both parties',
  description: 'Both parties are told live (event type 3); an unread message stops counting.',
  params: P.object({ msg_id: P.uint({ minimum: 1, description: 'the message' }) }),
  result: Type.Object({ msg_id: Type.Integer({ description: 'the message deleted' }) }, Strict),
  handler: async ({ services, inTransaction }, params) => {
    await deleteMessage(services, params.msg_id, () => undefined, inTransaction);
    return { msg_id: params.msg_id };
  },
});

export const messageMethods: AnyMethod[] = [imSend, imDialogsGet, imHistoryGet, imSync, imDelete, adminImHistory, adminImDelete];
