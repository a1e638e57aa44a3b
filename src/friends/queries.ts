import type { Database } from '../db/connection.js';
import { BANNED, NOT_BANNED } from './banned-users.js';

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

/** A page of the friend requests a user received from accounts not globally blocked, newest first. */
export async function incomingRequestsPage(db: Database, userId: number, window: PageWindow): Promise<IdPage> {
  const base = db.kysely
    .selectFrom('friend_requests as r')
    .innerJoin('users as u', 'u.user_id', 'r.from_user_id')
    .where('r.to_user_id', '=', userId)
    .where('u.global_ban', '=', NOT_BANNED);
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

/** How many friend requests wait for a user's answer (from anyone). */
export async function incomingRequestCount(db: Database, userId: number): Promise<number> {
  const row = await db.kysely
    .selectFrom('friend_requests')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('to_user_id', '=', userId)
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
