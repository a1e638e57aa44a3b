import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Database } from './connection.js';
import type { Tables } from './tables.js';
import { initialMigration } from './migrations/001_initial.js';

/**
 * PostgreSQL advisory lock held while migrating. Kysely's migrator reads the catalogue of
 * every schema on the server; anything that drops schemas on the same server (another
 * installation being removed, a test harness) takes this lock too, so that read never sees
 * a schema vanish under it.
 */
export const SCHEMA_CHANGE_LOCK = 7_171_717;

function migrationsFor(db: Database): Record<string, Migration> {
  return {
    '001_initial': initialMigration(db.dialect),
  };
}

/** Brings the schema up to date; safe to run on every start and from several processes. */
export async function migrateToLatest(db: Database): Promise<string[]> {
  if (db.dialect !== 'postgres') return migrate(db, db.kysely, undefined);
  return db.kysely.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(${SCHEMA_CHANGE_LOCK})`.execute(connection);
    try {
      const schema = (await sql<{ schema: string }>`select current_schema() as schema`.execute(connection)).rows[0].schema;
      return await migrate(db, connection, schema);
    } finally {
      await sql`select pg_advisory_unlock(${SCHEMA_CHANGE_LOCK})`.execute(connection);
    }
  });
}

async function migrate(db: Database, kysely: Kysely<Tables>, migrationTableSchema: string | undefined): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrationsFor(db) };
  // Kysely looks for its bookkeeping tables in every schema unless told which one: on a
  // PostgreSQL server holding several installations, name ours (the connection's schema).
  const migrator = new Migrator({ db: kysely, provider, ...(migrationTableSchema ? { migrationTableSchema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
