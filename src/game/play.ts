/**
 * Games against the computer through the API: a game's state is rebuilt from its stored
 * actions (so it resumes after a restart and every process sees the same game), or taken from
 * this process's states when it is at the stored version, and each call plays in one
 * transaction that holds the game: the caller's action, the timeouts that fell due
 * before it, the computer players' answers, and, when the game ends, its result in the players'
 * profiles.
 */
import { ApiError, Code } from '../api/errors.js';
import { ownTransaction } from '../db/connection.js';
import type { Services } from '../services.js';
import type { Executor } from '../db/connection.js';
import { announceUsersChanged, rankColumn } from '../users/index.js';
import { resultsOf, rankShown, seasonAt, seasonStartPoints, type SeatResult } from './results.js';
import {
  act,
  computerAction,
  createGame,
  expected,
  GameActionError,
  seededRandom,
  timeout,
  type Action,
  type Game,
  type GameOptions,
  type Packet,
} from './engine/index.js';
import {
  addRankPoints,
  deleteLivePlayers,
  writeShownRank,
  insertActions,
  updateProgress,
  recordGameEnd,
  selectActions,
  selectGame,
  selectGameForUpdate,
  selectGamesOf,
  selectLiveGamesOf,
  type StoredGame,
} from './queries.js';
import { gameServerId, startGame } from './live.js';
import type { GameClaim } from './token.js';
import { type StoredPlayer } from './players.js';
import type { GameEndEffects } from './hooks.js';

const noGame = (gameId: number) => new ApiError(Code.NO_SUCH_GAME, `no game ${gameId}`);

function rebuild(stored: StoredGame, actions: { user_id: number | null; action: string; ts: number }[]): { game: Game; packets: Packet[] } {
  const players = (JSON.parse(stored.players) as StoredPlayer[]).map(({ computer: _computer, ...setup }) => setup);
  const { game, packet } = createGame({
    config: JSON.parse(stored.config),
    players,
    seed: stored.seed,
    now: stored.ts_start,
    options: JSON.parse(stored.options) as Partial<GameOptions>,
  });
  const packets = [packet];
  for (const a of actions) {
    const next = a.user_id === null ? timeout(game, a.ts) : act(game, a.user_id, JSON.parse(a.action) as Action, a.ts);
    if (next) packets.push(next);
  }
  return { game, packets };
}

function computersOf(stored: StoredGame): Set<number> {
  return new Set((JSON.parse(stored.players) as StoredPlayer[]).filter((p) => p.computer).map((p) => p.user_id));
}

/** Starts a game of the caller against `computers` computer players; its id and first packet. */
export async function startVsComputer(
  services: Services,
  userId: number,
  computers: number,
  options: Partial<GameOptions>,
): Promise<{ gameId: number; packet: Packet }> {
  const started = await ownTransaction(services.db)(async (trx) => {
    const { gameId } = await startGame(services, trx, { players: [userId], computers, options });
    const stored = (await selectGame(trx, gameId))!;
    return { gameId, ...rebuild(stored, []) };
  });
  services.game.states.put(started.gameId, 0, started.game, services.clock.now());
  return { gameId: started.gameId, packet: started.packets[0]! };
}

/** Plays the caller's action, then the computer players until a human is expected; the packets this produced. */
export async function playAction(services: Services, gameId: number, userId: number, action: Action): Promise<Packet[]> {
  return (await play(services, gameId, { userId, action })).packets;
}

/**
 * Plays what is due in the game (timeouts, computer players) and `move` if given, in one
 * transaction holding the game; then tells every process the packets, and announces the profiles
 * its end changed.
 */
export async function play(
  services: Services,
  gameId: number,
  move: { userId: number; action: Action } | null,
): Promise<{ packets: Packet[] }> {
  const { packets, first, counted, ended, game, actions } = await playInTransaction(services, gameId, move);
  // Committed: the state after it is the game's at that version (a call that failed kept nothing).
  services.game.states.put(gameId, actions, game, services.clock.now());
  await services.game.feed.publish({ game_id: gameId, first, packets });
  if (counted.length > 0) await announceUsersChanged(services, counted);
  if (ended) await services.hooks.game.announceGameEnded(services, ended);
  return { packets };
}

