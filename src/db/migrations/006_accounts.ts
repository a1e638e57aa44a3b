import { sql, type Kysely } from 'kysely';

/**
 * Accounts players run themselves: whether the e-mail address was confirmed, a TOTP secret
 * being set up (not yet active), one-time tokens sent by e-mail (confirmation, password
 * reset: only their SHA-256 is kept), recovery codes for two-factor sign-in (hashed), and
 * what the sessions list shows (client, last use). Domains are unique whatever their case.
 */
export function accountsMigration() {
  const big = 'bigint' as const;
  return {
    async up(db: Kysely<any>): Promise<void> {
      await db.schema
        .alterTable('users')
        .addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('users').addColumn('totp_pending', 'text').execute();
      await sql`create unique index users_domain_lower on users (lower(domain))`.execute(db);
      await db.schema.alterTable('sessions').addColumn('user_agent', 'text').execute();
      await db.schema.alterTable('sessions').addColumn('last_used', big).execute();

      await db.schema
        .createTable('account_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', big, (c) => c.notNull())
        /** verify_email | reset_password */
        .addColumn('purpose', 'text', (c) => c.notNull())
        /** The address a verify_email token confirms. */
        .addColumn('email', 'text')
        .addColumn('expires_at', big, (c) => c.notNull())
        .addColumn('used_at', big)
        .addColumn('created_at', big, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('account_tokens_user').on('account_tokens').columns(['user_id', 'purpose']).execute();

      await db.schema
        .createTable('recovery_codes')
        .addColumn('user_id', big, (c) => c.notNull())
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('used_at', big)
        .addPrimaryKeyConstraint('recovery_codes_pk', ['user_id', 'code_hash'])
        .execute();
    },
  };
}
