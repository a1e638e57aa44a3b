import type { Kysely } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * games: each game of the classic board game, with what it was started from (board config,
 * players, options, seed); game_actions: every action played in it, in order, from which its
 * state is rebuilt (a game resumes after a restart from them); game_players: who plays in
 * which game, for games.my.
 */
export function gamesMigration(dialect: DialectName) {
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const big = 'bigint' as const;
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('games')
        .ifNotExists()
        .addColumn('game_id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('config', 'text', (c) => c.notNull())
        .addColumn('players', 'text', (c) => c.notNull())
        .addColumn('options', 'text', (c) => c.notNull())
        .addColumn('seed', 'text', (c) => c.notNull())
        .addColumn('ts_start', big, (c) => c.notNull())
        .addColumn('ts_end', big)
        .addColumn('winner_user_id', big)
        .execute();
      await db.schema
        .createTable('game_actions')
        .ifNotExists()
        .addColumn('game_id', big, (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addColumn('user_id', big)
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('ts', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('game_actions_pk', ['game_id', 'seq'])
        .execute();
      await db.schema
        .createTable('game_players')
        .ifNotExists()
        .addColumn('game_id', big, (c) => c.notNull())
        .addColumn('user_id', big, (c) => c.notNull())
        .addPrimaryKeyConstraint('game_players_pk', ['user_id', 'game_id'])
        .execute();
    },
  };
}
