import { Type, type Static } from '@sinclair/typebox';
import { Bit, Strict, Ts, Uint } from '../api/schema-types.js';
import type { Services } from '../services.js';
import { loadUsers, UserShort } from '../users/index.js';
import { SEASON_LEVEL_XP, SEASON_LEVELS, seasonLevel, seasonOf, seasonPeriod, weekEnd, weekOf, weekPeriod } from './clock.js';
import { positionOf, selectMissions, selectProgressOf, selectStanding, selectTop, type StoredMission } from './queries.js';

export const Mission = Type.Object(
  {
    mission_id: Uint,
    name: Type.String(),
    goal: Type.Union([Type.Literal('play'), Type.Literal('win')], { description: 'play: games finished; win: games won' }),
    counter: Type.Integer({ minimum: 0, description: 'games counted towards the target this week' }),
    target: Type.Integer({ minimum: 1 }),
    reward_type: Type.Union([Type.Literal('money'), Type.Literal('item')]),
    reward: Type.Integer({
      minimum: 1,
      description: 'money: units of the currency; item: the prototype (item_proto_id) of the item given',
    }),
    rewarded: Type.Optional(Bit),
    ts_expire: Ts,
  },
  { ...Strict, $id: 'Mission' },
);

export const AdminMission = Type.Object(
  {
    mission_id: Uint,
    name: Type.String(),
    goal: Type.Union([Type.Literal('play'), Type.Literal('win')]),
    target: Type.Integer({ minimum: 1 }),
    reward_type: Type.Union([Type.Literal('money'), Type.Literal('item')]),
    reward: Type.Integer({ minimum: 1 }),
    active: Bit,
    ts_created: Ts,
  },
  { ...Strict, $id: 'AdminMission' },
);

export const adminMissionJson = (m: StoredMission): Static<typeof AdminMission> => ({
  mission_id: m.mission_id,
  name: m.name,
  goal: m.goal,
  target: m.target,
  reward_type: m.reward_type,
  reward: m.reward,
  active: m.active === 1 ? 1 : 0,
  ts_created: m.ts_created,
});

/** The week's active missions with the user's counters (none without a user), each expiring when the week ends. */
export async function missionsOf(services: Services, userId: number | undefined): Promise<Static<typeof Mission>[]> {
  const db = services.db.kysely;
  const week = weekOf(services.clock.now());
  const [missions, progress] = await Promise.all([
    selectMissions(db, true),
    userId === undefined ? new Map<number, { counter: number; rewarded: boolean }>() : selectProgressOf(db, userId, week),
  ]);
  return missions.map((m) => {
    const p = progress.get(m.mission_id);
    return {
      mission_id: m.mission_id,
      name: m.name,
      goal: m.goal,
      counter: Math.min(p?.counter ?? 0, m.target),
      target: m.target,
      reward_type: m.reward_type,
      reward: m.reward,
      rewarded: p?.rewarded ? 1 : 0,
      ts_expire: weekEnd(week),
    };
  });
}

export const SeasonPass = Type.Object(
  {
    season: Type.Object(
      {
        season_id: Type.Integer({ minimum: 1, description: 'the season’s number, as the ranks count them' }),
        ts_start: Ts,
        ts_end: Type.Optional(Ts),
      },
      Strict,
    ),
    level: Type.Integer({ minimum: 0, maximum: SEASON_LEVELS }),
    levels: Type.Literal(SEASON_LEVELS, { description: 'the last level' }),
    xp: Type.Integer({ minimum: 0, description: 'experience earned in the season' }),
    xp_level: Type.Literal(SEASON_LEVEL_XP, { description: 'experience per level' }),
    xp_next: Type.Integer({ minimum: 0, description: 'experience still needed for the next level; 0 at the last' }),
    games: Uint,
    games_wins: Uint,
  },
  { ...Strict, $id: 'SeasonPass' },
);

/** The user's pass of the current season: levels from the experience earned in it. */
export async function seasonPassOf(services: Services, userId: number | undefined): Promise<Static<typeof SeasonPass>> {
  const season = seasonOf(services.config.games, services.clock.now());
  const standing = userId === undefined ? undefined : await selectStanding(services.db.kysely, seasonPeriod(season), userId);
  const xp = standing?.xp ?? 0;
  const level = seasonLevel(xp);
  return {
    season: { season_id: season.id, ts_start: season.tsStart, ...(season.tsEnd !== undefined ? { ts_end: season.tsEnd } : {}) },
    level,
    levels: SEASON_LEVELS,
    xp,
    xp_level: SEASON_LEVEL_XP,
    xp_next: level >= SEASON_LEVELS ? 0 : (level + 1) * SEASON_LEVEL_XP - xp,
    games: standing?.games ?? 0,
    games_wins: standing?.wins ?? 0,
  };
}

export const TopEntry = Type.Object(
  {
    position: Type.Integer({ minimum: 0, description: 'place in the week’s top, 1 the first; 0: no game this week' }),
    user_id: Type.Optional(Uint),
    games: Uint,
    games_wins: Uint,
    points: Type.Integer({ minimum: 0, description: 'experience earned this week' }),
  },
  { ...Strict, $id: 'TopEntry' },
);

/** The user's place in the week's top (position 0 before their first game of the week). */
export async function topWeekOf(services: Services, userId: number | undefined): Promise<Static<typeof TopEntry>> {
  const period = weekPeriod(weekOf(services.clock.now()));
  const standing = userId === undefined ? undefined : await selectStanding(services.db.kysely, period, userId);
  if (!standing) return { position: 0, games: 0, games_wins: 0, points: 0 };
  return {
    position: await positionOf(services.db.kysely, period, standing),
    games: standing.games,
    games_wins: standing.wins,
    points: standing.xp,
  };
}

export const TopWeek = Type.Object(
  {
    ts_start: Ts,
    ts_end: Ts,
    count: Uint,
    top: TopEntry,
    list: Type.Array(TopEntry),
    users_data: Type.Array(UserShort),
  },
  { ...Strict, $id: 'TopWeek' },
);

/** The week's top: a page of it with the players' short profiles, and the caller's place. */
export async function topWeekPage(services: Services, userId: number, offset: number, count: number): Promise<Static<typeof TopWeek>> {
  const week = weekOf(services.clock.now());
  const { total, rows } = await selectTop(services.db.kysely, weekPeriod(week), offset, count);
  const users = await loadUsers(
    services,
    rows.map((r) => r.user_id),
    { form: 'short' },
  );
  return {
    ts_start: week,
    ts_end: weekEnd(week),
    count: total,
    top: await topWeekOf(services, userId),
    list: rows.map((r, i) => ({ position: offset + i + 1, user_id: r.user_id, games: r.games, games_wins: r.wins, points: r.xp })),
    users_data: rows.flatMap((r) => {
      const user = users.get(r.user_id);
      return user ? [user] : [];
    }),
  };
}
