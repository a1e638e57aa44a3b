import { Type } from '@sinclair/typebox';
import { ItemProto, Num, NumList, Str, UserShort, always, bit, obj, opt, type SdkRules } from './shapes.js';

const base = { msg_id: Str, ts: Num, user_id: Num };
/** A chat message: the common fields and those of its type; `msg_id` is a string. */
export const ChatMessage = Type.Union([
  obj({ ...base, type: Type.Literal(1), text: Str, is_public: bit, user_ids_mentioned: opt(NumList) }, 'text'),
  obj({ ...base, type: Type.Literal(2), case_item_proto_id: Num, drop_item_proto_id: Num }, 'drop'),
  obj({ ...base, type: Type.Literal(3), user_id_receiver: Num, item_proto_id: Num }, 'present'),
  obj({ ...base, type: Type.Literal(4), item_proto_ids: NumList }, 'promo code'),
]);

export const gchatRules: SdkRules = {
  // The chat status flags are the one place where the answer holds booleans.
  'gchat.get': always(
    obj({
      messages: Type.Array(ChatMessage),
      status: obj({ closed: Type.Boolean(), slowmode: Type.Boolean(), emoteonly: Type.Boolean() }),
      users: Type.Array(UserShort),
      item_protos: Type.Array(ItemProto),
    }),
  ),
  'gchat.send': always(obj({ msg_id: Str })),
};
