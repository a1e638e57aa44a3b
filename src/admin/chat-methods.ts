import { Type } from '@sinclair/typebox';
import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { badParam } from '../api/errors.js';
import { Strict } from '../api/schema-types.js';
import { deleteMessage, postSystemMessage, readChatSettings, setChatStatus } from '../chat/index.js';
import { requireUser } from '../users/index.js';
import { ChatStatusResult } from './schemas.js';

/** Which fields each system message type needs. */
const SYSTEM_MESSAGE_FIELDS = {
  2: ['case_item_proto_id', 'drop_item_proto_id'],
  3: ['user_id_receiver', 'item_proto_id'],
  4: ['item_proto_ids'],
} as const;

type SystemFields = {
  case_item_proto_id?: number;
  drop_item_proto_id?: number;
  user_id_receiver?: number | string;
  item_proto_id?: number;
  item_proto_ids?: number[];
};

export const chatMethods: AnyMethod[] = [
  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.getChatStatus',
    summary: "Read the global chat's modes: closed, slow mode and its interval, emote-only",
    description:
      'The modes as stored, the same answer admin.setChatStatus gives after a change: what gchat.get shows players as `status`, and the slow-mode interval it does not show.',
    params: P.object({}),
    result: ChatStatusResult,
    handler: async ({ services }) => {
      const settings = await readChatSettings(services);
      return {
        status: { closed: settings.closed, slowmode: settings.slowmode, emoteonly: settings.emoteonly },
        slowmode_interval: settings.slowmode_interval,
      };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.setChatStatus',
    summary: 'Close or open the global chat, switch slow mode and emote-only mode',
    description:
      'Only the given flags change. slowmode_interval: seconds a user waits between two messages in slow mode. gchat.get shows the status at once, in every process.',
    params: P.object({
      closed: P.optional(P.bit({ description: '1: only moderators may write (gchat.send answers others 1203 DISABLED)' })),
      slowmode: P.optional(P.bit({ description: '1: a user waits slowmode_interval seconds between two messages (moderators excepted)' })),
      emoteonly: P.optional(P.bit({ description: '1: only emoticon codes such as :smile: may be written' })),
      slowmode_interval: P.optional(
        P.uint({ minimum: 1, maximum: 86400, description: 'seconds a user waits between two messages in slow mode' }),
      ),
    }),
    result: ChatStatusResult,
    handler: async ({ services, inTransaction }, params) => {
      const { closed, slowmode, emoteonly, slowmode_interval } = params;
      const settings = await setChatStatus(services, { closed, slowmode, emoteonly, slowmode_interval }, inTransaction);
      return {
        status: { closed: settings.closed, slowmode: settings.slowmode, emoteonly: settings.emoteonly },
        slowmode_interval: settings.slowmode_interval,
      };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.deleteMessage',
    summary: 'Remove a message from the global chat',
    params: P.object({ msg_id: P.string({ minLength: 1, maxLength: 64, description: 'msg_id of the message, as gchat.get shows it' }) }),
    result: Type.Object({ msg_id: Type.String() }, Strict),
    handler: async ({ services, inTransaction }, params) => {
      await deleteMessage(services, params.msg_id, inTransaction);
      return { msg_id: params.msg_id };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.postSystemMessage',
    summary: 'Post a system message to the global chat',
    description:
      'type 2: user_id opened a case (case_item_proto_id) and got drop_item_proto_id; type 3: user_id gave user_id_receiver the item item_proto_id; type 4: user_id redeemed a promo code for item_proto_ids.',
    params: P.object({
      type: P.uint({ minimum: 2, maximum: 4, description: '2: case drop, 3: present, 4: promo' }),
      user_id: P.idOrDomain({ description: 'the user the message is about' }),
      case_item_proto_id: P.optional(P.uint({ minimum: 1, description: 'type 2: the opened case' })),
      drop_item_proto_id: P.optional(P.uint({ minimum: 1, description: 'type 2: what dropped from it' })),
      user_id_receiver: P.optional(P.idOrDomain({ description: 'type 3: who received the present' })),
      item_proto_id: P.optional(P.uint({ minimum: 1, description: 'type 3: the present' })),
      item_proto_ids: P.optional(P.uintSet({ maxItems: 50, description: 'type 4: the prototypes the promo code gave' })),
    }),
    result: Type.Object({ msg_id: Type.String() }, Strict),
    errors: { 101: 'a user does not exist' },
    handler: async ({ services, inTransaction }, params) => {
      const type = params.type as 2 | 3 | 4;
      const given = params as SystemFields;
      for (const field of SYSTEM_MESSAGE_FIELDS[type])
        if (given[field] === undefined) throw badParam(field, `is required for messages of type ${type}`);
      const userId = await requireUser(services, params.user_id);
      const fields: Record<string, unknown> = {};
      for (const field of SYSTEM_MESSAGE_FIELDS[type]) fields[field] = given[field];
      if (type === 3) fields.user_id_receiver = await requireUser(services, given.user_id_receiver!, { parameter: 'user_id_receiver' });
      const msgId = await postSystemMessage(services, { type, user_id: userId, ...fields } as never, inTransaction);
      return { msg_id: msgId };
    },
  }),
];
