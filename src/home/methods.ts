import { Type } from '@sinclair/typebox';
import { defineMethod, SerializedData, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Bit, Strict, Uint } from '../api/schema-types.js';
import { GchatGetResult } from '../chat/index.js';
import { friendsJson } from '../friends/index.js';
import { Mission, missionsOf, seasonPassOf, TopEntry, topWeekOf } from '../missions/index.js';
import { lobbyOf, RoomList } from '../rooms/index.js';
import { profileTextsInOrder, requireUser, UserEither, UserFull } from '../users/index.js';

/** Rooms the home screen lists, and friends online it shows. */
export const HOME_ROOMS = 50;
export const HOME_FRIENDS = 20;

const HomeScreen = Type.Object(
  {
    friends: Type.Object(
      { count: Uint, friends: Type.Array(UserEither) },
      { ...Strict, description: 'the caller’s friends online (friends.get online=1)' },
    ),
    gchat: GchatGetResult,
    missions: Type.Array(Mission, { description: 'as missions.get answers them; none without a caller' }),
    rooms: Type.Omit(RoomList, ['count'], { description: 'the lobby, as rooms.get lists it' }),
    seasonpass: Type.Integer({
      minimum: 0,
      description: 'the level of the caller’s pass of the season (seasonpass.get); 0 without a caller',
    }),
    top_week: Type.Object({ top: TopEntry }, { ...Strict, description: 'the caller’s place in the week’s top (users.getTopWeek)' }),
    blog: Type.Object({ posts: Type.Array(Type.Never()) }, { ...Strict, description: 'none: this server has no blog' }),
    streams: Type.Array(Type.Never(), { description: 'none: this server lists no streams' }),
    gm_shuffle: Type.Object({}, { ...Strict, description: 'none: this server has no shuffle game mode' }),
    is_vip_free_allowed: Bit,
  },
  Strict,
);

export const homeMethods: AnyMethod[] = [
  defineMethod({
    name: 'execute.games',
    summary: 'The home screen in one call',
    description:
      'Answers `{ "code": 0, "result": { … } }` (under `result`, as the execute.* methods answer): the caller’s friends online, the global chat ' +
      '(gchat.get), the week’s missions (missions.get), the lobby (rooms.get: `rooms` and `users_data`), the level of the season’s pass ' +
      '(seasonpass.get), the caller’s place in the week’s top (users.getTopWeek), and what this server does not have, empty: `blog`, ' +
      '`streams`, `gm_shuffle`, `is_vip_free_allowed` 0. Without a token (or with `logged_in` 0), the parts of a caller are empty.',
    auth: 'optional',
    resultKey: 'result',
    params: P.object({ logged_in: P.optional(P.bit({ default: 1, description: '0: answer as to a visitor' })) }),
    result: HomeScreen,
    handler: async ({ services, caller }, params) => {
      const userId = params.logged_in === 0 ? undefined : caller?.userId;
      const [friends, gchat, missions, lobby, pass, top] = await Promise.all([
        userId === undefined
          ? '{"count":0,"friends":[]}'
          : friendsJson(services, userId, userId, { online: true, offset: 0, count: HOME_FRIENDS }),
        services.chat.answerData(),
        userId === undefined ? [] : missionsOf(services, userId),
        lobbyOf(services, userId, 0, HOME_ROOMS),
        seasonPassOf(services, userId),
        topWeekOf(services, userId),
      ]);
      const rooms = { rooms: lobby.rooms, users_data: lobby.users_data };
      return new SerializedData(
        `{"friends":${friends},"gchat":${gchat.json},"missions":${JSON.stringify(missions)},"rooms":${JSON.stringify(rooms)},` +
          `"seasonpass":${pass.level},"top_week":${JSON.stringify({ top })},"blog":{"posts":[]},"streams":[],"gm_shuffle":{},"is_vip_free_allowed":0}`,
      );
    },
  }),

  defineMethod({
    name: 'execute.profile',
    summary: "A user's profile page",
    description:
      'Answers `{ "code": 0, "result": { "user": { … } } }` (under `result`, as the execute.* methods answer): the user’s full profile as ' +
      'users.get answers it, with `games`, `games_wins`, `xp` and `xp_level`.',
    auth: 'optional',
    resultKey: 'result',
    params: P.object({ user_id: P.idOrDomain({ description: 'id or domain of the user' }) }),
    result: Type.Object({ user: Type.Union([UserFull, UserEither]) }, Strict),
    errors: { 101: 'user does not exist' },
    handler: async ({ services, caller }, params) => {
      const userId = await requireUser(services, params.user_id);
      const [user] = await profileTextsInOrder(services, [userId], 'full', caller?.userId);
      return new SerializedData(`{"user":${user}}`);
    },
  }),
];
