import { Type, type Static } from '@sinclair/typebox';
import { Bit, Strict, Uint } from '../api/schema-types.js';
import { UserInactive, UserShort } from '../users/index.js';

/** Values of a message's `type`. */
export const MessageType = {
  /** Text a user wrote. */
  TEXT: 1,
} as const;

/** Values of a sync event's `data.type`. */
export const SyncEventType = {
  /** A message was sent: `msg_id` is the message (listed in `messages`). */
  NEW: 1,
  /** The receiver read the conversation: every message up to `msg_id` from the other party is read. */
  READ: 2,
  /** A message was deleted, by its author or a moderator: `msg_id` is gone for both. */
  DELETED: 3,
} as const;

export const PrivateMessage = Type.Object(
  {
    msg_id: Type.Integer({ minimum: 1, description: 'unique; increases with every message' }),
    is_read: Type.Union(Bit.anyOf, { description: '1 once the receiver has read it' }),
    text: Type.String(),
    ts_created: Uint,
    type: Type.Literal(MessageType.TEXT, { description: '1: text' }),
    user_id: Type.Integer({ minimum: 1, description: 'the sender' }),
  },
  { ...Strict, $id: 'PrivateMessage', description: 'A private message' },
);
export type PrivateMessage = Static<typeof PrivateMessage>;

const SyncEvent = Type.Object(
  {
    id: Type.Integer({ minimum: 1, description: "the event's id: give it as `id_last` to hear only what came after" }),
    chain: Type.Array(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]), {
      description:
        "[the id before this event in the caller's sequence (the `id_last` given, null when none, for the first), this event's id]",
    }),
    data: Type.Object(
      {
        type: Type.Union(
          Object.values(SyncEventType).map((value) => Type.Literal(value)),
          { description: '1 new message, 2 messages read, 3 message deleted' },
        ),
        msg_id: Type.Integer({ minimum: 1 }),
        dialog: Type.Object({ user_id: Type.Integer({ minimum: 1, description: 'the other party' }) }, Strict),
      },
      Strict,
    ),
  },
  Strict,
);

export const Sync = Type.Object(
  {
    events: Type.Array(SyncEvent, {
      description: 'the changes after `id_last`, oldest first (at most 100: ask again from the last id for more)',
    }),
    dialogs: Type.Array(Type.Object({ user_id: Uint, new_counter: Uint }, Strict), {
      description: 'the unread count now of every conversation the events touch',
    }),
    messages: Type.Array(PrivateMessage, { description: 'the messages the new-message events name that are still there' }),
  },
  { ...Strict, $id: 'ImSync' },
);
export type Sync = Static<typeof Sync>;

/** A user as conversations show them: the short form, or users.get's placeholder for a globally blocked or deleted account. */
const ImUser = Type.Union([UserShort, UserInactive]);

const usersData = Type.Array(ImUser, { description: 'every user named (the caller and the partners), short form' });

export const DialogsGetResult = Type.Object(
  {
    dialogs: Type.Array(
      Type.Object(
        {
          message: PrivateMessage,
          new_counter: Type.Integer({ minimum: 0, description: 'messages of the partner the caller has not read' }),
          user_id: Type.Integer({ minimum: 1, description: 'the partner' }),
        },
        Strict,
      ),
      { description: 'newest activity first' },
    ),
    sync: Sync,
    users_data: usersData,
  },
  Strict,
);

export const HistoryGetResult = Type.Object(
  {
    messages: Type.Array(PrivateMessage, { description: 'newest first' }),
    sync: Sync,
    users_data: usersData,
  },
  Strict,
);

export const SendResult = Type.Object({ msg_id: Type.Integer({ minimum: 1 }) }, Strict);
