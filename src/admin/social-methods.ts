import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { ApiError, Code, badParam } from '../api/errors.js';
import type { Services } from '../services.js';
import type { InTransaction } from '../db/connection.js';
import { addFriendRequest, blockUser, friendshipValues, makeFriends, removeRelation, unblockUser } from '../friends/index.js';
import { requireUser } from '../users/index.js';
import { endingOpenTrades } from '../trades/index.js';
import { RelationResult } from './schemas.js';

type Change = (services: Services, userId: number, otherUserId: number, inTransaction: InTransaction) => Promise<unknown>;

/** An admin method that changes the relation between two existing, different users and answers the relation afterwards. */
function relationMethod(
  name: string,
  summary: string,
  description: string,
  change: Change,
  extraErrors: Record<number, string> = {},
): AnyMethod {
  return defineMethod({
    auth: 'admin',
    extension: true,
    name,
    summary,
    description,
    params: P.object({
      user_id: P.idOrDomain({ description: 'id or domain of the first user' }),
      other_user_id: P.idOrDomain({ description: 'id or domain of the second user' }),
    }),
    result: RelationResult,
    errors: { 101: 'one of the users does not exist', ...extraErrors },
    handler: async ({ services, inTransaction }, params) => {
      const userId = await requireUser(services, params.user_id, { parameter: 'user_id' });
      const otherUserId = await requireUser(services, params.other_user_id, { parameter: 'other_user_id' });
      if (userId === otherUserId) throw badParam('other_user_id', 'must be another user than user_id');
      await change(services, userId, otherUserId, inTransaction);
      const relation = await friendshipValues(services, userId, [otherUserId]);
      return { user_id: userId, other_user_id: otherUserId, friendship: relation.get(otherUserId) ?? 0 };
    },
  });
}

async function requestFriendship(services: Services, from: number, to: number, inTransaction: InTransaction): Promise<void> {
  await addFriendRequest(services, from, to, inTransaction, (outcome) => {
    if (outcome === 'blocked_by_target') throw new ApiError(Code.BLOCKED_BY_USER, `user ${to} has blocked user ${from}`);
    if (outcome === 'blocking_target') throw badParam('user_id', `user ${from} blocks user ${to}: unblock first`);
  });
}

export const socialMethods: AnyMethod[] = [
  relationMethod(
    'admin.makeFriends',
    'Make two users friends',
    'Pending requests and blocks between them are dropped: a friendship and a block never exist together.',
    makeFriends,
  ),
  relationMethod(
    'admin.endFriendship',
    'End the friendship of two users, or cancel the requests between them',
    'Removes the friendship and the friend requests in both directions; blocks stay.',
    removeRelation,
  ),
  relationMethod(
    'admin.addFriendRequest',
    'Send a friend request from user_id to other_user_id',
    'As friends.add does: when other_user_id had already asked user_id, they become friends; already friends or already asked changes nothing. A block stops it: 107 when other_user_id blocks user_id, 2 when user_id blocks other_user_id.',
    requestFriendship,
    { 107: 'other_user_id has put user_id on their block list' },
  ),
  relationMethod(
    'admin.block',
    'Put other_user_id on the block list of user_id',
    'Ends their friendship and requests, and makes their open trades with each other invalid (4); friends.add from the blocked user answers 107.',
    (services, userId, otherUserId, inTransaction) =>
      endingOpenTrades(services, inTransaction, { userId, partnerId: otherUserId }, (blocking) =>
        blockUser(services, userId, otherUserId, blocking),
      ),
  ),
  relationMethod('admin.unblock', 'Take other_user_id off the block list of user_id', 'A block the other user made stays.', unblockUser),
];
