import type { Services } from '../services.js';
import { nowSeconds } from '../services.js';
import { ownTransaction, type Executor, type InTransaction } from '../db/connection.js';
import { dialectAdapter } from '../db/dialect.js';
import { ApiError, Code } from '../api/errors.js';
import { Friendship, friendshipValuesWith } from './relations.js';
import { announceRelationsChanged } from './relation-cache.js';
import {
  deleteBlock,
  deleteBlocks,
  deleteFriendship,
  deleteRequests,
  insertBlock,
  insertFriendRequest,
  insertFriendshipPair,
} from './queries.js';

/**
 * Every change to the social graph between two users. Each function runs one transaction
 * that first locks both users' rows in id order (PostgreSQL; SQLite runs one transaction at
 * a time), so any two operations on the same pair happen one after the other and see each
 * other's result. Friendships are stored in both directions and always written and removed
 * as a pair.
 */

export type FriendRequestOutcome =
  | 'requested'
  | 'accepted'
  | 'already_friends'
  | 'already_requested'
  /** the target has blocked the sender */
  | 'blocked_by_target'
  /** the sender has blocked the target */
  | 'blocking_target';

function requireTwoUsers(a: number, b: number): void {
  if (a === b) throw new ApiError(Code.BAD_PARAM, 'parameter user_id: a user cannot be their own friend or block themselves');
}

/** Runs `work` with both users locked, then announces the pair's change to every process. */
async function withPairLocked<T>(
  services: Services,
  a: number,
  b: number,
  inTransaction: InTransaction,
  work: (trx: Executor, now: number) => Promise<T>,
): Promise<T> {
  requireTwoUsers(a, b);
  const now = nowSeconds(services);
  try {
    return await inTransaction(async (trx) => {
      await dialectAdapter.lockUsers(trx, services.db.dialect, [a, b]);
      return work(trx, now);
    });
  } finally {
    // Announced whatever the outcome: a transaction that failed at commit may still have
    // been applied, and a needless announcement only costs a reload.
    await announceRelationsChanged(services, [a, b]);
  }
}

async function insertFriendship(trx: Executor, a: number, b: number, now: number): Promise<void> {
  await deleteRequests(trx, a, b);
  await insertFriendshipPair(trx, a, b, now);
}

/**
 * Makes two users friends at once (operators, world tools). Pending requests between them are
 * dropped, and so are blocks: a friendship and a block never exist together. Returns false
 * when they already were friends.
 */
export async function makeFriends(services: Services, a: number, b: number, inTransaction = ownTransaction(services.db)): Promise<boolean> {
  return withPairLocked(services, a, b, inTransaction, async (trx, now) => {
    const relation = (await friendshipValuesWith(trx, a, [b])).get(b);
    if (relation === Friendship.FRIENDS) return false;
    await deleteBlocks(trx, a, b);
    await insertFriendship(trx, a, b, now);
    return true;
  });
}

/**
 * What friends.add does: sends a friend request from `from` to `to`, or accepts the one `to`
 * already sent. Already friends or already requested changes nothing. Blocks either way stop
 * it (see the outcome). Two users asking each other at the same moment end up friends: the
 * second of the two transactions finds the first one's request and accepts it. `refuse` may
 * throw for an outcome inside the transaction, so that whatever the transaction shares
 * (an admin action's audit entry) is not committed either.
 */
export async function addFriendRequest(
  services: Services,
  from: number,
  to: number,
  inTransaction = ownTransaction(services.db),
  refuse: (outcome: FriendRequestOutcome) => void = () => undefined,
): Promise<FriendRequestOutcome> {
  return withPairLocked(services, from, to, inTransaction, async (trx, now) => {
    const outcome = await requestFriendshipIn(trx, from, to, now);
    refuse(outcome);
    return outcome;
  });
}

async function requestFriendshipIn(trx: Executor, from: number, to: number, now: number): Promise<FriendRequestOutcome> {
  const relation = (await friendshipValuesWith(trx, from, [to])).get(to);
  switch (relation) {
    case Friendship.THEY_BLOCKED_VIEWER:
    case Friendship.BOTH_BLOCKED:
      return 'blocked_by_target';
    case Friendship.VIEWER_BLOCKED_THEM:
      return 'blocking_target';
    case Friendship.FRIENDS:
      return 'already_friends';
    case Friendship.OUTGOING_REQUEST:
      return 'already_requested';
    case Friendship.INCOMING_REQUEST:
      await insertFriendship(trx, from, to, now);
      return 'accepted';
    default:
      await insertFriendRequest(trx, from, to, now);
      return 'requested';
  }
}

/**
 * Ends a friendship and drops friend requests in both directions (friends.delete: remove a
 * friend, decline an incoming request, withdraw an outgoing one). Returns whether there was
 * anything to remove.
 */
export async function removeRelation(
  services: Services,
  a: number,
  b: number,
  inTransaction = ownTransaction(services.db),
): Promise<boolean> {
  return withPairLocked(services, a, b, inTransaction, async (trx) => {
    const removed = (await deleteFriendship(trx, a, b)) + (await deleteRequests(trx, a, b));
    return removed > 0;
  });
}

/** `userId` blocks `blockedId`: any friendship or request between them ends. Returns false when already blocked. */
export async function blockUser(
  services: Services,
  userId: number,
  blockedId: number,
  inTransaction = ownTransaction(services.db),
): Promise<boolean> {
  return withPairLocked(services, userId, blockedId, inTransaction, async (trx, now) => {
    await deleteFriendship(trx, userId, blockedId);
    await deleteRequests(trx, userId, blockedId);
    return insertBlock(trx, userId, blockedId, now);
  });
}

/** `userId` lifts their block of `blockedId` (a block the other way stays). Returns false when there was none. */
export async function unblockUser(
  services: Services,
  userId: number,
  blockedId: number,
  inTransaction = ownTransaction(services.db),
): Promise<boolean> {
  return withPairLocked(services, userId, blockedId, inTransaction, async (trx) => {
    return deleteBlock(trx, userId, blockedId);
  });
}
