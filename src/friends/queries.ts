import { sql } from 'kysely';
import type { Database, Executor } from '../db/connection.js';
import { BANNED, NOT_BANNED } from '../users/index.js';

/** Kinds of `relationRows` that are blocks (1..3 are as in `Friendship`). */
export const KIND_BLOCKED = 4;
export const KIND_BLOCKED_BY = 5;

/** A page of a list of users: how many the list holds, and the ids of the page. */
export interface IdPage {
  total: number;
  ids: number[];
}

/** `count` ids from `offset` of a list that holds `total`. */
export interface PageWindow {
  offset: number;
  count: number;
}

const outside = (total: number, { offset, count }: PageWindow): boolean => count === 0 || offset >= total;

/** A user's friends that are not globally blocked, newest friendship first (ties: higher id first), with what says whether they are online. */
export function friendsWithPresence(db: Database, userId: number): Promise<{ user_id: number; last_seen: number; always_online: 0 | 1 }[]> {
  return db.kysely
    .selectFrom('friendships as f')
    .innerJoin('users as u', 'u.user_id', 'f.friend_id')
    .where('f.user_id', '=', userId)
    .where('u.global_ban', '=', NOT_BANNED)
    .select(['f.friend_id as user_id', 'u.last_seen', 'u.always_online'])
    .orderBy('f.since', 'desc')
    .orderBy('f.friend_id', 'desc')
    .execute();
}

/**
 * A page of a user's friends that are not globally blocked, in the same order. Counted and
 * paged from the friendships index alone: each friend is tested against the few blocked
 * accounts (users_banned) rather than by reading their row.
 */
export async function friendsPage(db: Database, userId: number, window: PageWindow): Promise<IdPage> {
  const listed = db.kysely
    .selectFrom('friendships as f')
    .where('f.user_id', '=', userId)
    .where('f.friend_id', 'not in', (eb) => eb.selectFrom('users').select('user_id').where('global_ban', '=', BANNED));
  const { n } = await listed.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const total = Number(n);
  if (outside(total, window)) return { total, ids: [] };
  const page = await listed
    .select('f.friend_id')
    .orderBy('f.since', 'desc')
    .orderBy('f.friend_id', 'desc')
    .limit(window.count)
    .offset(window.offset)
    .execute();
  return { total, ids: page.map((r) => r.friend_id) };
}

/** The friend requests a user received from accounts not globally blocked (which take no part in the social graph). */
const incomingRequests = (db: Database, userId: number) =>
  db.kysely
    .selectFrom('friend_requests as r')
    .innerJoin('users as u', 'u.user_id', 'r.from_user_id')
    .where('r.to_user_id', '=', userId)
    .where('u.global_ban', '=', NOT_BANNED);

/** A page of the friend requests a user received from accounts not globally blocked, newest first. */
export async function incomingRequestsPage(db: Database, userId: number, window: PageWindow): Promise<IdPage> {
  const base = incomingRequests(db, userId);
  const { n } = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const total = Number(n);
  if (outside(total, window)) return { total, ids: [] };
  const page = await base
    .select('r.from_user_id')
    .orderBy('r.ts', 'desc')
    .orderBy('r.from_user_id', 'desc')
    .limit(window.count)
    .offset(window.offset)
    .execute();
  return { total, ids: page.map((r) => r.from_user_id) };
}

