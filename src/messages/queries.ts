import { sql, type Selectable } from 'kysely';
import type { DialectName, Executor } from '../db/connection.js';
import type { ImEventsTable, ImMessagesTable, ImPrivacy } from '../db/tables.js';

export type MessageRow = Selectable<ImMessagesTable>;
export type EventRow = Selectable<ImEventsTable>;

/** What sending or reading needs to know of a party, read under its lock. */
export interface PartyRow {
  user_id: number;
  global_ban: number;
  muted_until: number | null;
  bot_owner_id: number | null;
  im_privacy: ImPrivacy;
  created_at: number;
}

/**
 * Holds off every other writer of these users' conversations until `trx` ends, and reads them:
 * on PostgreSQL by locking their rows in id order (blocks and bans lock or update the same rows,
 * so they come wholly before or after); SQLite runs one transaction at a time. Because every
 * event of a user is written under that user's lock, the user's events commit in id order.
 */
export async function lockParties(trx: Executor, dialect: DialectName, ids: number[]): Promise<Map<number, PartyRow>> {
  return (await lockPartiesOfSend(trx, dialect, ids)).parties;
}

/**
 * lockParties, which also answers in the same query whether either of the first two users has
 * blocked the other (what a send asks first).
 */
export async function lockPartiesOfSend(
  trx: Executor,
  dialect: DialectName,
  ids: number[],
): Promise<{ parties: Map<number, PartyRow>; blocked: boolean }> {
  const sorted = [...new Set(ids)].sort((a, b) => a - b);
  const [a = 0, b = a] = ids;
  const query = trx
    .selectFrom('users')
    .select(['user_id', 'global_ban', 'muted_until', 'bot_owner_id', 'im_privacy', 'created_at'])
    .select((eb) =>
      eb
        .exists(
          eb
            .selectFrom('blocks')
            .select('blocks.user_id')
            .where((w) =>
              w.or([
                w.and([w('blocks.user_id', '=', a), w('blocks.blocked_user_id', '=', b)]),
                w.and([w('blocks.user_id', '=', b), w('blocks.blocked_user_id', '=', a)]),
              ]),
            ),
        )
        .as('blocked'),
    )
    .where('user_id', 'in', sorted)
    .orderBy('user_id');
  const rows = dialect === 'postgres' ? await query.forUpdate('users').execute() : await query.execute();
  const parties = new Map(
    rows.map(({ blocked: _, ...row }) => [Number(row.user_id), { ...row, user_id: Number(row.user_id) } as PartyRow]),
  );
  return { parties, blocked: rows.some((row) => Boolean(row.blocked)) };
}

/**
 * The first key of the PostgreSQL advisory locks that make a user's conversation events take
 * turns to be announced (the second is the user's id).
 */
const ANNOUNCE_LOCK = 41_001;

/** Takes the users' announcing turns (session advisory locks, in id order): held until let go, past the end of a transaction. */
export async function takeAnnouncingTurns(k: Executor, ids: number[]): Promise<void> {
  await sql`select ${sql.join(ids.map((id) => sql`pg_advisory_lock(${ANNOUNCE_LOCK}, ${id})`))}`.execute(k);
}

/** Lets go of the users' announcing turns, on the connection that took them. */
export async function leaveAnnouncingTurns(k: Executor, ids: number[]): Promise<void> {
  await sql`select ${sql.join(ids.map((id) => sql`pg_advisory_unlock(${ANNOUNCE_LOCK}, ${id})`))}`.execute(k);
}

/** Whether either user has blocked the other. */
export async function blockedEitherWay(trx: Executor, a: number, b: number): Promise<boolean> {
  const row = await trx
    .selectFrom('blocks')
    .select('user_id')
    .where((eb) =>
      eb.or([
        eb.and([eb('user_id', '=', a), eb('blocked_user_id', '=', b)]),
        eb.and([eb('user_id', '=', b), eb('blocked_user_id', '=', a)]),
      ]),
    )
    .executeTakeFirst();
  return row !== undefined;
}

export async function areFriends(trx: Executor, a: number, b: number): Promise<boolean> {
  const row = await trx.selectFrom('friendships').select('user_id').where('user_id', '=', a).where('friend_id', '=', b).executeTakeFirst();
  return row !== undefined;
}

/** The msg_id a sender's earlier message with this send_id got. */
export async function msgIdOfSendId(trx: Executor, senderId: number, sendId: string): Promise<number | undefined> {
  const row = await trx
    .selectFrom('im_messages')
    .select('msg_id')
    .where('sender_id', '=', senderId)
    .where('send_id', '=', sendId)
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.msg_id);
}

