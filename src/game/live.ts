/**
 * Live games of several players, as the lobby starts them: a game is created inside the caller's
 * transaction, and each account may play one live game at a time (game_live_players, whose key
 * refuses a second even when two starts race).
 */
import { ApiError, Code } from '../api/errors.js';
import type { Executor } from '../db/connection.js';
import type { Services } from '../services.js';
import { classicBoard, createGame, GameActionError, type BoardConfig, type GameOptions, type PlayerSetup } from './engine/index.js';
import { gameEquipment, type GameEquipment } from '../inventory/index.js';
import { computerUserIds, newSeed, type StoredPlayer } from './players.js';
import { insertGame, insertLivePlayers, selectLiveGames, selectLiveGamesOf } from './queries.js';

/** The name of this installation's game server: every process serves every game (they share the database). */
export const gameServerId = 'gs-1';

export interface NewLiveGame {
  /** The accounts playing (people and bots), in seat order. */
  players: number[];
  /** Computer players seated after them. */
  computers?: number;
  options?: Partial<GameOptions>;
}

export const alreadyInGame = (userId: number, gameId: number) =>
  new ApiError(Code.ALREADY_IN_GAME, `user ${userId} is already playing game ${gameId}`, {
    user_id: userId,
    gs_id: gameServerId,
    gs_game_id: gameId,
  });

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === '23505' || (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT'));
}

/** The name the classic board's equipment is kept under (inventory.get's equipped.game). */
export const classicBoardName = 'classic';

/**
 * A player's equipment as the game's setup shows it: the cards of each monopoly go onto the
 * monopoly's companies in board order, in the order they were equipped (ascending item_id); a
 * card beyond the monopoly's companies, or of a monopoly the board lacks, stays off the board.
 */
export function onBoard(config: BoardConfig, equipment: GameEquipment): PlayerSetup['equipment'] {
  const free = new Map<number, number[]>();
  config.fields.forEach((field, fieldId) => {
    if (field.type !== 'company') return;
    const list = free.get(field.monopoly_id) ?? [];
    list.push(fieldId);
    free.set(field.monopoly_id, list);
  });
  const cards: PlayerSetup['equipment']['cards'] = [];
  for (const card of equipment.cards) {
    const fieldId = free.get(card.monopoly_id)?.shift();
    if (fieldId !== undefined) cards.push({ field_id: fieldId, item_proto_id: card.item_proto_id, rent_multiplier: card.rent_multiplier });
  }
  cards.sort((a, b) => a.field_id - b.field_id);
  return {
    cards,
    ...(equipment.generator ? { generator: equipment.generator } : {}),
    ...(equipment.joke ? { joke: equipment.joke } : {}),
  };
}

/**
 * Creates a live game in the caller's transaction `trx`: the players in seat order, then the
 * computer players. Refuses (1903) a player who already plays a live game, and (2) a list the
 * game cannot be played with.
 */
export async function startGame(services: Services, trx: Executor, input: NewLiveGame): Promise<{ gameId: number; gsId: string }> {
  const computers = input.computers ?? 0;
  if (!input.players.every((id) => Number.isSafeInteger(id) && id > 0))
    throw new ApiError(Code.BAD_PARAM, 'parameter players: user ids of accounts');
  if (!Number.isInteger(computers) || computers < 0 || computers > computerUserIds.length)
    throw new ApiError(Code.BAD_PARAM, `parameter computers: 0 to ${computerUserIds.length}`);
  const equipment = await gameEquipment(trx, input.players, classicBoardName);
  const seats: StoredPlayer[] = [
    ...input.players.map((user_id) => ({
      user_id,
      is_vip: 0 as const,
      is_loan_available: 0 as const,
      equipment: onBoard(classicBoard, equipment.get(user_id)!),
    })),
    ...computerUserIds
      .slice(0, computers)
      .map((user_id) => ({ user_id, is_vip: 0 as const, is_loan_available: 0 as const, equipment: { cards: [] }, computer: 1 as const })),
  ];
  const options = input.options ?? {};
  const seed = newSeed();
  const now = services.clock.now();
  let deadline: number | null;
  try {
    deadline = createGame({ config: classicBoard, players: seats.map(({ computer: _c, ...p }) => p), seed, now, options }).game.deadline;
  } catch (error) {
    if (error instanceof GameActionError) throw new ApiError(Code.BAD_PARAM, `parameter players: ${error.message}`);
    throw error;
  }
  const busy = await selectLiveGamesOf(trx, input.players);
  const first = busy[0];
  if (first) throw alreadyInGame(first.user_id, first.game_id);
  const gameId = await insertGame(
    trx,
    {
      config: JSON.stringify(classicBoard),
      players: JSON.stringify(seats),
      options: JSON.stringify(options),
      seed,
      tsStart: now,
      deadline,
    },
    input.players,
  );
  try {
    await insertLivePlayers(trx, gameId, input.players);
  } catch (error) {
    // A start that raced this one took a player first (PostgreSQL waits for it on the key, then refuses).
    if (!isUniqueViolation(error)) throw error;
    const [taken] = await selectLiveGamesOf(services.db.dialect === 'postgres' ? services.db.kysely : trx, input.players);
    throw alreadyInGame(taken?.user_id ?? input.players[0]!, taken?.game_id ?? 0);
  }
  return { gameId, gsId: gameServerId };
}

/** The live game each of these accounts plays, for their profiles' `current_game`. */
export async function liveGamesOf(
  services: Services,
  userIds: readonly number[],
): Promise<Map<number, { gs_id: string; gs_game_id: number }>> {
  const found = new Map<number, { gs_id: string; gs_game_id: number }>();
  if (userIds.length === 0) return found;
  for (const row of await selectLiveGamesOf(services.db.kysely, userIds))
    found.set(row.user_id, { gs_id: gameServerId, gs_game_id: row.game_id });
  return found;
}

export interface LiveGameEntry {
  gs_id: string;
  gs_game_id: number;
  /** Seat order; computer players are -1, -2, ... */
  user_ids: number[];
  /** Seconds. */
  ts_start: number;
}

/** The live games, newest first, and how many there are. */
export async function listLiveGames(
  services: Services,
  page: { offset: number; count: number },
): Promise<{ count: number; games: LiveGameEntry[] }> {
  const { total, games } = await selectLiveGames(services.db.kysely, page.offset, page.count);
  return {
    count: total,
    games: games.map((g) => ({
      gs_id: gameServerId,
      gs_game_id: g.game_id,
      user_ids: (JSON.parse(g.players) as StoredPlayer[]).map((p) => p.user_id),
      ts_start: Math.floor(g.ts_start / 1000),
    })),
  };
}
