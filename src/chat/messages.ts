import { ApiError, Code, authError, badParam } from '../api/errors.js';
import { ownTransaction, type Executor, type InTransaction } from '../db/connection.js';
import type { Services } from '../services.js';
import { MessageIds } from './message-id.js';
import { storedProtoIds } from '../catalog/index.js';
import { storedUserIds } from '../users/index.js';
import { insertMessage, newestMessageIdLocked, selectNewestVisibleMessages, type MessageRow } from './queries.js';
import type { ChatMessage } from './schemas.js';

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
 * Refuses a message that names a user or prototype no longer stored: a replace import, the only
 * thing that removes them, may have run since the caller checked the message.
 */
async function checkNamedEntriesStored(k: Executor, message: ChatMessage): Promise<void> {
  const userIds = [...new Set(usersNamedBy(message))];
  const users = new Set(await storedUserIds(k, userIds));
  const goneUser = userIds.find((id) => !users.has(id));
  if (goneUser !== undefined) {
    // A text message is its author's own (gchat.send), whose session the replace import ended.
    if (message.type === 1) throw authError('authorization failed: the session ended, the world was replaced while the message was sent');
    throw new ApiError(Code.USER_NOT_FOUND, `user ${goneUser} does not exist`);
  }
  const protoIds = [...new Set(protosNamedBy(message))];
  if (protoIds.length === 0) return;
  const protos = new Set(await storedProtoIds(k, protoIds));
  const goneProtos = protoIds.filter((id) => !protos.has(id));
  if (goneProtos.length > 0) throw badParam('item_proto_id', `no prototype ${goneProtos.join(', ')}`);
}

/**
 * Stores the message `build` makes with a new msg_id, and returns it with its place in the
 * order of appearance (msg_seq). The id sorts after every id stored before it by any process:
 * the chat's writers (a world import too) are held off from reading the newest id until the
 * insert commits (lockChatWriters), and what the message names is checked again meanwhile.
 * `announce` runs before the next message of this process is stored, so this process hands its
 * messages on in the order they were stored.
 * `inTransaction`: the transaction to store it in (an admin action's), announced once committed.
 */
export function storeMessage<M extends ChatMessage>(
  services: Services,
  nowMs: number,
  build: (msgId: string) => M,
  announce: (stored: StoredMessage<M>) => void,
  inTransaction: InTransaction = ownTransaction(services.db),
): Promise<StoredMessage<M>> {
  const run = async (): Promise<StoredMessage<M>> => {
    const stored = await inTransaction(async (trx): Promise<StoredMessage<M>> => {
      const newest = await newestMessageIdLocked(trx, services.db.dialect);
      const message = build(services.chat.writer.ids.nextAfter(nowMs, newest));
      await checkNamedEntriesStored(trx, message);
      return { message, seq: await insertMessage(trx, message) };
    });
    announce(stored);
    return stored;
  };
  return services.chat.writer.inTurn(run);
}

/** The newest `count` visible messages with their msg_seq, oldest first. */
export async function loadNewestMessages(services: Services, count: number): Promise<{ seq: number; message: ChatMessage }[]> {
  if (count <= 0) return [];
  const rows = await selectNewestVisibleMessages(services.db.kysely, count);
  return rows.reverse().map((row) => ({ seq: Number(row.msg_seq), message: messageFromRow(row) }));
}
