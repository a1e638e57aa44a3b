import { Type } from '@sinclair/typebox';
import { defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Strict, Uint } from '../api/schema-types.js';
import { actionTypes } from './engine/index.js';
import { actionOf } from './actions.js';
import { gameServerId } from './live.js';
import { issueGsToken } from './token.js';
import { resolveGame } from './play.js';
import { gamesOf, playAction, replayOf, startVsComputer } from './play.js';

const PacketList = Type.Array(Type.Record(Type.String(), Type.Unknown()), {
  description: 'packets of the game SDK (version 2): {setup?, events, status, time}',
});
const GameErrors = { 1901: 'no such game, or not one of the caller’s' };

export const gamesCreateVsComputer = defineMethod({
  name: 'games.createVsComputer',
  summary: 'Start a game of the classic board game against the computer',
  description:
    'A new game on the classic board: the caller plays first, then 1 to 3 computer players (user ids -1, -2, -3). ' +
    'Answers the game id and its first packet (with `setup`); play it with game.action.',
  auth: 'required',
  bots: true,
  extension: true,
  params: P.object({
    computers: P.uint({ default: 1, minimum: 1, maximum: 3, description: 'how many computer players' }),
    action_seconds: P.optional(P.uint({ minimum: 5, maximum: 3600, description: 'time for each action (default: the board’s 60 s)' })),
  }),
  result: Type.Object({ game_id: Uint, packets: PacketList }, Strict),
  errors: { 1903: 'the caller already plays a live game (data: user_id, gs_id, gs_game_id): finish or leave it first' },
  handler: async ({ services, caller }, params) => {
    const options = params.action_seconds === undefined ? {} : { action_ms: params.action_seconds * 1000 };
    const { gameId, packet } = await startVsComputer(services, caller.userId, params.computers, options);
    return { game_id: gameId, packets: [packet as unknown as Record<string, unknown>] };
  },
});

export const gameAction = defineMethod({
  name: 'game.action',
  summary: 'Send an action in a game',
  description:
    'Sends one action of the turn’s `action.list` (the game SDK’s names: roll-dices, purchase, auction.put, auction.bid, ...; or leave to give up). ' +
    'Actions on a field take `field_id`; contract.send takes `user_id_to` and the fields and cash of each side. ' +
    'Timeouts that fell due are played first, and the computer players answer at once. Answers the packets produced, in order.',
  auth: 'required',
  bots: true,
  extension: true,
  params: P.object({
    game_id: P.uint({ description: 'the game' }),
    action: P.enum([...actionTypes, 'leave'] as unknown as readonly [string, ...string[]], { description: 'the action' }),
    field_id: P.optional(P.uint({ maximum: 1000, description: 'the field of level.*, mortgage.*' })),
    user_id_to: P.optional(P.int({ description: 'contract.send: the other player' })),
    give_field_ids: P.optional(P.string({ maxLength: 200, description: 'contract.send: field ids the caller gives, comma-separated' })),
    give_cash: P.optional(P.uint({ maximum: 1e9, description: 'contract.send: cash the caller gives' })),
    take_field_ids: P.optional(P.string({ maxLength: 200, description: 'contract.send: field ids the caller asks for, comma-separated' })),
    take_cash: P.optional(P.uint({ maximum: 1e9, description: 'contract.send: cash the caller asks for' })),
  }),
  result: Type.Object({ packets: PacketList }, Strict),
  errors: {
    ...GameErrors,
    1902: 'the game refused the action (not expected now, not the caller’s turn, or against the rules); the description says why',
  },
  handler: async ({ services, caller }, params) => {
    const action = actionOf(params);
    const packets = await playAction(services, params.game_id, caller.userId, action);
    return { packets: packets as unknown as Record<string, unknown>[] };
  },
});

