import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * Trades between users: the trade, its items as they were when it was made, and the
 * append-only ledger of every item a trade moved; and each user's trade privacy.
 */
export function tradesMigration(dialect: DialectName) {
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const big = 'bigint' as const;
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .alterTable('users')
        .addColumn('trades_income', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema
        .alterTable('users')
        .addColumn('trades_income_from_friends', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .alterTable('users')
        .addColumn('trades_income_gifts', 'integer', (c) => c.notNull().defaultTo(1))
        .execute();
      await db.schema
        .alterTable('users')
        .addColumn('trades_income_gifts_autoaccept', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();

      await db.schema
        .createTable('trades')
        .addColumn('trade_id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('user_id_from', big, (c) => c.notNull())
        .addColumn('user_id_to', big, (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('create_time', big, (c) => c.notNull())
        .addColumn('reaction_time', big)
        .execute();
      // Lists: a user's open trades either way, and their history, newest first.
      await db.schema.createIndex('trades_outgoing').on('trades').columns(['user_id_from', 'status', 'trade_id']).execute();
      await db.schema.createIndex('trades_incoming').on('trades').columns(['user_id_to', 'status', 'trade_id']).execute();
      // Expiry reads open trades by age.
      await sql`create index trades_open_by_age on trades (create_time) where status = 0`.execute(db);

      await db.schema
        .createTable('trade_items')
        .addColumn('trade_id', big, (c) => c.notNull())
        .addColumn('item_id', big, (c) => c.notNull())
        .addColumn('side', 'integer', (c) => c.notNull())
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('item_proto_id', big, (c) => c.notNull())
        .addColumn('ts_owned', big, (c) => c.notNull())
        .addColumn('ts_can_trade', big, (c) => c.notNull())
        .addColumn('data', 'text')
        .addPrimaryKeyConstraint('trade_items_pk', ['trade_id', 'item_id'])
        .execute();
      // Every trade holding an item: what invalidates when the item moves or ends.
      await db.schema.createIndex('trade_items_by_item').on('trade_items').columns(['item_id', 'trade_id']).execute();

      await db.schema
        .createTable('trade_moves')
        .addColumn('move_id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('trade_id', big, (c) => c.notNull())
        .addColumn('item_id', big, (c) => c.notNull())
        .addColumn('from_user_id', big, (c) => c.notNull())
        .addColumn('to_user_id', big, (c) => c.notNull())
        .addColumn('ts', big, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('trade_moves_trade').on('trade_moves').column('trade_id').execute();
    },
  };
}
