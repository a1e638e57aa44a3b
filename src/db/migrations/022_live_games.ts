import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * Live games: game_live_players holds each account playing a live game (one row each, so a
 * second game is refused by the key), games.deadline the time its next timeout falls due (the
 * scheduler's work list; 0 for the games started before it, so that they are looked at once),
 * games.actions how many actions it has stored (the version a process's cached state is checked
 * against).
 */
export function liveGamesMigration(_dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('game_live_players')
        .addColumn('user_id', 'bigint', (c) => c.primaryKey())
        .addColumn('game_id', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('game_live_players_game').on('game_live_players').column('game_id').execute();
      await db.schema.alterTable('games').addColumn('deadline', 'bigint').execute();
      await db.schema
        .alterTable('games')
        .addColumn('actions', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('games_deadline').on('games').column('deadline').execute();
      await db.schema.createIndex('games_status').on('games').columns(['status', 'game_id']).execute();
      await sql`UPDATE games SET deadline = 0, actions = (SELECT count(*) FROM game_actions a WHERE a.game_id = games.game_id)
        WHERE status = 'live'`.execute(db);
      await sql`INSERT INTO game_live_players (user_id, game_id)
        SELECT p.user_id, max(p.game_id) FROM game_players p JOIN games g ON g.game_id = p.game_id
        WHERE g.status = 'live' GROUP BY p.user_id`.execute(db);
    },
  };
}
