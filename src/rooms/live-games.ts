import { Type } from '@sinclair/typebox';
import { defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Strict, Uint } from '../api/schema-types.js';
import { listLiveGames } from '../game/index.js';
import { CLASSIC_MODE } from './views.js';

const LiveGame = Type.Object(
  {
    gs_id: Type.String({ description: 'the game server' }),
    gs_game_id: Type.String({ description: 'the game, as text (games.getReplay’s game_id)' }),
    status: Type.Integer({ description: '1: being played' }),
    game_mode: Type.Integer(),
    game_submode: Type.Integer(),
    game_2x2: Type.Integer(),
    players: Type.Array(Type.Object({ user_id: Type.Integer({ description: 'computer players are -1, -2, ...' }) }, Strict), {
      description: 'in seat order',
    }),
    ts_start: Uint,
  },
  Strict,
);

export const gamesGetLive = defineMethod({
  name: 'games.getLive',
  summary: 'The games being played, newest first',
  description: 'Live games of the classic board game, started from rooms (and against the computer), with their players in seat order.',
  auth: 'optional',
  params: P.object({
    offset: P.uint({ default: 0, maximum: 1_000_000, description: 'games to skip' }),
    count: P.uint({ default: 25, minimum: 1, maximum: 100, description: 'games to list' }),
  }),
  result: Type.Object({ count: Uint, games: Type.Array(LiveGame) }, Strict),
  handler: async ({ services }, params) => {
    const { count, games } = await listLiveGames(services, { offset: params.offset, count: params.count });
    return {
      count,
      games: games.map((game) => ({
        gs_id: game.gs_id,
        gs_game_id: String(game.gs_game_id),
        status: 1,
        game_mode: CLASSIC_MODE,
        game_submode: 0,
        game_2x2: 0,
        players: game.user_ids.map((user_id) => ({ user_id })),
        ts_start: game.ts_start,
      })),
    };
  },
});
