import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * draws: every opening of a case or gift set (who, which items and prototypes, what was
 * received, the odds used, when), with the caller's idempotency key; never removed by the
 * server, so kept for audits as long as the database.
 * promocodes / promocode_uses: codes that grant items, and who used each (once per user).
 */
export function openingsPromocodesMigration(dialect: DialectName) {
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const big = 'bigint' as const;
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('draws')
        .ifNotExists()
        .addColumn('draw_id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('ts', big, (c) => c.notNull())
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('receiver_user_id', big, (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('case_item_id', big, (c) => c.notNull())
        .addColumn('case_item_proto_id', big, (c) => c.notNull())
        .addColumn('key_item_id', big)
        .addColumn('key_item_proto_id', big)
        .addColumn('result_item_ids', 'text', (c) => c.notNull())
        .addColumn('result_item_proto_ids', 'text', (c) => c.notNull())
        .addColumn('odds_version', 'text', (c) => c.notNull())
        .addColumn('odds', 'text', (c) => c.notNull())
        .addColumn('request_id', 'text')
        .addColumn('answer', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('draws_user').ifNotExists().on('draws').columns(['user_id', 'draw_id']).execute();
      await db.schema.createIndex('draws_case_proto').ifNotExists().on('draws').columns(['case_item_proto_id', 'draw_id']).execute();
      await sql`create unique index if not exists draws_request on draws (user_id, request_id) where request_id is not null`.execute(db);

      await db.schema
        .createTable('promocodes')
        .ifNotExists()
        .addColumn('code', 'text', (c) => c.primaryKey())
        .addColumn('item_proto_ids', 'text', (c) => c.notNull())
        .addColumn('max_uses', big)
        .addColumn('uses', big, (c) => c.notNull().defaultTo(0))
        .addColumn('ts_expires', big)
        .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', big, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('promocode_uses')
        .ifNotExists()
        .addColumn('code', 'text', (c) => c.notNull())
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('ts', big, (c) => c.notNull())
        .addColumn('item_ids', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('promocode_uses_pk', ['code', 'user_id'])
        .execute();
    },
  };
}
