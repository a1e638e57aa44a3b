import { closeSync, existsSync, openSync, renameSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { describeDatabaseUrl } from '../db/connection.js';
import { keyFileOf, readKeyFile } from '../db/secret-key.js';
import { SecretBox, SecretKeyError, parseSecretKey } from '../infra/secret-box.js';

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
    "The dump's TOTP (two-factor) values are sealed with SECRET_KEY: keep the key as well, apart from the dumps; a restored database needs it.",
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
  // SQLite gives the copy (and its journal) the mode of this empty file: 0600.
  closeSync(openSync(partial, 'wx', 0o600));
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

/**
 * `game-platform backup FILE`: a consistent copy of a live SQLite database, checked, mode
 * 0600. `keyFile`: the key file beside the database, which the copy's TOTP secrets need.
 */
export async function backupSqlite(databaseUrl: string, file: string): Promise<{ users: number; items: number; keyFile?: string }> {
  const from = sqlitePath(databaseUrl);
  if (!existsSync(from)) throw new BackupError(`no database at ${from}`);
  const to = resolve(file);
  if (to === from) throw new BackupError('the backup must go to another file than the database');
  await copySqlite(from, to);
  const keyFile = keyFileOf(from);
  return { ...checkDatabaseFile(to), ...(existsSync(keyFile) ? { keyFile } : {}) };
}

/** The key check row of a database file, when it has one (databases made before secrets were sealed have none). */
function storedKeyCheck(path: string): { fingerprint: string; verifier: string } | undefined {
  const db = new SQLite(path, { readonly: true, fileMustExist: true });
  try {
    const table = db.prepare("select count(*) as n from sqlite_master where type = 'table' and name = 'secret_key_check'").get() as {
      n: number;
    };
    if (table.n === 0) return undefined;
    return db.prepare('select fingerprint, verifier from secret_key_check where id = 1').get() as
      { fingerprint: string; verifier: string } | undefined;
  } finally {
    db.close();
  }
}

/**
 * Checks, before anything is replaced, that the key the restored database will be opened
 * with (SECRET_KEY, else the key file beside it) opens the backup's sealed secrets.
 */
function checkRestoreKey(backup: string, database: string, configuredKey: string | undefined): void {
  const check = storedKeyCheck(backup);
  if (!check) return;
  const keyFile = keyFileOf(database);
  let box: SecretBox;
  let origin: string;
  try {
    if (configuredKey !== undefined) {
      box = new SecretBox(parseSecretKey(configuredKey, 'SECRET_KEY'));
      origin = 'SECRET_KEY (--secret-key)';
    } else if (existsSync(keyFile)) {
      box = new SecretBox(readKeyFile(keyFile));
      origin = keyFile;
    } else {
      throw new BackupError(
        `the TOTP secrets in ${backup} are sealed with a secret key (fingerprint ${check.fingerprint}) that is not here: ` +
          `put the key file kept with the database at ${keyFile}, or give the key in SECRET_KEY (--secret-key), and restore again`,
      );
    }
  } catch (error) {
    if (error instanceof SecretKeyError) throw new BackupError(error.message);
    throw error;
  }
  try {
    box.open(check.verifier);
  } catch (error) {
    if (!(error instanceof SecretKeyError)) throw error;
    throw new BackupError(
      `the key from ${origin} (fingerprint ${box.fingerprint}) does not open the TOTP secrets in ${backup}, ` +
        `sealed with the key whose fingerprint is ${check.fingerprint}: give that key, and restore again`,
    );
  }
}

/**
 * `game-platform restore FILE`: the database becomes the backup. The backup is checked first;
 * servers on the database must be stopped (they would keep what they hold in memory).
 */
export async function restoreSqlite(
  databaseUrl: string,
  file: string,
  secretKey: string | undefined,
): Promise<{ users: number; items: number }> {
  const to = sqlitePath(databaseUrl);
  const from = resolve(file);
  if (!existsSync(from)) throw new BackupError(`no backup at ${from}`);
  if (to === from) throw new BackupError('the backup is the database itself');
  checkDatabaseFile(from);
  checkRestoreKey(from, to, secretKey);
  for (const leftover of [`${to}-wal`, `${to}-shm`]) rmSync(leftover, { force: true });
  await copySqlite(from, to);
  return checkDatabaseFile(to);
}
