import type { Transaction } from 'kysely';
import type { Tables } from '../db/tables.js';
import type { Services } from '../services.js';
import { liveGamesOf, startGame } from '../game/index.js';
import type { Announcement } from './announce.js';
import { markStarted, type StoredRoom } from './queries.js';
import { roomViews } from './views.js';

/** The live game a player is in, if any. */
export async function liveGameOf(services: Services, userId: number): Promise<{ gs_id: string; gs_game_id: number } | undefined> {
  return (await liveGamesOf(services, [userId])).get(userId);
}

/**
 * Starts the room's game with its players in seat order, in the caller's transaction (which
 * holds the room): the room is then started, shows the game, and leaves the lobby. Answers what
 * to announce once the transaction has committed.
 */
export async function startRoomGame(
  services: Services,
  trx: Transaction<Tables>,
  room: StoredRoom,
  players: number[],
): Promise<Announcement[]> {
  const game = await startGame(services, trx, { players });
  await markStarted(trx, room, players, game);
  const [view] = await roomViews(trx, [
    { ...room, status: 1, v: room.v + 1, players: JSON.stringify(players), game_id: game.gameId, gs_id: game.gsId },
  ]);
  return [
    {
      kind: 'patch',
      view: view!,
      patches: [
        [2, 'status', 1],
        [2, 'gs_id', game.gsId],
        [2, 'gs_game_id', String(game.gameId)],
      ],
    },
    { kind: 'delete', roomId: view!.room_id },
  ];
}