/** How many friend requests wait for a user's answer, as friends.getRequests counts them. */
export async function incomingRequestCount(db: Database, userId: number): Promise<number> {
  const row = await incomingRequests(db, userId)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** A page of the accounts not globally blocked that a user has put on their block list, newest block first. */
export async function blockedPage(db: Database, userId: number, window: PageWindow): Promise<IdPage> {
  const base = db.kysely
    .selectFrom('blocks as b')
    .innerJoin('users as u', 'u.user_id', 'b.blocked_user_id')
    .where('b.user_id', '=', userId)
    .where('u.global_ban', '=', NOT_BANNED);
  const { n } = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const total = Number(n);
  if (outside(total, window)) return { total, ids: [] };
  const page = await base
    .select('b.blocked_user_id')
    .orderBy('b.ts', 'desc')
    .orderBy('b.blocked_user_id', 'desc')
    .limit(window.count)
    .offset(window.offset)
    .execute();
  return { total, ids: page.map((r) => r.blocked_user_id) };
}

/** Ids of globally blocked accounts, at most `limit`. */
export async function bannedIds(db: Database, limit: number): Promise<number[]> {
  const rows = await db.kysely.selectFrom('users').select('user_id').where('global_ban', '=', BANNED).limit(limit).execute();
  return rows.map((r) => Number(r.user_id));
}

/**
 * The relation rows between a viewer and others (all others when `ids` is undefined), as
 * (other user, kind) with kind 1..5 as in `Friendship`. One query.
 */
export async function relationRows(
  executor: Executor,
  viewerId: number,
  ids?: number[],
  limit?: number,
): Promise<{ id: number; kind: number }[]> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a constraint on Kysely's builders, whose method signatures are generic
  const among = <Q extends { where: (...args: any[]) => Q }>(query: Q, column: string): Q => (ids ? query.where(column, 'in', ids) : query);
  let query = among(
    executor
      .selectFrom('friendships')
      .select(['friend_id as id', sql<number>`1`.as('kind')])
      .where('user_id', '=', viewerId),
    'friend_id',
  )
    .unionAll((eb) =>
      among(
        eb
          .selectFrom('friend_requests')
          .select(['to_user_id as id', sql<number>`2`.as('kind')])
          .where('from_user_id', '=', viewerId),
        'to_user_id',
      ),
    )
    .unionAll((eb) =>
      among(
        eb
          .selectFrom('friend_requests')
          .select(['from_user_id as id', sql<number>`3`.as('kind')])
          .where('to_user_id', '=', viewerId),
        'from_user_id',
      ),
    )
    .unionAll((eb) =>
      among(
        eb
          .selectFrom('blocks')
          .select(['blocked_user_id as id', sql<number>`4`.as('kind')])
          .where('user_id', '=', viewerId),
        'blocked_user_id',
      ),
    )
    .unionAll((eb) =>
      among(
        eb
          .selectFrom('blocks')
          .select(['user_id as id', sql<number>`5`.as('kind')])
          .where('blocked_user_id', '=', viewerId),
        'user_id',
      ),
    );
  if (limit !== undefined) query = query.limit(limit);
  const rows = await query.execute();
  return rows.map((r) => ({ id: Number(r.id), kind: Number(r.kind) }));
}

/** A user's friends in friends.get order (newest friendship first, ties: higher id first), at most `limit`, blocked accounts included. */
export async function friendIdsByAge(db: Database, userId: number, limit: number): Promise<number[]> {
  const rows = await db.kysely
    .selectFrom('friendships')
    .select('friend_id')
    .where('user_id', '=', userId)
    .orderBy('since', 'desc')
    .orderBy('friend_id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => Number(r.friend_id));
}

/** Drops the friend requests between two users, both ways; how many there were. */
export async function deleteRequests(trx: Executor, a: number, b: number): Promise<number> {
  const result = await trx
    .deleteFrom('friend_requests')
    .where((eb) =>
      eb.or([
        eb.and([eb('from_user_id', '=', a), eb('to_user_id', '=', b)]),
        eb.and([eb('from_user_id', '=', b), eb('to_user_id', '=', a)]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Ends the friendship of two users (both directions); how many rows there were. */
export async function deleteFriendship(trx: Executor, a: number, b: number): Promise<number> {
  const result = await trx
    .deleteFrom('friendships')
    .where((eb) =>
      eb.or([eb.and([eb('user_id', '=', a), eb('friend_id', '=', b)]), eb.and([eb('user_id', '=', b), eb('friend_id', '=', a)])]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Drops the blocks between two users, both ways. */
export async function deleteBlocks(trx: Executor, a: number, b: number): Promise<void> {
  await trx
    .deleteFrom('blocks')
    .where((eb) =>
      eb.or([
        eb.and([eb('user_id', '=', a), eb('blocked_user_id', '=', b)]),
        eb.and([eb('user_id', '=', b), eb('blocked_user_id', '=', a)]),
      ]),
    )
    .execute();
}

/** The friendship of two users, stored in both directions (nothing when it is). */
export async function insertFriendshipPair(trx: Executor, a: number, b: number, now: number): Promise<void> {
  await trx
    .insertInto('friendships')
    .values([
      { user_id: a, friend_id: b, since: now },
      { user_id: b, friend_id: a, since: now },
    ])
    .onConflict((oc) => oc.columns(['user_id', 'friend_id']).doNothing())
    .execute();
}

/** A friend request (nothing when there is one). */
export async function insertFriendRequest(trx: Executor, from: number, to: number, now: number): Promise<void> {
  await trx
    .insertInto('friend_requests')
    .values({ from_user_id: from, to_user_id: to, ts: now })
    .onConflict((oc) => oc.columns(['from_user_id', 'to_user_id']).doNothing())
    .execute();
}

/** `userId` blocks `blockedId`; false when the block was there already. */
export async function insertBlock(trx: Executor, userId: number, blockedId: number, now: number): Promise<boolean> {
  const result = await trx
    .insertInto('blocks')
    .values({ user_id: userId, blocked_user_id: blockedId, ts: now })
    .onConflict((oc) => oc.columns(['user_id', 'blocked_user_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Lifts `userId`'s block of `blockedId`; false when there was none. */
export async function deleteBlock(trx: Executor, userId: number, blockedId: number): Promise<boolean> {
  const result = await trx.deleteFrom('blocks').where('user_id', '=', userId).where('blocked_user_id', '=', blockedId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
