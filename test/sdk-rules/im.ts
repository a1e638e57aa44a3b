import { Type } from '@sinclair/typebox';
import { Num, Str, UserShort, always, obj, type SdkRules } from './shapes.js';

/** Private messages: here `msg_id` is a number, unlike the chat's. */
const Message = obj({ msg_id: Num, is_read: Num, text: Str, ts_created: Num, type: Num, user_id: Num });
const Sync = obj({
  events: Type.Array(
    obj({ chain: Type.Array(Type.Union([Num, Type.Null()])), data: obj({ type: Num, msg_id: Num, dialog: obj({ user_id: Num }) }) }),
  ),
  dialogs: Type.Array(obj({ user_id: Num, new_counter: Num })),
  messages: Type.Array(Message),
});

export const imRules: SdkRules = {
  'im.send': always(obj({ msg_id: Num })),
  'im.dialogsGet': always(
    obj({ dialogs: Type.Array(obj({ message: Message, new_counter: Num, user_id: Num })), sync: Sync, users_data: Type.Array(UserShort) }),
  ),
  'im.historyGet': always(obj({ messages: Type.Array(Message), sync: Sync, users_data: Type.Array(UserShort) })),
};
