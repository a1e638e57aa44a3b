import { sql, type Selectable } from 'kysely';
import type { Executor } from '../db/connection.js';
import type { GamesTable } from '../db/tables.js';
import type { SeatResult } from './results.js';

export type StoredGame = Selectable<GamesTable>;

/** Written as a constant: SQLite would compile a statement again for every bound status (see the partial indexes' note in test/sqlite-bound-values.test.ts). */
const LIVE = sql.lit<'live'>('live');

function storedGame(row: Record<string, unknown>): StoredGame {
  return {
    game_id: Number(row.game_id),
    status: row.status as GamesTable['status'],
    config: String(row.config),
    players: String(row.players),
    options: String(row.options),
    seed: String(row.seed),
    ts_start: Number(row.ts_start),
    ts_end: row.ts_end === null ? null : Number(row.ts_end),
    winner_user_id: row.winner_user_id === null ? null : Number(row.winner_user_id),
    deadline: row.deadline === null || row.deadline === undefined ? null : Number(row.deadline),
    actions: Number(row.actions ?? 0),
    results: row.results === null || row.results === undefined ? null : String(row.results),
  };
}

export async function insertGame(
  trx: Executor,
  game: { config: string; players: string; options: string; seed: string; tsStart: number; deadline: number | null },
  userIds: number[],
): Promise<number> {
  const row = await trx
    .insertInto('games')
    .values({
      status: 'live',
      config: game.config,
      players: game.players,
      options: game.options,
      seed: game.seed,
      ts_start: game.tsStart,
      deadline: game.deadline,
    })
    .returning('game_id')
    .executeTakeFirstOrThrow();
  const gameId = Number(row.game_id);
  await trx
    .insertInto('game_players')
    .values(userIds.map((user_id) => ({ game_id: gameId, user_id })))
    .execute();
  return gameId;
}

/** The game, locked against other writers until the transaction ends (PostgreSQL; SQLite has one writer). */
export async function selectGameForUpdate(trx: Executor, gameId: number, dialect: 'sqlite' | 'postgres'): Promise<StoredGame | undefined> {
  let query = trx.selectFrom('games').selectAll().where('game_id', '=', gameId);
  if (dialect === 'postgres') query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row ? storedGame(row) : undefined;
}

export async function selectGame(db: Executor, gameId: number): Promise<StoredGame | undefined> {
  const row = await db.selectFrom('games').selectAll().where('game_id', '=', gameId).executeTakeFirst();
  return row ? storedGame(row) : undefined;
}

export async function selectActions(db: Executor, gameId: number): Promise<{ user_id: number | null; action: string; ts: number }[]> {
  const rows = await db
    .selectFrom('game_actions')
    .select(['user_id', 'action', 'ts'])
    .where('game_id', '=', gameId)
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({ user_id: r.user_id === null ? null : Number(r.user_id), action: r.action, ts: Number(r.ts) }));
}

export async function insertActions(
  trx: Executor,
  gameId: number,
  firstSeq: number,
  actions: { user_id: number | null; action: string; ts: number }[],
): Promise<void> {
  if (actions.length === 0) return;
  await trx
    .insertInto('game_actions')
    .values(actions.map((a, i) => ({ game_id: gameId, seq: firstSeq + i, user_id: a.user_id, action: a.action, ts: a.ts })))
    .execute();
}

/**
 * Ends the game and counts it in its players' profiles, once: the game turns over only while it
 * is live (a second end finds it over and counts nothing, answering false). Each player's
 * `games` grows, the winner's `games_wins`, and `xp` by their result.
 */
export async function recordGameEnd(
  trx: Executor,
  gameId: number,
  end: { tsEnd: number; winner: number; results: SeatResult[]; players: readonly number[] },
): Promise<boolean> {
  const ended = await trx
    .updateTable('games')
    .set({ status: 'over', ts_end: end.tsEnd, winner_user_id: end.winner, results: JSON.stringify(end.results) })
    .where('game_id', '=', gameId)
    .where('status', '=', LIVE)
    .executeTakeFirst();
  if (Number(ended.numUpdatedRows) !== 1) return false;
  for (const userId of end.players)
    await trx
      .updateTable('users')
      .set({
        games: sql`games + 1`,
        games_wins: userId === end.winner ? sql`games_wins + 1` : sql`games_wins`,
        xp: sql`xp + ${end.results.find((r) => r.user_id === userId)?.xp ?? 0}`,
      })
      .where('user_id', '=', userId)
      .execute();
  return true;
}

/** The operator's hidden rank as stored (rankColumn): games do not show a rank the operator hid. */
const HIDDEN_RANK = JSON.stringify({ hidden: 1 });
const EXPIRED_RANK = JSON.stringify({ expired: 1 });

/**
 * Adds `pts` rank points (never below 0 in all) and one game (and a win) to the player's
 * standing in `season`, starting it at `startPts`; answers the standing after.
 */
export async function addRankPoints(
  trx: Executor,
  entry: { userId: number; season: number; pts: number; won: boolean; startPts: number },
): Promise<{ pts: number; games: number }> {
  const first = Math.max(0, entry.startPts + entry.pts);
  const row = await trx
    .insertInto('game_ranks')
    .values({ user_id: entry.userId, season: entry.season, pts: first, games: 1, wins: entry.won ? 1 : 0 })
    .onConflict((oc) =>
      oc.columns(['user_id', 'season']).doUpdateSet({
        pts: sql`case when game_ranks.pts + ${entry.pts} < 0 then 0 else game_ranks.pts + ${entry.pts} end`,
        games: sql`game_ranks.games + 1`,
        wins: sql`game_ranks.wins + ${entry.won ? 1 : 0}`,
      }),
    )
    .returning(['pts', 'games'])
    .executeTakeFirstOrThrow();
  return { pts: Number(row.pts), games: Number(row.games) };
}