/** When the user's account was created (seconds), and whether they have a conversation with `partnerId`; undefined when no such user. */
export async function senderFacts(
  k: Executor,
  userId: number,
  partnerId: number,
): Promise<{ createdAt: number; hasDialog: boolean } | undefined> {
  const row = await k
    .selectFrom('users as u')
    .select((eb) => [
      'u.created_at',
      eb
        .exists(eb.selectFrom('im_dialogs as d').select('d.user_id').where('d.user_id', '=', userId).where('d.partner_id', '=', partnerId))
        .as('has_dialog'),
    ])
    .where('u.user_id', '=', userId)
    .executeTakeFirst();
  return row === undefined ? undefined : { createdAt: row.created_at, hasDialog: Boolean(row.has_dialog) };
}

/** Records an event of the conversation between `a` and `b`; its id. */
export async function insertEvent(trx: Executor, type: number, msgId: number | null, a: number, b: number, ts: number): Promise<number> {
  const row = await trx
    .insertInto('im_events')
    .values({ type, msg_id: msgId, user_low: Math.min(a, b), user_high: Math.max(a, b), ts })
    .returning('event_id')
    .executeTakeFirstOrThrow();
  return Number(row.event_id);
}

export async function insertMessage(
  trx: Executor,
  message: { msg_id: number; sender_id: number; receiver_id: number; text: string; ts_created: number; send_id: string | null },
): Promise<void> {
  const { sender_id: a, receiver_id: b } = message;
  await trx
    .insertInto('im_messages')
    .values({ ...message, user_low: Math.min(a, b), user_high: Math.max(a, b) })
    .execute();
}

/**
 * Makes `msgId` the newest message of both sides of the conversation, counting it unread for the
 * receiver: one statement for both rows.
 */
export async function touchDialogs(trx: Executor, senderId: number, receiverId: number, msgId: number): Promise<void> {
  await trx
    .insertInto('im_dialogs')
    .values([
      { user_id: senderId, partner_id: receiverId, last_msg_id: msgId, new_counter: 0 },
      { user_id: receiverId, partner_id: senderId, last_msg_id: msgId, new_counter: 1 },
    ])
    .onConflict((oc) =>
      oc.columns(['user_id', 'partner_id']).doUpdateSet((eb) => ({
        last_msg_id: eb.ref('excluded.last_msg_id'),
        new_counter: sql`im_dialogs.new_counter + excluded.new_counter`,
      })),
    )
    .execute();
}

/** The partial index of unread messages names the constant: SQLite uses it only for a comparison written with it. */
const UNREAD = sql<boolean>`is_read = 0`;

/** Marks the partner's unread messages to the user read and zeroes the counter; the newest message marked, if any. */
export async function markRead(trx: Executor, userId: number, partnerId: number): Promise<number | undefined> {
  const newest = await trx
    .selectFrom('im_messages')
    .select((eb) => eb.fn.max('msg_id').as('msg_id'))
    .where('receiver_id', '=', userId)
    .where('sender_id', '=', partnerId)
    .where(UNREAD)
    .executeTakeFirst();
  if (newest?.msg_id === null || newest?.msg_id === undefined) return undefined;
  await trx
    .updateTable('im_messages')
    .set({ is_read: 1 })
    .where('receiver_id', '=', userId)
    .where('sender_id', '=', partnerId)
    .where(UNREAD)
    .execute();
  await trx.updateTable('im_dialogs').set({ new_counter: 0 }).where('user_id', '=', userId).where('partner_id', '=', partnerId).execute();
  return Number(newest.msg_id);
}

export async function newCounter(k: Executor, userId: number, partnerId: number): Promise<number> {
  const row = await k
    .selectFrom('im_dialogs')
    .select('new_counter')
    .where('user_id', '=', userId)
    .where('partner_id', '=', partnerId)
    .executeTakeFirst();
  return row?.new_counter ?? 0;
}

