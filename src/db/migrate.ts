import { Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import type { Database } from './connection.js';
import { initialMigration } from './migrations/001_initial.js';

function migrationsFor(db: Database): Record<string, Migration> {
  return {
    '001_initial': initialMigration(db.dialect),
  };
}

/** Brings the schema up to date; safe to run on every start and from several processes. */
export async function migrateToLatest(db: Database): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrationsFor(db) };
  // Kysely looks for its bookkeeping tables in every schema unless told which one: on a
  // PostgreSQL server holding several installations, name ours (the connection's schema).
  const migrationTableSchema =
    db.dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db.kysely)).rows[0].schema : undefined;
  const migrator = new Migrator({ db: db.kysely, provider, ...(migrationTableSchema ? { migrationTableSchema } : {}) });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    if (attempt < 5 && isOtherSchemaDropped(error, migrationTableSchema)) continue;
    throw error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * Kysely's introspection reads every schema of the server by name; another installation's
 * schema dropped during that read fails it with "schema ... does not exist" (3F000). Nothing
 * of ours was touched, so the migration is simply run again.
 */
function isOtherSchemaDropped(error: unknown, ownSchema: string | undefined): boolean {
  const e = error as { code?: unknown; message?: unknown };
  return e.code === '3F000' && typeof e.message === 'string' && ownSchema !== undefined && !e.message.includes(`"${ownSchema}"`);
}