/** Writes the rank a profile shows (JSON of its form), unless the operator hid the player's rank. */
export async function writeShownRank(trx: Executor, userId: number, rank: string): Promise<void> {
  await trx
    .updateTable('users')
    .set({ rank })
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('rank', 'is', null), eb('rank', '<>', HIDDEN_RANK)]))
    .execute();
}

/**
 * A new season: every player who played rated games in an earlier season and none in
 * `season` shows `{expired: 1}` (a rank the operator hid stays hidden); answers whose changed.
 * On PostgreSQL the players' rows are locked first and the update reads the seasons after it
 * has them: a game end of the new season committing meanwhile (it holds the same rows) is seen,
 * and its rank is not overwritten; a call there takes at most `batch` players (call again until
 * `more` is false). SQLite has one writer and takes them all.
 */
export async function expireRanksBefore(
  trx: Executor,
  season: number,
  dialect: 'sqlite' | 'postgres',
  batch = 1000,
): Promise<{ changed: number[]; more: boolean }> {
  const stale = () =>
    trx
      .selectFrom('users')
      .select('user_id')
      .where('user_id', 'in', (eb) => eb.selectFrom('game_ranks').select('user_id').where('season', '<', season))
      .where('user_id', 'not in', (eb) => eb.selectFrom('game_ranks').select('user_id').where('season', '=', season))
      .where((eb) => eb.or([eb('rank', 'is', null), eb('rank', 'not in', [HIDDEN_RANK, EXPIRED_RANK])]));
  let candidates: number[] | undefined;
  if (dialect === 'postgres') {
    // In one order, so that two processes expiring together wait on each other rather than deadlock.
    const locked = await stale().orderBy('user_id').limit(batch).forUpdate().execute();
    candidates = locked.map((r) => Number(r.user_id));
    if (candidates.length === 0) return { changed: [], more: false };
  }
  // A new statement: on PostgreSQL it sees what committed while the rows were being locked.
  let update = trx
    .updateTable('users')
    .set({ rank: EXPIRED_RANK })
    .where('user_id', 'in', (eb) => eb.selectFrom('game_ranks').select('user_id').where('season', '<', season))
    .where('user_id', 'not in', (eb) => eb.selectFrom('game_ranks').select('user_id').where('season', '=', season))
    .where((eb) => eb.or([eb('rank', 'is', null), eb('rank', 'not in', [HIDDEN_RANK, EXPIRED_RANK])]));
  if (candidates) update = update.where('user_id', 'in', candidates);
  const rows = await update.returning('user_id').execute();
  return { changed: rows.map((r) => Number(r.user_id)).sort((a, b) => a - b), more: candidates !== undefined };
}

export async function selectGamesOf(
  db: Executor,
  userId: number,
  offset: number,
  count: number,
): Promise<{ total: number; games: StoredGame[] }> {
  const rows = await db
    .selectFrom('game_players')
    .innerJoin('games', 'games.game_id', 'game_players.game_id')
    .selectAll('games')
    .where('game_players.user_id', '=', userId)
    .orderBy('games.game_id', 'desc')
    .offset(offset)
    .limit(count)
    .execute();
  const total = await db
    .selectFrom('game_players')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return { total: Number(total.n), games: rows.map(storedGame) };
}

/** Seats the players in the live game; fails on the key when one of them already plays one. */
export async function insertLivePlayers(trx: Executor, gameId: number, userIds: readonly number[]): Promise<void> {
  if (userIds.length === 0) return;
  await trx
    .insertInto('game_live_players')
    // In one order, so that two starts sharing players wait on each other rather than deadlock.
    .values([...userIds].sort((a, b) => a - b).map((user_id) => ({ user_id, game_id: gameId })))
    .execute();
}

/** Frees the players from the live game (they left it, or it ended): they may play another. */
export async function deleteLivePlayers(trx: Executor, gameId: number, userIds: readonly number[]): Promise<void> {
  if (userIds.length === 0) return;
  await trx.deleteFrom('game_live_players').where('game_id', '=', gameId).where('user_id', 'in', userIds).execute();
}

export async function selectLiveGamesOf(db: Executor, userIds: readonly number[]): Promise<{ user_id: number; game_id: number }[]> {
  if (userIds.length === 0) return [];
  const rows = await db
    .selectFrom('game_live_players')
    .select(['user_id', 'game_id'])
    .where('user_id', 'in', userIds)
    .orderBy('user_id')
    .execute();
  return rows.map((r) => ({ user_id: Number(r.user_id), game_id: Number(r.game_id) }));
}

export async function selectLiveGames(db: Executor, offset: number, count: number): Promise<{ total: number; games: StoredGame[] }> {
  const rows = await db
    .selectFrom('games')
    .selectAll()
    .where('status', '=', LIVE)
    .orderBy('game_id', 'desc')
    .offset(offset)
    .limit(count)
    .execute();
  const total = await db
    .selectFrom('games')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', LIVE)
    .executeTakeFirstOrThrow();
  return { total: Number(total.n), games: rows.map(storedGame) };
}

/** After actions were stored: the game's version and when its next timeout falls due. */
export async function updateProgress(trx: Executor, gameId: number, progress: { actions: number; deadline: number | null }): Promise<void> {
  await trx.updateTable('games').set({ actions: progress.actions, deadline: progress.deadline }).where('game_id', '=', gameId).execute();
}

/** Live games whose next timeout is due at `now`, the longest due first. */
export async function selectDueGames(db: Executor, now: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('games')
    .select('game_id')
    .where('status', '=', LIVE)
    .where('deadline', '<=', now)
    .orderBy('deadline')
    .limit(limit)
    .execute();
  return rows.map((r) => Number(r.game_id));
}
