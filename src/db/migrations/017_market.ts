import type { Kysely } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * Money and the item market: each user's balance in kopecks, the double-entry ledger (a
 * transfer and its entries, which sum to zero), the items on sale (an item on sale is in state
 * `listed`, which every check of an owned item refuses), the sales made, shop purchases by
 * request id and the users whose market use is frozen.
 */
export function marketMigration(dialect: DialectName) {
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const big = 'bigint' as const;
  const serial = (c: any) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement());
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('balances')
        .addColumn('user_id', big, (c) => c.primaryKey())
        .addColumn('balance', big, (c) => c.notNull().defaultTo(0))
        .execute();

      await db.schema
        .createTable('ledger_transfers')
        .addColumn('transfer_id', idType, serial)
        .addColumn('ts', big, (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('item_id', big)
        .addColumn('item_proto_id', big)
        .addColumn('listing_id', big)
        .addColumn('reason', 'text')
        .execute();

      await db.schema
        .createTable('ledger_entries')
        .addColumn('entry_id', idType, serial)
        .addColumn('transfer_id', big, (c) => c.notNull())
        .addColumn('account_id', big, (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('amount', big, (c) => c.notNull())
        // A user's balance after the entry; none for the platform's accounts.
        .addColumn('balance_after', big)
        .execute();
      await db.schema.createIndex('ledger_entries_by_account').on('ledger_entries').columns(['account_id', 'entry_id']).execute();
      await db.schema.createIndex('ledger_entries_by_transfer').on('ledger_entries').column('transfer_id').execute();

      await db.schema
        .createTable('market_listings')
        .addColumn('listing_id', idType, serial)
        .addColumn('item_id', big, (c) => c.notNull().unique())
        .addColumn('seller_id', big, (c) => c.notNull())
        .addColumn('item_proto_id', big, (c) => c.notNull())
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('quality_id', 'integer', (c) => c.notNull())
        .addColumn('price', big, (c) => c.notNull())
        .addColumn('ts_listed', big, (c) => c.notNull())
        .addColumn('ts_expires', big, (c) => c.notNull())
        .execute();
      // getListing: a prototype's listings, cheapest first, and their count, from the index alone; search: by type and class.
      await db.schema
        .createIndex('market_listings_by_price')
        .on('market_listings')
        .columns(['item_proto_id', 'price', 'listing_id', 'ts_expires'])
        .execute();
      await db.schema.createIndex('market_listings_by_class').on('market_listings').columns(['type', 'quality_id']).execute();
      await db.schema.createIndex('market_listings_by_seller').on('market_listings').columns(['seller_id', 'listing_id']).execute();
      await db.schema.createIndex('market_listings_by_expiry').on('market_listings').column('ts_expires').execute();

      await db.schema
        .createTable('market_sales')
        .addColumn('sale_id', idType, serial)
        .addColumn('listing_id', big, (c) => c.notNull())
        .addColumn('item_id', big, (c) => c.notNull())
        .addColumn('item_proto_id', big, (c) => c.notNull())
        .addColumn('seller_id', big, (c) => c.notNull())
        .addColumn('buyer_id', big, (c) => c.notNull())
        .addColumn('price', big, (c) => c.notNull())
        .addColumn('fee', big, (c) => c.notNull())
        .addColumn('ts', big, (c) => c.notNull())
        .execute();

      // Shop purchases by request id, answered again for a retry.
      await db.schema
        .createTable('shop_purchases')
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('ts', big, (c) => c.notNull())
        .addColumn('answer', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('shop_purchases_pk', ['user_id', 'request_id'])
        .execute();

      // Users whose market use an administrator froze.
      await db.schema
        .createTable('market_freezes')
        .addColumn('user_id', big, (c) => c.primaryKey())
        .addColumn('ts', big, (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
