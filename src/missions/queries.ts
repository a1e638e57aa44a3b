import { sql, type Selectable } from 'kysely';
import type { Executor } from '../db/connection.js';
import type { MissionsTable } from '../db/tables.js';

export type StoredMission = Omit<Selectable<MissionsTable>, 'mission_id'> & { mission_id: number };

function storedMission(row: Record<string, unknown>): StoredMission {
  return {
    mission_id: Number(row.mission_id),
    name: String(row.name),
    goal: row.goal as StoredMission['goal'],
    target: Number(row.target),
    reward_type: row.reward_type as StoredMission['reward_type'],
    reward: Number(row.reward),
    active: Number(row.active),
    ts_created: Number(row.ts_created),
  };
}

export async function insertMission(trx: Executor, mission: Omit<StoredMission, 'mission_id'>): Promise<StoredMission> {
  const row = await trx.insertInto('missions').values(mission).returningAll().executeTakeFirstOrThrow();
  return storedMission(row);
}

export async function updateMission(
  trx: Executor,
  missionId: number,
  change: Partial<Omit<StoredMission, 'mission_id' | 'ts_created'>>,
): Promise<StoredMission | undefined> {
  const row =
    Object.keys(change).length === 0
      ? await trx.selectFrom('missions').selectAll().where('mission_id', '=', missionId).executeTakeFirst()
      : await trx.updateTable('missions').set(change).where('mission_id', '=', missionId).returningAll().executeTakeFirst();
  return row ? storedMission(row) : undefined;
}

/** Removes a mission and every player's progress towards it; whether it existed. */
export async function deleteMission(trx: Executor, missionId: number): Promise<boolean> {
  await trx.deleteFrom('mission_progress').where('mission_id', '=', missionId).execute();
  const result = await trx.deleteFrom('missions').where('mission_id', '=', missionId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function selectMissions(db: Executor, onlyActive: boolean): Promise<StoredMission[]> {
  let query = db.selectFrom('missions').selectAll().orderBy('mission_id');
  if (onlyActive) query = query.where('active', '=', 1);
  return (await query.execute()).map(storedMission);
}

/** The user's counters of the week towards each mission, and whether its reward was given. */
export async function selectProgressOf(
  db: Executor,
  userId: number,
  week: number,
): Promise<Map<number, { counter: number; rewarded: boolean }>> {
  const rows = await db
    .selectFrom('mission_progress')
    .select(['mission_id', 'counter', 'ts_rewarded'])
    .where('user_id', '=', userId)
    .where('week', '=', week)
    .execute();
  return new Map(rows.map((r) => [Number(r.mission_id), { counter: Number(r.counter), rewarded: r.ts_rewarded !== null }]));
}

/** One more towards the mission this week (the row is made at the first): the counter after it. */
export async function advanceProgress(trx: Executor, missionId: number, userId: number, week: number): Promise<number> {
  const row = await trx
    .insertInto('mission_progress')
    .values({ mission_id: missionId, user_id: userId, week, counter: 1, ts_rewarded: null })
    .onConflict((oc) => oc.columns(['user_id', 'week', 'mission_id']).doUpdateSet({ counter: sql`mission_progress.counter + 1` }))
    .returning('counter')
    .executeTakeFirstOrThrow();
  return Number(row.counter);
}

/**
 * Marks the mission's reward of the week given, unless it was: whether this call marked it.
 * The condition is what gives a reward once, however many game ends reach the target at once.
 */
export async function markRewarded(trx: Executor, missionId: number, userId: number, week: number, now: number): Promise<boolean> {
  const result = await trx
    .updateTable('mission_progress')
    .set({ ts_rewarded: now })
    .where('mission_id', '=', missionId)
    .where('user_id', '=', userId)
    .where('week', '=', week)
    .where('ts_rewarded', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Adds a game to the player's standing in a period. */
export async function addToStats(trx: Executor, period: string, userId: number, won: 0 | 1, xp: number): Promise<void> {
  await trx
    .insertInto('game_stats')
    .values({ period, user_id: userId, games: 1, wins: won, xp })
    .onConflict((oc) =>
      oc.columns(['period', 'user_id']).doUpdateSet({
        games: sql`game_stats.games + 1`,
        wins: sql`game_stats.wins + ${won}`,
        xp: sql`game_stats.xp + ${xp}`,
      }),
    )
    .execute();
}

export interface Standing {
  user_id: number;
  games: number;
  wins: number;
  xp: number;
}

const standing = (r: { user_id: unknown; games: unknown; wins: unknown; xp: unknown }): Standing => ({
  user_id: Number(r.user_id),
  games: Number(r.games),
  wins: Number(r.wins),
  xp: Number(r.xp),
});

export async function selectStanding(db: Executor, period: string, userId: number): Promise<Standing | undefined> {
  const row = await db
    .selectFrom('game_stats')
    .select(['user_id', 'games', 'wins', 'xp'])
    .where('period', '=', period)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row ? standing(row) : undefined;
}

/** The period's standings of existing users, by experience, then wins, then the earlier account; and how many there are. */
export async function selectTop(db: Executor, period: string, offset: number, count: number): Promise<{ total: number; rows: Standing[] }> {
  const rows = await db
    .selectFrom('game_stats')
    .innerJoin('users', 'users.user_id', 'game_stats.user_id')
    .select(['game_stats.user_id', 'game_stats.games', 'game_stats.wins', 'game_stats.xp'])
    .where('game_stats.period', '=', period)
    .orderBy('game_stats.xp', 'desc')
    .orderBy('game_stats.wins', 'desc')
    .orderBy('game_stats.user_id')
    .offset(offset)
    .limit(count)
    .execute();
  const total = await db
    .selectFrom('game_stats')
    .innerJoin('users', 'users.user_id', 'game_stats.user_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('game_stats.period', '=', period)
    .executeTakeFirstOrThrow();
  return { total: Number(total.n), rows: rows.map(standing) };
}

/** The place of a standing in its period's top (1 the first). */
export async function positionOf(db: Executor, period: string, s: Standing): Promise<number> {
  const ahead = await db
    .selectFrom('game_stats')
    .innerJoin('users', 'users.user_id', 'game_stats.user_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('game_stats.period', '=', period)
    .where((eb) =>
      eb.or([
        eb('game_stats.xp', '>', s.xp),
        eb.and([eb('game_stats.xp', '=', s.xp), eb('game_stats.wins', '>', s.wins)]),
        eb.and([eb('game_stats.xp', '=', s.xp), eb('game_stats.wins', '=', s.wins), eb('game_stats.user_id', '<', s.user_id)]),
      ]),
    )
    .executeTakeFirstOrThrow();
  return Number(ahead.n) + 1;
}

/** Whether an item prototype exists (a mission's item reward names one). */
export async function protoExists(db: Executor, itemProtoId: number): Promise<boolean> {
  return (
    (await db.selectFrom('item_protos').select('item_proto_id').where('item_proto_id', '=', itemProtoId).executeTakeFirst()) !== undefined
  );
}
