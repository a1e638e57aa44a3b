import { sql, type Selectable, type Updateable } from 'kysely';
import type { DialectName, Executor } from '../db/connection.js';
import type { ChatMessagesTable, ChatStateTable, UsersTable } from '../db/tables.js';
import type { ChatMessage } from './schemas.js';

export type MessageRow = Selectable<ChatMessagesTable>;

/** The row columns of a message (everything but msg_seq and deleted_at). */
function rowValues(message: ChatMessage) {
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

/**
 * Holds off the chat's other writers until `k`'s transaction ends: on PostgreSQL by locking the
 * chat_state row; SQLite runs one transaction at a time.
 */
export async function lockChatWriters(k: Executor, dialect: DialectName): Promise<void> {
  if (dialect === 'postgres') await sql`select id from chat_state where id = 1 for update`.execute(k);
}

/**
 * The msg_id of the newest stored message, the chat's writers held off first (lockChatWriters);
 * two statements, because the newest id must be read after the lock is held (a fresh snapshot).
 */
export async function newestMessageIdLocked(k: Executor, dialect: DialectName): Promise<string | undefined> {
  await lockChatWriters(k, dialect);
  const newest = await k.selectFrom('chat_messages').select('msg_id').orderBy('msg_seq', 'desc').limit(1).executeTakeFirst();
  return newest?.msg_id;
}

/** Stores a message; its msg_seq. */
export async function insertMessage(k: Executor, message: ChatMessage): Promise<number> {
  const row = await k.insertInto('chat_messages').values(rowValues(message)).returning('msg_seq').executeTakeFirstOrThrow();
  return Number(row.msg_seq);
}

/** The newest `count` visible messages, newest first. */
export function selectNewestVisibleMessages(k: Executor, count: number): Promise<MessageRow[]> {
  return k.selectFrom('chat_messages').selectAll().where('deleted_at', 'is', null).orderBy('msg_seq', 'desc').limit(count).execute();
}

/** Hides a visible message; false when no visible message has that id. */
export async function hideMessage(trx: Executor, msgId: string, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('chat_messages')
    .set({ deleted_at: now })
    .where('msg_id', '=', msgId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) !== 0;
}

export type ChatStateRow = Selectable<ChatStateTable>;

/** The chat's one status row, if it exists. */
export function selectChatState(k: Executor): Promise<ChatStateRow | undefined> {
  return k.selectFrom('chat_state').selectAll().where('id', '=', 1).executeTakeFirst();
}

export type ChatStateChange = Pick<Updateable<ChatStateTable>, 'closed' | 'slowmode' | 'emoteonly' | 'slowmode_interval'>;

export async function updateChatState(trx: Executor, change: ChatStateChange): Promise<void> {
  await trx.updateTable('chat_state').set(change).where('id', '=', 1).execute();
}

export type AuthorRow = Pick<Selectable<UsersTable>, 'moderator' | 'muted_until' | 'bot_owner_id'>;

/** What sending a message needs to know of its author. */
export function selectAuthor(k: Executor, userId: number): Promise<AuthorRow | undefined> {
  return k.selectFrom('users').select(['moderator', 'muted_until', 'bot_owner_id']).where('user_id', '=', userId).executeTakeFirst();
}
