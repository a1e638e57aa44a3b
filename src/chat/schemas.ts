import { Type, type Static } from '@sinclair/typebox';
import { Strict, Uint } from '../api/schema-types.js';
import { UserInactive, UserShort } from '../users/index.js';
import { ItemProtoShort } from '../catalog/index.js';

/** A user as the chat shows them: the short form, or users.get's placeholder for a globally blocked account. */
export const ChatUser = Type.Union([UserShort, UserInactive]);
export type ChatUser = Static<typeof ChatUser>;

const MsgId = Type.String({ minLength: 1, description: 'unique; ids made by this server sort in order of appearance' });
const common = { user_id: Uint, msg_id: MsgId, ts: Uint };

export const TextMessage = Type.Object(
  {
    type: Type.Literal(1),
    ...common,
    text: Type.String(),
    user_ids_mentioned: Type.Array(Uint),
  },
  { ...Strict, $id: 'ChatTextMessage', description: 'A user wrote text; `@<user_id>` mentions are listed in user_ids_mentioned' },
);

export const DropMessage = Type.Object(
  { type: Type.Literal(2), ...common, case_item_proto_id: Uint, drop_item_proto_id: Uint },
  { ...Strict, $id: 'ChatDropMessage', description: 'user_id opened a case or gift set and got drop_item_proto_id' },
);

export const PresentMessage = Type.Object(
  { type: Type.Literal(3), ...common, user_id_receiver: Uint, item_proto_id: Uint },
  { ...Strict, $id: 'ChatPresentMessage', description: 'user_id gave user_id_receiver a present' },
);

export const PromoMessage = Type.Object(
  { type: Type.Literal(4), ...common, item_proto_ids: Type.Array(Uint) },
  { ...Strict, $id: 'ChatPromoMessage', description: 'user_id redeemed a promo code' },
);

export const ChatMessage = Type.Union([TextMessage, DropMessage, PresentMessage, PromoMessage], { $id: 'ChatMessage' });
export type ChatMessage = Static<typeof ChatMessage>;
export type TextMessage = Static<typeof TextMessage>;

export const ChatStatus = Type.Object(
  {
    closed: Type.Boolean({ description: 'writing is closed (moderators may still write)' }),
    slowmode: Type.Boolean({ description: 'each user may send one message per slow-mode interval' }),
    emoteonly: Type.Boolean({ description: 'only messages made entirely of emoticons may be written' }),
  },
  { ...Strict, $id: 'ChatStatus' },
);
export type ChatStatus = Static<typeof ChatStatus>;

export const GchatGetResult = Type.Object(
  {
    messages: Type.Array(ChatMessage, { description: 'the newest messages, in order of appearance' }),
    status: ChatStatus,
    users: Type.Array(ChatUser, {
      description: 'every user a message names (author, receiver, mentioned), short form; a globally blocked account as users.get shows it',
    }),
    item_protos: Type.Array(ItemProtoShort, { description: 'every prototype a message names, short form' }),
  },
  Strict,
);

export const GchatSendResult = Type.Object({ msg_id: MsgId }, Strict);

/** `data` of a `gchat.add` WebSocket event. */
export const ChatAddEvent = Type.Object(
  { message: ChatMessage, users: Type.Array(ChatUser), item_protos: Type.Array(ItemProtoShort) },
  Strict,
);
