import { Type } from '@sinclair/typebox';
import { SerializedList, defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { ApiError, Code, authError } from '../api/errors.js';
import { Strict, Uint } from '../api/schema-types.js';
import type { Services } from '../services.js';
import { formOf, pagingParams, profilesInOrder, profileTextsInOrder, requireUser, UserEither, UserRelated } from '../users/index.js';
import { addFriendRequest, removeRelation } from './graph.js';
import { Friendship, cachedRelations } from './relations.js';
import { friendsPage, friendsWithPresence, incomingRequestsPage } from './queries.js';

export const friendsAdd = defineMethod({
  name: 'friends.add',
  summary: 'Sends a friend request to a user, or accepts the incoming request from that user',
  description:
    'Already friends or already requested: success, nothing changes. Two users asking each other at the same moment ' +
    'end up friends. Code 4 while the caller has blocked the user (unblock first); 2 for oneself.',
  auth: 'required',
  bots: true,
  params: P.object({ user_id: P.idOrDomain({ description: 'id (or domain) of the user' }) }),
  errors: {
    4: 'the caller has put the user on their block list (remove them from it first)',
    101: 'user does not exist',
    107: 'the user has put the caller on a block list',
  },
  handler: async (ctx, params) => {
    const target = await requireUser(ctx.services, params.user_id, { active: true });
    if (target === ctx.caller.userId) throw new ApiError(Code.BAD_PARAM, 'parameter user_id: you cannot befriend yourself');
    const outcome = await addFriendRequest(ctx.services, ctx.caller.userId, target);
    if (outcome === 'blocked_by_target') throw new ApiError(Code.BLOCKED_BY_USER, 'the user has put you on their block list');
    if (outcome === 'blocking_target')
      throw new ApiError(Code.FORBIDDEN, 'you have put this user on your block list; remove them from it first (blacklist.remove)');
    return undefined;
  },
});

export const friendsDelete = defineMethod({
  name: 'friends.delete',
  summary: 'Removes a user from friends, or declines or withdraws a friend request',
  description: 'No friendship or request between the two: success, nothing changes. 2 for oneself.',
  auth: 'required',
  bots: true,
  params: P.object({ user_id: P.idOrDomain({ description: 'id (or domain) of the user' }) }),
  errors: { 101: 'user does not exist' },
  handler: async (ctx, params) => {
    const target = await requireUser(ctx.services, params.user_id, { active: false });
    if (target === ctx.caller.userId) throw new ApiError(Code.BAD_PARAM, 'parameter user_id: you cannot unfriend yourself');
    await removeRelation(ctx.services, ctx.caller.userId, target);
    return undefined;
  },
});

/** The user's friends in list order without blocked accounts, from the caches; undefined when not cached. */
async function friendsFromMemory(services: Services, userId: number): Promise<number[] | undefined> {
  const banned = await services.friends.bannedUsers?.ids(services);
  if (banned === undefined) return undefined;
  const relations = await cachedRelations(services, userId);
  if (relations === undefined) return undefined;
  return banned.size === 0 ? relations.friendsByAge : relations.friendsByAge.filter((id) => !banned.has(id));
}

/** Friends of a user, newest friendship first (ties: higher id first), globally blocked accounts left out. */
async function friendPage(services: Services, userId: number, options: { online: boolean; offset: number; count: number }) {
  if (options.online) {
    // Who is online depends on this process's realtime connections and recent requests, so
    // the filter runs here, over the whole (bounded by people's social lives) friend list.
    const rows = await friendsWithPresence(services.db, userId);
    const online = rows.filter((r) => services.presence.isOnline(r)).map((r) => r.user_id);
    return { total: online.length, ids: online.slice(options.offset, options.offset + options.count) };
  }
  const fromMemory = await friendsFromMemory(services, userId);
  if (fromMemory !== undefined) return { total: fromMemory.length, ids: fromMemory.slice(options.offset, options.offset + options.count) };
  return friendsPage(services.db, userId, options);
}

/** A page of the user's friends as friends.get answers it (`{"count":…,"friends":[…]}`), their profiles as the viewer sees them. */
export async function friendsJson(
  services: Services,
  userId: number,
  viewerId: number | undefined,
  options: { online: boolean; offset: number; count: number },
): Promise<string> {
  const { total, ids } = await friendPage(services, userId, options);
  const friends = await profileTextsInOrder(services, ids, 'short', viewerId);
  return `{"count":${total},"friends":[${friends.join(',')}]}`;
}

export const friendsGet = defineMethod({
  name: 'friends.get',
  summary: "Lists a user's friends",
  description:
    'Friends in order of friendship age, newest first. `count` is the total number of friends (with `online=1`, of ' +
    "friends online). Without `user_id`, the signed-in caller's friends.",
  auth: 'optional',
  params: P.object({
    user_id: P.optional(P.idOrDomain({ description: 'id or domain of the user; default is the caller' })),
    online: P.optional(P.bit({ default: 0, description: 'return only friends currently online' })),
    add_user: P.optional(P.bit({ default: 0, description: 'also return the user' })),
    ...pagingParams,
  }),
  result: Type.Object({ count: Uint, friends: Type.Array(UserEither), user: Type.Optional(UserEither) }, Strict),
  errors: { 101: 'user does not exist' },
  handler: async (ctx, params) => {
    const { services, caller } = ctx;
    let userId: number;
    if (params.user_id !== undefined) userId = await requireUser(services, params.user_id, { active: true });
    else if (caller) userId = caller.userId;
    else throw authError('authorization required: send an access_token or a user_id');
    const form = formOf(params.type);
    const { total, ids } = await friendPage(services, userId, {
      online: params.online === 1,
      offset: params.offset!,
      count: params.count!,
    });
    const friends = await profileTextsInOrder(services, ids, form, caller?.userId);
    let close = ']';
    if (params.add_user === 1) {
      const [user] = await profileTextsInOrder(services, [userId], form, caller?.userId);
      if (user !== undefined) close += `,"user":${user}`;
    }
    return new SerializedList(friends, `{"count":${total},"friends":[`, `${close}}`);
  },
});

export const friendsGetRequests = defineMethod({
  name: 'friends.getRequests',
  summary: 'Lists the friend requests the caller has received',
  description: 'Incoming requests, newest first; each user carries `friendship: 3`. `count` is the total number of requests.',
  auth: 'required',
  bots: true,
  params: P.object({ ...pagingParams }),
  result: Type.Object({ count: Uint, requests: Type.Array(UserRelated) }, Strict),
  handler: async (ctx, params) => {
    const { services, caller } = ctx;
    const { total, ids } = await incomingRequestsPage(services.db, caller.userId, { offset: params.offset!, count: params.count! });
    if (ids.length === 0) return { count: total, requests: [] };
    const users = await profilesInOrder(services, ids, formOf(params.type));
    return { count: total, requests: users.map((user) => ({ ...user, friendship: Friendship.INCOMING_REQUEST })) };
  },
});
