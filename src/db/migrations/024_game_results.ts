import type { Kysely } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * Game results and ranks: games.results holds each seat's place, xp and rank points once a game
 * is over (JSON; null while it is live); game_ranks holds each player's rank points and games of
 * each season, from which the rank users.get shows is written.
 */
export function gameResultsMigration(_dialect: DialectName) {
  const big = 'bigint' as const;
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema.alterTable('games').addColumn('results', 'text').execute();
      await db.schema
        .createTable('game_ranks')
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('season', 'integer', (c) => c.notNull())
        .addColumn('pts', 'integer', (c) => c.notNull())
        .addColumn('games', 'integer', (c) => c.notNull())
        .addColumn('wins', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('game_ranks_pk', ['user_id', 'season'])
        .execute();
      await db.schema.createIndex('game_ranks_season').on('game_ranks').columns(['season', 'pts']).execute();
    },
  };
}
