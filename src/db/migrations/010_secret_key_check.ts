import type { Kysely } from 'kysely';

/**
 * The check of the secret key that seals stored secrets (TOTP secrets): one row holding a
 * known text sealed with the key. A server started with another key cannot open it and
 * refuses to start, instead of failing later on a user's sign-in. The secrets stored in clear
 * until now are sealed on the first start after this migration (see sealStoredSecrets).
 */
export function secretKeyCheckMigration() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('secret_key_check')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('verifier', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
