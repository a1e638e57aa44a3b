import type { Kysely } from 'kysely';

/**
 * Where each account has signed in successfully: addresses, and device tokens the server
 * issued (stored as SHA-256). Sign-in from one of them is not held back by other addresses'
 * failures.
 */
export function signinSourcesMigration() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('signin_sources')
        .addColumn('user_id', 'bigint', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('last_seen', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('signin_sources_pk', ['user_id', 'kind', 'value'])
        .execute();
      await db.schema.createIndex('signin_sources_last_seen').on('signin_sources').column('last_seen').execute();
    },
  };
}