interface Played {
  /** The packets of the call, and the number of the first. */
  packets: Packet[];
  first: number;
  /** The players whose profiles the game's end changed, and what else it changed, to announce once committed. */
  counted: number[];
  ended?: GameEndEffects;
  /** The game after the call, and how many actions it has stored. */
  game: Game;
  actions: number;
}

async function playInTransaction(services: Services, gameId: number, move: { userId: number; action: Action } | null): Promise<Played> {
  return ownTransaction(services.db)(async (trx) => {
    const stored = await selectGameForUpdate(trx, gameId, services.db.dialect);
    if (!stored) throw noGame(gameId);
    const computers = computersOf(stored);
    const players = (JSON.parse(stored.players) as StoredPlayer[]).map((p) => p.user_id);
    if (move && (!players.includes(move.userId) || computers.has(move.userId))) throw noGame(gameId);
    // The row is held: no other call can store an action until this one ends, so the state this
    // process kept at the stored version is the game's; any other version is rebuilt.
    const storedActions = stored.actions;
    const game = services.game.states.take(gameId, storedActions) ?? rebuild(stored, await selectActions(trx, gameId)).game;
    const now = Math.max(services.clock.now(), game.now);
    const added: { user_id: number | null; action: string; ts: number }[] = [];
    const packets: Packet[] = [];
    const computerTurns = (): void => {
      const random = seededRandom(`${stored.seed}:computer:${storedActions + added.length}`);
      for (;;) {
        if (game.step.kind === 'over') return;
        const expectedId = expected(game).user_id;
        if (expectedId !== null && computers.has(expectedId)) {
          // A computer player answers as soon as it is expected: at the time the game is at.
          const move = computerAction(game, expectedId, random)!;
          packets.push(act(game, expectedId, move, game.now));
          added.push({ user_id: expectedId, action: JSON.stringify(move), ts: game.now });
          continue;
        }
        if (game.deadline === null || now < game.deadline) return;
        const at = game.deadline;
        packets.push(timeout(game, at)!);
        added.push({ user_id: null, action: '{"type":"timeout"}', ts: at });
      }
    };
    computerTurns();
    if (move) {
      try {
        packets.push(act(game, move.userId, move.action, now));
      } catch (error) {
        if (error instanceof GameActionError) throw new ApiError(Code.GAME_ACTION_REFUSED, error.message);
        throw error;
      }
      added.push({ user_id: move.userId, action: JSON.stringify(move.action), ts: now });
      computerTurns();
    }
    const first = storedActions + 1;
    const actions = storedActions + added.length;
    await insertActions(trx, gameId, storedActions, added);
    await updateProgress(trx, gameId, { actions, deadline: game.deadline });
    const humans = players.filter((id) => !computers.has(id));
    await deleteLivePlayers(
      trx,
      gameId,
      humans.filter((id) => game.step.kind === 'over' || game.players.find((p) => p.user_id === id)?.status !== 0),
    );
    if (game.step.kind === 'over' && stored.status === 'live') {
      // The finishing order is in every packet since the start: rebuilt once, from the actions stored so far (this call's included).
      const all = rebuild(stored, await selectActions(trx, gameId)).packets;
      const counted = await countGameEnd(services, trx, gameId, { now, winner: game.winner!, packets: all, seats: players, computers });
      if (!counted) return { packets, first, counted: [], game, actions };
      const ended = await services.hooks.game.gameEnded(services, trx, {
        gameId,
        tsEnd: now,
        winner: game.winner!,
        players: humans,
        xp: counted.xp,
      });
      return { packets, first, counted: counted.accounts, ended, game, actions };
    }
    return { packets, first, counted: [], game, actions };
  });
}

/**
 * Counts the game's end in the caller's transaction, once: the results in the game, each
 * account's games, wins and xp, and in a rated game its rank points of the season and the rank
 * its profile shows. Answers the accounts whose profiles changed and the xp each earned, or
 * nothing when the game was already over.
 */
