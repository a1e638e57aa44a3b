import { Type } from '@sinclair/typebox';
import { One, Strict, Uint } from '../api/schema-types.js';
import { Rank } from './rank.js';

const FriendshipValue = Type.Integer({
  minimum: 0,
  maximum: 6,
  description:
    "the caller's relation: 0 none, 1 friends, 2 outgoing request, 3 incoming request, 4 caller blocked them, 5 they blocked caller, 6 both",
});

const shortFields = {
  user_id: Uint,
  domain: Type.Optional(Type.String()),
  approved: Type.Optional(One),
  nick: Type.String(),
  gender: Type.Union([Type.Literal(0), Type.Literal(1)]),
  avatar: Type.String(),
  avatar_key: Type.Optional(Type.String()),
  online: Type.Optional(One),
  rank: Type.Optional(Rank),
  vip: Type.Optional(One),
  bot: Type.Optional(One),
  bot_owner: Type.Optional(Uint),
  moderator: Type.Optional(One),
  superadmin: Type.Optional(One),
  current_game: Type.Optional(
    Type.Object(
      { gs_id: Type.String({ description: 'the game server' }), gs_game_id: Type.String({ description: 'the game, as text' }) },
      { ...Strict, description: 'the live game the user plays (games.getReplay’s game_id is gs_game_id)' },
    ),
  ),
};

export const UserShort = Type.Object(shortFields, { ...Strict, $id: 'UserShort', description: 'A user in the short form' });

export const UserFull = Type.Object(
  {
    ...shortFields,
    nicks_old: Type.Array(Type.String()),
    profile_cover: Type.Optional(Type.String()),
    games: Uint,
    games_wins: Uint,
    xp: Uint,
    xp_level: Uint,
    friendship: Type.Optional(FriendshipValue),
    muted: Type.Optional(One),
  },
  { ...Strict, $id: 'UserFull', description: 'A user in the full form' },
);

/** What users.get answers in place of an unknown or globally blocked account. */
export const UserInactive = Type.Object(
  {
    user_id: Type.Optional(Uint),
    domain: Type.Optional(Type.String()),
    nick: Type.String(),
    avatar: Type.String(),
    avatar_key: Type.String({ description: 'empty: the default picture, as avatar' }),
    inactive: Type.Union([Type.Literal('not_exists'), Type.Literal('global_ban')]),
  },
  { ...Strict, $id: 'UserInactive' },
);

/** users.get answers one of these per requested user. */
export const UserAny = Type.Union([UserFull, UserShort, UserInactive]);

/** A user in the short form that also carries the caller's relation (request and block lists). */
export const UserShortRelated = Type.Object(
  { ...shortFields, friendship: FriendshipValue },
  { ...Strict, $id: 'UserShortRelated', description: "A user in the short form with the caller's relation" },
);

/** A user in a list of the caller's own relations: full form, or short form plus `friendship`. */
export const UserRelated = Type.Union([UserFull, UserShortRelated]);

/** A user in the form a `type` parameter chose. */
export const UserEither = Type.Union([UserFull, UserShort]);
