import type { Kysely } from 'kysely';

/** A promo code may pay money: kopecks credited to the wallet of each user who redeems it (0: none). */
export function promocodeMoneyMigration() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .alterTable('promocodes')
        .addColumn('money', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
    },
  };
}
