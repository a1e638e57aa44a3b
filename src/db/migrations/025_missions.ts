import type { Kysely } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * Missions and what games leave for the home screen: missions (the operator's weekly goals and
 * their rewards), mission_progress (each player's count towards a mission in one week, and
 * when its reward was given: once, by the row), and game_stats (each player's games, wins and
 * experience in a period: a week, `w` and its Monday, for the weekly top; a season, `s` and
 * its month, for the season's pass).
 */
export function missionsMigration(dialect: DialectName) {
  const idType = dialect === 'postgres' ? 'serial' : 'integer';
  const big = 'bigint' as const;
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('missions')
        .addColumn('mission_id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('goal', 'text', (c) => c.notNull())
        .addColumn('target', 'integer', (c) => c.notNull())
        .addColumn('reward_type', 'text', (c) => c.notNull())
        .addColumn('reward', 'integer', (c) => c.notNull())
        .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('ts_created', big, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('mission_progress')
        .addColumn('mission_id', 'integer', (c) => c.notNull())
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('week', big, (c) => c.notNull())
        .addColumn('counter', 'integer', (c) => c.notNull())
        .addColumn('ts_rewarded', big)
        .addPrimaryKeyConstraint('mission_progress_pk', ['user_id', 'week', 'mission_id'])
        .execute();
      await db.schema.createIndex('mission_progress_mission').on('mission_progress').columns(['mission_id', 'week']).execute();
      await db.schema
        .createTable('game_stats')
        .addColumn('period', 'text', (c) => c.notNull())
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('games', 'integer', (c) => c.notNull())
        .addColumn('wins', 'integer', (c) => c.notNull())
        .addColumn('xp', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('game_stats_pk', ['period', 'user_id'])
        .execute();
      await db.schema.createIndex('game_stats_rank').on('game_stats').columns(['period', 'xp', 'wins']).execute();
    },
  };
}
