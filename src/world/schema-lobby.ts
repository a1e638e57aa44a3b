/**
 * The lobby's sections of a world file: waiting rooms (their players, invitations, kicked users
 * and settings) and finished games (their players, result, times and every action, so their
 * replays survive an export and an import). Live games and started rooms are not carried.
 */
import { Type, type Static } from '@sinclair/typebox';

const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const Uint = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const Bit = Type.Union([Type.Literal(0), Type.Literal(1), Type.Boolean()]);

/** A user invited to a room. */
export const WorldRoomInvite = Type.Object(
  {
    user_id: Id,
    /** A player of the room; default its admin. */
    inviter_id: Type.Optional(Id),
    ts: Type.Optional(Uint),
  },
  { additionalProperties: false },
);

/** A room waiting for players (rooms.get's `status` 0). */
export const WorldRoom = Type.Object(
  {
    room_id: Id,
    /** Its admin (the creator, or who took over): one of its players. */
    admin_id: Id,
    /** Its players in seat order, each in no other room. */
    players: Type.Array(Id, { minItems: 1, maxItems: 5 }),
    maxplayers: Type.Integer({ minimum: 2, maximum: 5 }),
    /** Default 0. */
    private: Type.Optional(Bit),
    /** Default 0; a full room set to start by itself would have started, and is refused. */
    autostart: Type.Optional(Bit),
    /** Only the classic game, 0 (the default), is played. */
    game_submode: Type.Optional(Uint),
    /** Only 1 (the default): timers on. */
    game_timers: Type.Optional(Uint),
    /** Only 0 (the default): the classic corners. */
    br_corner: Type.Optional(Uint),
    invites: Type.Optional(Type.Array(WorldRoomInvite, { maxItems: 50 })),
    /** Users kicked from the room (not let in again unless invited). */
    bans: Type.Optional(Type.Array(Id, { maxItems: 1000 })),
    ts_created: Type.Optional(Uint),
    /** The version of its realtime patches (default 1; a merge that replaces a stored room raises it past the stored one). */
    v: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_000_000_000 })),
  },
  { additionalProperties: false },
);

/** A seat of a game: the engine's setup of the player (user ids of the computer players are -1 to -7, marked `computer`). */
export const WorldGamePlayer = Type.Object(
  {
    user_id: Type.Integer({ minimum: -7, maximum: Number.MAX_SAFE_INTEGER }),
    /** 1 for the built-in computer player (negative user ids). */
    computer: Type.Optional(Type.Literal(1)),
    team: Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1)])),
    /** Default 0. */
    is_vip: Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1)])),
    /** Default 0. */
    is_loan_available: Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1)])),
    /** The player's equipment in the game (default none): `{cards: [...], generator?, joke?}`. */
    equipment: Type.Optional(
      Type.Object(
        {
          cards: Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 100 }),
          generator: Type.Optional(Type.Object({ item_proto_id: Id }, { additionalProperties: false })),
          joke: Type.Optional(Type.Object({ item_proto_id: Id }, { additionalProperties: false })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** An action of a game, as the engine takes it. */
export const WorldGameAction = Type.Object(
  {
    /** Who acted; absent for a timeout (the default action of whoever was expected). */
    user_id: Type.Optional(Type.Integer({ minimum: -7, maximum: Number.MAX_SAFE_INTEGER })),
    /** The action (`{"type": "roll-dices"}`, ...). */
    action: Type.Object({ type: Type.String({ minLength: 1, maxLength: 50 }) }, { additionalProperties: true }),
    /** Milliseconds. */
    ts_ms: Uint,
  },
  { additionalProperties: false },
);

/** A finished game: played again on import, it must end with its winner. */
export const WorldGame = Type.Object(
  {
    game_id: Id,
    /** Its seats in order, 2 to 8. */
    players: Type.Array(WorldGamePlayer, { minItems: 2, maxItems: 8 }),
    /** The secret seed of its dice (revealed once it ended). */
    seed: Type.String({ pattern: '^[0-9a-f]{16,128}$' }),
    /** The board (the game SDK's setup.config); default the classic board. */
    config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** The engine's options (start_cash, action_ms, ...); default none. */
    options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** Milliseconds. */
    ts_start_ms: Uint,
    /** Milliseconds. */
    ts_end_ms: Uint,
    winner_user_id: Type.Integer({ minimum: -7, maximum: Number.MAX_SAFE_INTEGER }),
    actions: Type.Array(WorldGameAction, { maxItems: 100_000 }),
  },
  { additionalProperties: false },
);

export type WorldRoom = Static<typeof WorldRoom>;
export type WorldGame = Static<typeof WorldGame>;