export const gamesGetReplay = defineMethod({
  name: 'games.getReplay',
  summary: 'Every packet of a game',
  description:
    'The packets of a game from its start, as its players received them: of any finished game, of a live game to its players, ' +
    'and to anyone else those played at least the spectators’ delay (`--game-spectator-delay`) ago.',
  auth: 'required',
  bots: true,
  scope: 'games',
  extension: true,
  params: P.object({ game_id: P.uint({ description: 'the game' }) }),
  result: Type.Object({ status: Type.Union([Type.Literal('live'), Type.Literal('over')]), packets: PacketList }, Strict),
  errors: GameErrors,
  handler: async ({ services, caller }, params) => {
    const replay = await replayOf(services, params.game_id, caller.userId);
    return { status: replay.status, packets: replay.packets as unknown as Record<string, unknown>[] };
  },
});

const SeatResultSchema = Type.Object(
  {
    user_id: Type.Integer({ description: 'the player (computer players: -1, -2, ...)' }),
    place: Uint,
    xp: Uint,
    rank_pts: Type.Integer({ description: 'rank points gained (negative: lost); 0 in a game that is not rated' }),
  },
  Strict,
);

export const gamesMy = defineMethod({
  name: 'games.my',
  summary: 'The caller’s games, newest first',
  description:
    'Each finished game carries `results`: every seat in seat order with its `place` (1 the winner, then by finishing order), ' +
    'the `xp` it gave and the rank points `rank_pts` it gave or took (a game is rated when at least two seats are accounts; ' +
    'a player who left or timed out takes the last place’s loss).',
  auth: 'required',
  bots: true,
  scope: 'games',
  extension: true,
  params: P.object({
    offset: P.uint({ default: 0, maximum: 1_000_000, description: 'games to skip' }),
    count: P.uint({ default: 20, minimum: 1, maximum: 100, description: 'games to list' }),
  }),
  result: Type.Object(
    {
      count: Uint,
      games: Type.Array(
        Type.Object(
          {
            game_id: Uint,
            status: Type.Union([Type.Literal('live'), Type.Literal('over')]),
            user_ids: Type.Array(Type.Integer()),
            ts_start: Uint,
            ts_end: Type.Optional(Uint),
            winner_user_id: Type.Optional(Type.Integer()),
            results: Type.Optional(
              Type.Array(SeatResultSchema, { description: 'once the game is over: each seat’s result, in seat order' }),
            ),
          },
          Strict,
        ),
      ),
    },
    Strict,
  ),
  handler: async ({ services, caller }, params) => gamesOf(services, caller.userId, params.offset, params.count),
});

export const gamesResolve = defineMethod({
  name: 'games.resolve',
  summary: 'A token for the game server: to play a game or watch it',
  description:
    'Answers a `gs_token` for the game server’s WebSocket, `GET /gs/ws?gs_token=...`: a player of the live game gets one that plays it ' +
    '(`player: 1`), anyone else (without an access token too) one that watches it with the spectators’ delay (`player: 0`). ' +
    'The token is good for 12 hours, for as many connections as needed.',
  auth: 'optional',
  bots: true,
  params: P.object({
    gs_id: P.optional(P.string({ maxLength: 64, description: 'the game server (users.get’s current_game.gs_id)' })),
    gs_game_id: P.uint({ description: 'the game on it' }),
  }),
  result: Type.Object(
    {
      gs_id: Type.String(),
      gs_game_id: Uint,
      gs_token: Type.String({ description: 'for GET /gs/ws?gs_token=...' }),
      player: Type.Union([Type.Literal(0), Type.Literal(1)], { description: '1: the token plays the game; 0: it watches' }),
      url: Type.String({ description: 'the path of the game server’s WebSocket' }),
    },
    Strict,
  ),
  errors: GameErrors,
  handler: async ({ services, caller }, params) => {
    const claim = await resolveGame(services, params.gs_id, params.gs_game_id, caller?.userId);
    return {
      gs_id: gameServerId,
      gs_game_id: claim.gameId,
      gs_token: issueGsToken(services, claim),
      player: claim.role === 'player' ? (1 as const) : (0 as const),
      url: '/gs/ws',
    };
  },
});
