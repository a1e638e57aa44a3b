import { Type } from '@sinclair/typebox';
import { SerializedList, defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { ApiError, Code, authError } from '../api/errors.js';
import { Strict, Uint } from '../api/schema-types.js';
import type { Services } from '../services.js';
import { UserEither, UserRelated } from '../users/schemas.js';
import { loadUsers } from '../users/profiles.js';
import { addFriendRequest, removeRelation } from './graph.js';
import { Friendship, cachedRelations } from './relations.js';
import { BANNED, NOT_BANNED } from './banned-users.js';
import { formOf, pagingParams, profilesInOrder, profileTextsInOrder } from './lists.js';
import { requireUser } from '../users/profiles.js';

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
      throw new ApiError(Code.FORBIDDEN, 'you have put this user on your block list; remove them from it first (blacklist.delete)');
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
    const rows = await services.db.kysely
      .selectFrom('friendships as f')
      .innerJoin('users as u', 'u.user_id', 'f.friend_id')
      .where('f.user_id', '=', userId)
      .where('u.global_ban', '=', NOT_BANNED)
      .select(['f.friend_id as user_id', 'u.last_seen', 'u.always_online'])
      .orderBy('f.since', 'desc')
      .orderBy('f.friend_id', 'desc')
      .execute();
    const online = rows.filter((r) => services.presence.isOnline(r)).map((r) => r.user_id);
    return { total: online.length, ids: online.slice(options.offset, options.offset + options.count) };
  }
  const fromMemory = await friendsFromMemory(services, userId);
  if (fromMemory !== undefined) return { total: fromMemory.length, ids: fromMemory.slice(options.offset, options.offset + options.count) };
  // Counted and paged from the friendships index alone: each friend is tested against the
  // few blocked accounts (users_banned) rather than by reading their row.
  const listed = services.db.kysely
    .selectFrom('friendships as f')
    .where('f.user_id', '=', userId)
    .where('f.friend_id', 'not in', (eb) => eb.selectFrom('users').select('user_id').where('global_ban', '=', BANNED));
  const { n } = await listed.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const total = Number(n);
  if (options.count === 0 || options.offset >= total) return { total, ids: [] };
  const page = await listed
    .select('f.friend_id')
    .orderBy('f.since', 'desc')
    .orderBy('f.friend_id', 'desc')
    .limit(options.count)
    .offset(options.offset)
    .execute();
  return { total, ids: page.map((r) => r.friend_id) };
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
      const user = (await loadUsers(services, [userId], { form, viewerId: caller?.userId })).get(userId);
      if (user) close += `,"user":${JSON.stringify(user)}`;
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
    const base = services.db.kysely
      .selectFrom('friend_requests as r')
      .innerJoin('users as u', 'u.user_id', 'r.from_user_id')
      .where('r.to_user_id', '=', caller.userId)
      .where('u.global_ban', '=', NOT_BANNED);
    const { n } = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const total = Number(n);
    const offset = params.offset!;
    const count = params.count!;
    if (count === 0 || offset >= total) return { count: total, requests: [] };
    const page = await base
      .select('r.from_user_id')
      .orderBy('r.ts', 'desc')
      .orderBy('r.from_user_id', 'desc')
      .limit(count)
      .offset(offset)
      .execute();
    const users = await profilesInOrder(
      services,
      page.map((r) => r.from_user_id),
      formOf(params.type),
    );
    return { count: total, requests: users.map((user) => ({ ...user, friendship: Friendship.INCOMING_REQUEST })) };
  },
});
