import { sql, type Selectable } from 'kysely';
import type { Executor, InTransaction } from '../db/connection.js';
import type { ChatMessagesTable } from '../db/tables.js';
import type { Services } from '../services.js';
import { MessageIds } from './message-id.js';
import type { ChatMessage } from './schemas.js';

export type MessageRow = Selectable<ChatMessagesTable>;

/** The fields a system message of each type carries besides `type` and `user_id`. */
export type SystemMessageFields =
  | { type: 2; user_id: number; case_item_proto_id: number; drop_item_proto_id: number }
  | { type: 3; user_id: number; user_id_receiver: number; item_proto_id: number }
  | { type: 4; user_id: number; item_proto_ids: number[] };

/** A stored message as gchat.get shows it: the common fields and exactly those of its type. */
export function messageFromRow(row: MessageRow): ChatMessage {
  const common = { user_id: row.user_id, msg_id: row.msg_id, ts: row.ts };
  switch (row.type) {
    case 1:
      return { type: 1, ...common, text: row.text ?? '', user_ids_mentioned: JSON.parse(row.user_ids_mentioned ?? '[]') };
    case 2:
      return { type: 2, ...common, case_item_proto_id: row.case_item_proto_id!, drop_item_proto_id: row.drop_item_proto_id! };
    case 3:
      return { type: 3, ...common, user_id_receiver: row.user_id_receiver!, item_proto_id: row.item_proto_id! };
    case 4:
      return { type: 4, ...common, item_proto_ids: JSON.parse(row.item_proto_ids ?? '[]') };
    default:
      throw new Error(`chat message ${row.msg_id} has unknown type ${row.type}`);
  }
}

/** The row columns of a message (everything but msg_seq and deleted_at). */
export function rowValues(message: ChatMessage) {
  return {
    msg_id: message.msg_id,
    type: message.type,
    user_id: message.user_id,
    ts: message.ts,
    text: message.type === 1 ? message.text : null,
    user_ids_mentioned: message.type === 1 ? JSON.stringify(message.user_ids_mentioned) : null,
    case_item_proto_id: message.type === 2 ? message.case_item_proto_id : null,
    drop_item_proto_id: message.type === 2 ? message.drop_item_proto_id : null,
    user_id_receiver: message.type === 3 ? message.user_id_receiver : null,
    item_proto_id: message.type === 3 ? message.item_proto_id : null,
    item_proto_ids: message.type === 4 ? JSON.stringify(message.item_proto_ids) : null,
  };
}

/** Users a message names: its author, the receiver of a present, the users mentioned. */
export function usersNamedBy(message: ChatMessage): number[] {
  const ids = [message.user_id];
  if (message.type === 1) ids.push(...message.user_ids_mentioned);
  if (message.type === 3) ids.push(message.user_id_receiver);
  return ids;
}

/** Prototypes a message names. */
export function protosNamedBy(message: ChatMessage): number[] {
  if (message.type === 2) return [message.case_item_proto_id, message.drop_item_proto_id];
  if (message.type === 3) return [message.item_proto_id];
  if (message.type === 4) return [...message.item_proto_ids];
  return [];
}

/** This process's message ids, and its queue of messages being stored: one at a time, so the order of ids and of appearance agree. */
export class MessageWriter {
  readonly ids = new MessageIds();
  private storing: Promise<unknown> = Promise.resolve();

  /** Runs `store` after every store queued before it. */
  inTurn<T>(store: () => Promise<T>): Promise<T> {
    const result = this.storing.then(store, store);
    this.storing = result.catch(() => undefined);
    return result;
  }
}

export interface StoredMessage<M extends ChatMessage = ChatMessage> {
  message: M;
  /** Place in the order of appearance (chat_messages.msg_seq). */
  seq: number;
}

/**
 * Stores the message `build` makes with a new msg_id, and returns it with its place in the
 * order of appearance (msg_seq). The id sorts after every id stored before it by any process:
 * on PostgreSQL the chat_state row is locked from reading the newest id until the insert
 * commits; SQLite is written by one process. `announce` runs before the next message of this
 * process is stored, so this process hands its messages on in the order they were stored.
 * `inTransaction`: the transaction to store it in (an admin action's), announced once committed.
 */
export function storeMessage<M extends ChatMessage>(
  services: Services,
  nowMs: number,
  build: (msgId: string) => M,
  announce: (stored: StoredMessage<M>) => void,
  inTransaction?: InTransaction,
): Promise<StoredMessage<M>> {
  const run = async (): Promise<StoredMessage<M>> => {
    const insert = async (k: Executor): Promise<StoredMessage<M>> => {
      // Two statements: the newest id must be read after the lock is held (a fresh snapshot).
      if (services.db.dialect === 'postgres') await sql`select id from chat_state where id = 1 for update`.execute(k);
      const newest = await k.selectFrom('chat_messages').select('msg_id').orderBy('msg_seq', 'desc').limit(1).executeTakeFirst();
      const message = build(services.chat.writer.ids.nextAfter(nowMs, newest?.msg_id));
      const row = await k.insertInto('chat_messages').values(rowValues(message)).returning('msg_seq').executeTakeFirstOrThrow();
      return { message, seq: Number(row.msg_seq) };
    };
    const stored = inTransaction
      ? await inTransaction(insert)
      : services.db.dialect === 'postgres'
        ? await services.db.kysely.transaction().execute(insert)
        : await insert(services.db.kysely);
    announce(stored);
    return stored;
  };
  return services.chat.writer.inTurn(run);
}

/** The newest `count` visible messages with their msg_seq, oldest first. */
export async function loadNewestMessages(services: Services, count: number): Promise<{ seq: number; message: ChatMessage }[]> {
  if (count <= 0) return [];
  const rows = await services.db.kysely
    .selectFrom('chat_messages')
    .selectAll()
    .where('deleted_at', 'is', null)
    .orderBy('msg_seq', 'desc')
    .limit(count)
    .execute();
  return rows.reverse().map((row) => ({ seq: Number(row.msg_seq), message: messageFromRow(row) }));
}
