import { Type } from '@sinclair/typebox';
import { Strict, Uint } from '../api/schema-types.js';
import { UserShort } from '../users/index.js';

const Flag = Type.Integer({ minimum: 0, maximum: 1 });
const UserId = Type.Integer();

export const Room = Type.Object(
  {
    room_id: Type.String({ description: 'the room’s id, as text' }),
    status: Type.Integer({ description: '0 waiting for players, 1 started (the room shows its game)' }),
    admin: UserId,
    game_mode: Type.Integer({ description: '0: the classic game' }),
    game_submode: Type.Integer(),
    game_2x2: Flag,
    players: Type.Array(Type.Array(UserId), { description: 'teams of players in seat order (one team: every player for themselves)' }),
    players_joined: Type.Record(Type.String(), Type.Integer()),
    invites: Type.Array(Type.Tuple([UserId, UserId]), { description: '[invited user, who invited them]' }),
    bans: Type.Array(UserId, { description: 'users kicked from the room' }),
    flags: Type.Object({ disposition_mode: Type.Integer(), is_tournament: Flag, ts_created: Uint, vip: Flag }, Strict),
    settings: Type.Object(
      {
        autostart: Flag,
        br_corner: Type.Integer(),
        contract_protests: Flag,
        game_timers: Flag,
        maxplayers: Type.Integer({ minimum: 2, maximum: 5 }),
        pm_allowed: Flag,
        private: Flag,
        restarts: Type.Integer(),
      },
      Strict,
    ),
    gsm_vote_variants: Type.Array(Type.Never()),
    gsm_votes: Type.Object({}, Strict),
    op_ts_end: Uint,
    v: Type.Integer({ description: 'the room’s version: one more at each change (room.patch carries it)' }),
    gs_id: Type.Optional(Type.String({ description: 'once started: the game server of its game' })),
    gs_game_id: Type.Optional(Type.String({ description: 'once started: its game, as text (games.getReplay’s game_id)' })),
  },
  Strict,
);

export const RoomList = Type.Object(
  {
    count: Uint,
    rooms: Type.Array(Room),
    users_data: Type.Array(UserShort, { description: 'the players and invited users of the rooms listed' }),
  },
  Strict,
);
