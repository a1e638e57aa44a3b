import { Type } from '@sinclair/typebox';
import { defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { ApiError, Code } from '../api/errors.js';
import { Strict, Uint } from '../api/schema-types.js';
import { formOf, pagingParams, profilesInOrder, requireUser, UserRelated } from '../users/index.js';
import { blockUser, unblockUser } from './graph.js';
import { friendshipLookup } from './relations.js';
import { blockedPage } from './queries.js';
import { ownTransaction } from '../db/connection.js';

/*
 * Block lists under the reference service's names (blacklist.get / add / remove); our earlier
 * blacklist.delete stays as an alias of blacklist.remove. A block ends any friendship or
 * friend request between the two users; the blocked user's friends.add answers 107, and the
 * blocker's own friends.add answers 4 until they unblock.
 */

export const blacklistAdd = defineMethod({
  name: 'blacklist.add',
  summary: "Puts a user on the caller's block list",
  description:
    'Ends any friendship or friend request between the two, and makes their open trades with each other invalid (4). Already blocked: success. 2 for oneself.',
  auth: 'required',
  params: P.object({ user_id: P.idOrDomain({ description: 'id (or domain) of the user' }) }),
  errors: { 101: 'user does not exist' },
  handler: async ({ services, caller }, params) => {
    const target = await requireUser(services, params.user_id, { active: false });
    if (target === caller.userId) throw new ApiError(Code.BAD_PARAM, 'parameter user_id: you cannot block yourself');
    await services.hooks.friends.endingTradesBetween(
      services,
      ownTransaction(services.db),
      { userId: caller.userId, partnerId: target },
      (blocking) => blockUser(services, caller.userId, target, blocking),
    );
    return undefined;
  },
});

function blacklistRemoveAs(name: string, extension: boolean, summary: string) {
  return defineMethod({
    name,
    summary,
    description: 'Not blocked: success. A block the other user has put on the caller stays.',
    auth: 'required',
    ...(extension ? { extension } : {}),
    params: P.object({ user_id: P.idOrDomain({ description: 'id (or domain) of the user' }) }),
    errors: { 101: 'user does not exist' },
    handler: async (ctx, params) => {
      const target = await requireUser(ctx.services, params.user_id, { active: false });
      if (target === ctx.caller.userId) throw new ApiError(Code.BAD_PARAM, 'parameter user_id: you cannot unblock yourself');
      await unblockUser(ctx.services, ctx.caller.userId, target);
      return undefined;
    },
  });
}

export const blacklistRemove = blacklistRemoveAs('blacklist.remove', false, "Removes a user from the caller's block list");
export const blacklistDelete = blacklistRemoveAs('blacklist.delete', true, 'blacklist.remove under its earlier name');

export const blacklistGet = defineMethod({
  name: 'blacklist.get',
  summary: 'Lists the users the caller has blocked',
  description: 'Newest block first; each user carries `friendship` 4 (or 6 when they blocked the caller too). `count` is the total.',
  auth: 'required',
  params: P.object({ ...pagingParams }),
  result: Type.Object({ count: Uint, users: Type.Array(UserRelated) }, Strict),
  handler: async (ctx, params) => {
    const { services, caller } = ctx;
    const { total, ids } = await blockedPage(services.db, caller.userId, { offset: params.offset!, count: params.count! });
    if (ids.length === 0) return { count: total, users: [] };
    if (formOf(params.type) === 'full') return { count: total, users: await profilesInOrder(services, ids, 'full', caller.userId) };
    const friendshipOf = await friendshipLookup(services, caller.userId, ids);
    const users = (await profilesInOrder(services, ids, 'short')).map((user) => ({ ...user, friendship: friendshipOf(user.user_id) }));
    return { count: total, users };
  },
});