/** Unread messages of every conversation of the user (the `messages_new` counter). */
export async function unreadTotal(k: Executor, userId: number): Promise<number> {
  const row = await k
    .selectFrom('im_dialogs')
    .select((eb) => eb.fn.sum<number | string | null>('new_counter').as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/**
 * Each party's unread count of the conversation with the other (`counter`) and of all their
 * conversations (`total`), in one query: a party's partner is the other one.
 */
export async function partyCounters(k: Executor, a: number, b: number): Promise<Map<number, { counter: number; total: number }>> {
  const { rows } = await sql<{ user_id: number | string; counter: number | string | null; total: number | string | null }>`
    select user_id,
      sum(case when partner_id = ${a + b} - user_id then new_counter else 0 end) as counter,
      sum(new_counter) as total
    from im_dialogs where user_id in (${a}, ${b}) group by user_id`.execute(k);
  return new Map(rows.map((row) => [Number(row.user_id), { counter: Number(row.counter ?? 0), total: Number(row.total ?? 0) }]));
}

export function selectMessage(k: Executor, msgId: number): Promise<MessageRow | undefined> {
  return k.selectFrom('im_messages').selectAll().where('msg_id', '=', msgId).executeTakeFirst();
}

/** Hides a message; an unread one no longer counts for its receiver. */
export async function hideMessage(trx: Executor, message: MessageRow, now: number): Promise<void> {
  await trx.updateTable('im_messages').set({ deleted_at: now }).where('msg_id', '=', message.msg_id).execute();
  if (message.is_read === 0)
    await trx
      .updateTable('im_dialogs')
      .set({ new_counter: sql`new_counter - 1` })
      .where('user_id', '=', message.receiver_id)
      .where('partner_id', '=', message.sender_id)
      .execute();
}

/** Points both sides of a conversation at its newest message left (null when none is). */
export async function refreshLastMessage(trx: Executor, a: number, b: number): Promise<void> {
  const newest = await trx
    .selectFrom('im_messages')
    .select('msg_id')
    .where('user_low', '=', Math.min(a, b))
    .where('user_high', '=', Math.max(a, b))
    .where('deleted_at', 'is', null)
    .orderBy('msg_id', 'desc')
    .limit(1)
    .executeTakeFirst();
  const last = newest === undefined ? null : Number(newest.msg_id);
  await trx
    .updateTable('im_dialogs')
    .set({ last_msg_id: last })
    .where((eb) =>
      eb.or([eb.and([eb('user_id', '=', a), eb('partner_id', '=', b)]), eb.and([eb('user_id', '=', b), eb('partner_id', '=', a)])]),
    )
    .execute();
}

/** A page of a conversation's visible messages, newest first: older than `before` when given, after skipping `offset`. */
export function selectHistory(
  k: Executor,
  a: number,
  b: number,
  page: { before?: number; offset: number; count: number },
): Promise<MessageRow[]> {
  let query = k
    .selectFrom('im_messages')
    .selectAll()
    .where('user_low', '=', Math.min(a, b))
    .where('user_high', '=', Math.max(a, b))
    .where('deleted_at', 'is', null);
  if (page.before !== undefined) query = query.where('msg_id', '<', page.before);
  return query.orderBy('msg_id', 'desc').offset(page.offset).limit(page.count).execute();
}

export interface DialogRow {
  partner_id: number;
  new_counter: number;
  message: MessageRow;
}

/** A page of the user's conversations with a message left, newest activity first. */
export async function selectDialogs(
  k: Executor,
  userId: number,
  page: { before?: number; offset: number; count: number },
): Promise<DialogRow[]> {
  let query = k
    .selectFrom('im_dialogs as d')
    .innerJoin('im_messages as m', 'm.msg_id', 'd.last_msg_id')
    .selectAll('m')
    .select(['d.partner_id', 'd.new_counter'])
    .where('d.user_id', '=', userId);
  if (page.before !== undefined) query = query.where('d.last_msg_id', '<', page.before);
  const rows = await query.orderBy('d.last_msg_id', 'desc').offset(page.offset).limit(page.count).execute();
  return rows.map(({ partner_id, new_counter, ...message }) => ({ partner_id: Number(partner_id), new_counter, message }));
}

/** The user's events after `after`, oldest first, at most `count`; only those with `partnerId` when given. */
export async function selectEventsAfter(
  k: Executor,
  userId: number,
  after: number,
  count: number,
  partnerId?: number,
): Promise<EventRow[]> {
  const side = (column: 'user_low' | 'user_high', other: 'user_low' | 'user_high') => {
    let query = k.selectFrom('im_events').selectAll().where(column, '=', userId).where('event_id', '>', after);
    if (partnerId !== undefined) query = query.where(other, '=', partnerId);
    return query.orderBy('event_id').limit(count).execute();
  };
  const [low, high] = await Promise.all([side('user_low', 'user_high'), side('user_high', 'user_low')]);
  const seen = new Set<number>();
  return [...low, ...high]
    .filter((event) => !seen.has(event.event_id) && seen.add(event.event_id))
    .sort((x, y) => x.event_id - y.event_id)
    .slice(0, count);
}

export function selectMessages(k: Executor, msgIds: number[]): Promise<MessageRow[]> {
  if (msgIds.length === 0) return Promise.resolve([]);
  return k.selectFrom('im_messages').selectAll().where('msg_id', 'in', msgIds).execute();
}

export async function selectCounters(k: Executor, userId: number, partnerIds: number[]): Promise<Map<number, number>> {
  if (partnerIds.length === 0) return new Map();
  const rows = await k
    .selectFrom('im_dialogs')
    .select(['partner_id', 'new_counter'])
    .where('user_id', '=', userId)
    .where('partner_id', 'in', partnerIds)
    .execute();
  return new Map(rows.map((row) => [Number(row.partner_id), row.new_counter]));
}