async function countGameEnd(
  services: Services,
  trx: Executor,
  gameId: number,
  end: { now: number; winner: number; packets: Packet[]; seats: number[]; computers: Set<number> },
): Promise<{ accounts: number[]; xp: Map<number, number> } | undefined> {
  const { results, rated } = resultsOf(end.packets, end.seats, end.winner, end.computers);
  // In one order, so that two ends sharing players wait on each other rather than deadlock.
  const accounts = end.seats.filter((id) => !end.computers.has(id)).sort((a, b) => a - b);
  if (!(await recordGameEnd(trx, gameId, { tsEnd: end.now, winner: end.winner, results, players: accounts }))) return undefined;
  if (rated) {
    const { games } = services.config;
    const season = seasonAt(games, end.now);
    for (const userId of accounts) {
      const result = results.find((r) => r.user_id === userId)!;
      const standing = await addRankPoints(trx, {
        userId,
        season,
        pts: result.rank_pts,
        won: userId === end.winner,
        startPts: seasonStartPoints,
      });
      await writeShownRank(trx, userId, rankColumn(rankShown(standing, games.rankQualifyingGames))!);
    }
  }
  return { accounts, xp: new Map(results.filter((r) => !end.computers.has(r.user_id)).map((r) => [r.user_id, r.xp])) };
}

/** Every packet of a game from its start, recomputed from its stored actions: a live game's to spectators with their delay. */
export async function replayOf(
  services: Services,
  gameId: number,
  userId: number,
): Promise<{ status: StoredGame['status']; packets: Packet[] }> {
  const stored = await selectGame(services.db.kysely, gameId);
  if (!stored) throw noGame(gameId);
  const players = (JSON.parse(stored.players) as StoredPlayer[]).map((p) => p.user_id);
  const { packets } = rebuild(stored, await selectActions(services.db.kysely, gameId));
  if (stored.status === 'over' || players.includes(userId)) return { status: stored.status, packets };
  // A spectator of a live game sees it as it was the spectators' delay ago.
  const shown = services.clock.now() - services.config.games.spectatorDelaySeconds * 1000;
  return { status: stored.status, packets: packets.filter((p) => p.time.ts_now <= shown) };
}

export async function gamesOf(services: Services, userId: number, offset: number, count: number) {
  const { total, games } = await selectGamesOf(services.db.kysely, userId, offset, count);
  return {
    count: total,
    games: games.map((g) => ({
      game_id: g.game_id,
      status: g.status,
      user_ids: (JSON.parse(g.players) as StoredPlayer[]).map((p) => p.user_id),
      ts_start: Math.floor(g.ts_start / 1000),
      ...(g.ts_end !== null ? { ts_end: Math.floor(g.ts_end / 1000) } : {}),
      ...(g.winner_user_id !== null ? { winner_user_id: g.winner_user_id } : {}),
      ...(g.results !== null ? { results: JSON.parse(g.results) as SeatResult[] } : {}),
    })),
  };
}

/** Every packet of a live or finished game, numbered by their place: for the game server's feed. */
export async function packetsOf(services: Services, gameId: number): Promise<Packet[]> {
  const stored = await selectGame(services.db.kysely, gameId);
  if (!stored) return [];
  return rebuild(stored, await selectActions(services.db.kysely, gameId)).packets;
}

/** Who the caller is in the game: a player while they play it, else a spectator; 1901 when there is no such game. */
export async function resolveGame(
  services: Services,
  gsId: string | undefined,
  gameId: number,
  userId: number | undefined,
): Promise<GameClaim> {
  const stored = gsId === undefined || gsId === gameServerId ? await selectGame(services.db.kysely, gameId) : undefined;
  if (!stored) throw noGame(gameId);
  const playing =
    userId !== undefined && stored.status === 'live' && (await selectLiveGamesOf(services.db.kysely, [userId]))[0]?.game_id === gameId;
  return { gameId, userId: userId ?? 0, role: playing ? 'player' : 'spectator' };
}
