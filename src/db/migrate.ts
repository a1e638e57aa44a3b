import pg from 'pg';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Database } from './connection.js';
import type { Tables } from './tables.js';
import { elementAt } from '../infra/elements.js';
import { initialMigration } from './migrations/001_initial.js';
import { bannedUsersMigration } from './migrations/002_banned_users.js';
import { ownedItemIndexesMigration } from './migrations/003_owned_item_indexes.js';
import { openingsPromocodesMigration } from './migrations/004_openings_promocodes.js';
import { rankFormsMigration } from './migrations/005_rank_forms.js';
import { accountsMigration } from './migrations/006_accounts.js';
import { signinSourcesMigration } from './migrations/007_signin_sources.js';
import { tradesMigration } from './migrations/008_trades.js';
import { userSearchMigration } from './migrations/009_user_search.js';
import { secretKeyCheckMigration } from './migrations/010_secret_key_check.js';
import { tradeFunctionsMigration } from './migrations/011_trade_functions.js';
import { tradeFunctionPlansMigration } from './migrations/012_trade_function_plans.js';
import { tradeCreationWindowMigration } from './migrations/013_trade_creation_window.js';
import { tradeOfferAdmissionMigration } from './migrations/014_trade_offer_admission.js';
import { privateMessagesMigration } from './migrations/016_private_messages.js';
import { marketMigration } from './migrations/017_market.js';
import { gamesMigration } from './migrations/018_games.js';
import { oauthMigration } from './migrations/019_oauth.js';
import { promocodeMoneyMigration } from './migrations/020_promocode_money.js';
import { liveGamesMigration } from './migrations/022_live_games.js';
import { roomsMigration } from './migrations/023_rooms.js';
import { gameResultsMigration } from './migrations/024_game_results.js';
import { missionsMigration } from './migrations/025_missions.js';
import { auditTargetMigration } from './migrations/027_audit_target.js';
import { sealStoredSecrets } from './sealed-secrets.js';

/**
 * PostgreSQL advisory lock held while migrating, so that processes starting together on one
 * schema migrate it one after the other; dropping a schema (dropPostgresSchema) takes it too.
 */
export const SCHEMA_CHANGE_LOCK = 7_171_717;

/** Every migration, by name in the order they apply. */
export function migrationsFor(db: Database): Record<string, Migration> {
  return {
    '001_initial': initialMigration(db.dialect),
    '002_banned_users': bannedUsersMigration(),
    '003_owned_item_indexes': ownedItemIndexesMigration(),
    '004_openings_promocodes': openingsPromocodesMigration(db.dialect),
    '005_rank_forms': rankFormsMigration(),
    '006_accounts': accountsMigration(),
    '007_signin_sources': signinSourcesMigration(),
    '008_trades': tradesMigration(db.dialect),
    '009_user_search': userSearchMigration(db.dialect),
    '010_secret_key_check': secretKeyCheckMigration(),
    '011_trade_functions': tradeFunctionsMigration(db.dialect),
    '012_trade_function_plans': tradeFunctionPlansMigration(db.dialect),
    '013_trade_creation_window': tradeCreationWindowMigration(db.dialect),
    '014_trade_offer_admission': tradeOfferAdmissionMigration(db.dialect),
    '016_private_messages': privateMessagesMigration(db.dialect),
    '017_market': marketMigration(db.dialect),
    '018_games': gamesMigration(db.dialect),
    '019_oauth': oauthMigration(db.dialect),
    '020_promocode_money': promocodeMoneyMigration(),
    '022_live_games': liveGamesMigration(db.dialect),
    '023_rooms': roomsMigration(db.dialect),
    '024_game_results': gameResultsMigration(db.dialect),
    '025_missions': missionsMigration(db.dialect),
    '027_audit_target': auditTargetMigration(db.dialect),
  };
}

/**
 * Brings the schema up to date, then checks the secret key and seals the secrets stored in
 * clear (sealStoredSecrets: a wrong key is refused with SecretKeyError); safe to run on
 * every start and from several processes.
 */
export async function migrateToLatest(db: Database): Promise<string[]> {
  if (db.dialect === 'sqlite') {
    // Kysely migrates SQLite outside a transaction and without a lock, so two processes
    // starting on one new file would both create the schema. One write transaction makes
    // the others wait (busy timeout) and then find the schema in place; it also makes a
    // migration all or nothing.
    return db.kysely.connection().execute(async (connection) => {
      await sql`begin immediate`.execute(connection);
      try {
        const applied = await migrate(db, connection, undefined);
        await sealStoredSecrets(connection, db, nowSeconds());
        await sql`commit`.execute(connection);
        return applied;
      } catch (error) {
        // SQLite may already have rolled back on its own; the migration's error is what matters.
        await sql`rollback`.execute(connection).catch(() => undefined);
        throw error;
      }
    });
  }
  return db.kysely.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(${SCHEMA_CHANGE_LOCK})`.execute(connection);
    try {
      const { schema } = elementAt((await sql<{ schema: string }>`select current_schema() as schema`.execute(connection)).rows, 0);
      const applied = await migrate(db, connection, schema);
      await sql`begin`.execute(connection);
      try {
        await sealStoredSecrets(connection, db, nowSeconds());
        await sql`commit`.execute(connection);
      } catch (error) {
        await sql`rollback`.execute(connection).catch(() => undefined);
        throw error;
      }
      return applied;
    } finally {
      await sql`select pg_advisory_unlock(${SCHEMA_CHANGE_LOCK})`.execute(connection);
    }
  });
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

async function migrate(db: Database, kysely: Kysely<Tables>, migrationTableSchema: string | undefined): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrationsFor(db) };
  // Kysely looks for its bookkeeping tables in every schema unless told which one: on a
  // PostgreSQL server holding several installations, name ours (the connection's schema).
  const migrator = new Migrator({ db: kysely, provider, ...(migrationTableSchema ? { migrationTableSchema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Drops one installation's schema from a PostgreSQL server, under the schema-change lock. */
export async function dropPostgresSchema(url: string, schema: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error('invalid schema name');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [SCHEMA_CHANGE_LOCK]);
    await client.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await client.end();
  }
}
