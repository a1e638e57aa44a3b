import { existsSync, renameSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { describeDatabaseUrl } from '../db/connection.js';

/** Pages copied by the first step of a backup; the rest goes in one step (see sqliteBackup). */
const FIRST_STEP_PAGES = 100;

export class BackupError extends Error {}

/** How to back up and restore a PostgreSQL database: its own tools do it. */
export function postgresBackupAdvice(url: string): string {
  const shown = describeDatabaseUrl(url);
  return [
    'On PostgreSQL, back up with pg_dump (a consistent snapshot while the servers run and write):',
    `  pg_dump --format=custom --file FILE '${shown}'`,
    'and restore into an empty database (servers stopped) with pg_restore:',
    `  pg_restore --no-owner --exit-on-error --dbname '${shown}' FILE`,
    'Continuous archiving (WAL) and point-in-time recovery: the PostgreSQL manual, "Backup and Restore".',
  ].join('\n');
}

function sqlitePath(url: string): string {
  if (!url.startsWith('sqlite:')) throw new BackupError(postgresBackupAdvice(url));
  const path = url.slice('sqlite:'.length);
  if (path === '' || path === ':memory:') throw new BackupError('an in-memory database cannot be backed up');
  return resolve(path);
}

/** Checks a SQLite file: whole (integrity check) and a database of this server (migrated). */
function checkDatabaseFile(path: string): { users: number; items: number } {
  const db = new SQLite(path, { readonly: true, fileMustExist: true });
  try {
    const integrity = db.pragma('integrity_check', { simple: true });
    if (integrity !== 'ok') throw new BackupError(`${path} is damaged: ${String(integrity)}`);
    const migrated = db.prepare("select count(*) as n from sqlite_master where type = 'table' and name = 'kysely_migration'").get() as {
      n: number;
    };
    if (migrated.n === 0) throw new BackupError(`${path} is not a game-platform database`);
    const count = (table: string) => (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
    return { users: count('users'), items: count('items') };
  } finally {
    db.close();
  }
}

/**
 * Copies a SQLite database with SQLite's online backup API while servers read and write it
 * (write-ahead log: the copy holds a read snapshot and never blocks them). After a first
 * small step the rest is copied in one step, one snapshot: in small steps, every write by
 * another connection between two steps would start the copy over. The copy is written
 * beside `to` and renamed into place once whole, as a single file (no write-ahead log).
 */
async function copySqlite(from: string, to: string): Promise<void> {
  const partial = `${to}.partial`;
  rmSync(partial, { force: true });
  const source = new SQLite(from, { fileMustExist: true });
  try {
    source.pragma('busy_timeout = 5000');
    await source.backup(partial, { progress: ({ remainingPages }) => Math.max(FIRST_STEP_PAGES, remainingPages) });
  } finally {
    source.close();
  }
  const copy = new SQLite(partial);
  try {
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
  renameSync(partial, to);
}

/** `game-platform backup FILE`: a consistent copy of a live SQLite database, checked. */
export async function backupSqlite(databaseUrl: string, file: string): Promise<{ users: number; items: number }> {
  const from = sqlitePath(databaseUrl);
  if (!existsSync(from)) throw new BackupError(`no database at ${from}`);
  const to = resolve(file);
  if (to === from) throw new BackupError('the backup must go to another file than the database');
  await copySqlite(from, to);
  return checkDatabaseFile(to);
}

/**
 * `game-platform restore FILE`: the database becomes the backup. The backup is checked first;
 * servers on the database must be stopped (they would keep what they hold in memory).
 */
export async function restoreSqlite(databaseUrl: string, file: string): Promise<{ users: number; items: number }> {
  const to = sqlitePath(databaseUrl);
  const from = resolve(file);
  if (!existsSync(from)) throw new BackupError(`no backup at ${from}`);
  if (to === from) throw new BackupError('the backup is the database itself');
  checkDatabaseFile(from);
  for (const leftover of [`${to}-wal`, `${to}-shm`]) rmSync(leftover, { force: true });
  await copySqlite(from, to);
  return checkDatabaseFile(to);
}
