import type { Kysely } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * The OAuth provider: registered apps (their secret as SHA-256 only), the authorization codes
 * of the dialog (SHA-256 only, single use), the consent each player gave an app, and on
 * sessions the scopes and app of a session an app obtained (null on a player's own sign-in).
 */
export function oauthMigration(dialect: DialectName) {
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .createTable('oauth_apps')
        .addColumn('app_id', idType, (c) => (dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement()))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('secret_hash', 'text')
        .addColumn('redirect_uris', 'text', (c) => c.notNull())
        .addColumn('scopes', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('public_client', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('oauth_codes')
        .addColumn('code_hash', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'bigint', (c) => c.notNull())
        .addColumn('user_id', 'bigint', (c) => c.notNull())
        .addColumn('redirect_uri', 'text', (c) => c.notNull())
        .addColumn('scopes', 'integer', (c) => c.notNull())
        .addColumn('code_challenge', 'text')
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .addColumn('family_id', 'text')
        .execute();
      await db.schema.createIndex('oauth_codes_expires_at').on('oauth_codes').column('expires_at').execute();
      await db.schema
        .createTable('oauth_consents')
        .addColumn('user_id', 'bigint', (c) => c.notNull())
        .addColumn('app_id', 'bigint', (c) => c.notNull())
        .addColumn('scopes', 'integer', (c) => c.notNull())
        .addColumn('granted_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('oauth_consents_pk', ['user_id', 'app_id'])
        .execute();
      await db.schema.alterTable('sessions').addColumn('scopes', 'integer').execute();
      await db.schema.alterTable('sessions').addColumn('app_id', 'bigint').execute();
      await db.schema.createIndex('sessions_app').on('sessions').columns(['user_id', 'app_id']).execute();
    },
  };
}
