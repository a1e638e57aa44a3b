import { closeSync, existsSync, openSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { describeDatabaseUrl } from '../db/connection.js';
import { keyFileOf, readKeyFile } from '../db/secret-key.js';
import { SQLITE_COMPANIONS } from '../db/database-files.js';
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
function checkDatabaseFile(path: string, shown = path): { users: number; items: number } {
  const db = new SQLite(path, { readonly: true, fileMustExist: true });
  try {
    const integrity = db.pragma('integrity_check', { simple: true });
    if (integrity !== 'ok') throw new BackupError(`${shown} is damaged: ${String(integrity)}`);
    const migrated = db.prepare("select count(*) as n from sqlite_master where type = 'table' and name = 'kysely_migration'").get() as {
      n: number;
    };
    if (migrated.n === 0) throw new BackupError(`${shown} is not a game-platform database`);
    const count = (table: string) => (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
    return { users: count('users'), items: count('items') };
  } finally {
    db.close();
  }
}

/** `path` made absolute, with the links and `..` of its directory resolved: the file itself need not exist. */
function canonicalPath(path: string): string {
  const full = resolve(path);
  try {
    return join(realpathSync(dirname(full)), basename(full));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return full;
    throw error;
  }
}

/**
 * The files a database stands on, by canonical path, with what each is. SQLite keeps its
 * companions beside the file a link leads to; the key file is beside the name given.
 */
function databaseFiles(database: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const path of new Set([database, realpathSync(database)])) {
    files.set(canonicalPath(path), 'the database itself');
    for (const [suffix, what] of SQLITE_COMPANIONS) files.set(canonicalPath(`${path}${suffix}`), `the database's ${what}`);
  }
  files.set(canonicalPath(keyFileOf(database)), "the database's secret key file");
  return files;
}

/** Refuses, before anything is written, a backup target that would replace a file of the database, or that is a directory. */
function checkBackupTarget(to: string, database: string): void {
  const files = databaseFiles(database);
  const target = files.get(canonicalPath(to));
  if (target) throw new BackupError(`${to} is ${target}: the backup must go to a file of its own`);
  const partial = files.get(canonicalPath(`${to}.partial`));
  if (partial) throw new BackupError(`${to}.partial, where the backup is written first, is ${partial}: the backup must go to another file`);
  if (!existsSync(dirname(to))) throw new BackupError(`there is no directory ${dirname(to)} for the backup`);
  if (existsSync(to) && statSync(to).isDirectory())
    throw new BackupError(`${to} is a directory: give the backup's file name (${join(to, basename(database))}, say)`);
}

/**
 * Refuses while another connection has the database open: a restore would replace the file
 * under it, and it would go on writing into the old one. Every connection to a database in
 * write-ahead-log mode (the mode servers open it in) holds a shared lock on the file from its
 * first read until it closes, idle or not, so the exclusive lock is refused at once (no busy
 * wait). Refusing changes nothing.
 */
function checkNotInUse(database: string): void {
  if (!existsSync(database)) return;
  const db = new SQLite(database, { fileMustExist: true, timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('ROLLBACK');
  } catch (error) {
    if (!(error instanceof SQLite.SqliteError)) throw error;
    if (error.code.startsWith('SQLITE_BUSY'))
      throw new BackupError(`${database} is open in another process (a server?): stop the servers on it first, then restore`);
    // A file that is no database: nothing serves it, and it is what a restore mends.
    if (error.code !== 'SQLITE_NOTADB' && error.code !== 'SQLITE_CORRUPT') throw error;
  } finally {
    db.close();
  }
}

/**
 * Copies a SQLite database with SQLite's online backup API while servers read and write it
 * (write-ahead log: the copy holds a read snapshot and never blocks them). After a first
 * small step the rest is copied in one step, one snapshot: in small steps, every write by
 * another connection between two steps would start the copy over. The copy is written
 * beside `to`, checked, and renamed into place (after `beforeRename`) as a single file (no
 * write-ahead log); on any failure it is removed.
 */
async function copySqlite(from: string, to: string, beforeRename?: () => void): Promise<{ users: number; items: number }> {
  const partial = `${to}.partial`;
  rmSync(partial, { force: true });
  // SQLite gives the copy (and its journal) the mode of this empty file: 0600.
  closeSync(openSync(partial, 'wx', 0o600));
  try {
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
    const counts = checkDatabaseFile(partial, `the copy of ${from}`);
    beforeRename?.();
    renameSync(partial, to);
    return counts;
  } catch (error) {
    for (const file of [partial, ...SQLITE_COMPANIONS.map(([suffix]) => `${partial}${suffix}`)]) rmSync(file, { force: true });
    throw error;
  }
}

/**
 * `game-platform backup FILE`: a consistent copy of a live SQLite database, checked, mode
 * 0600. `keyFile`: the key file beside the database, which the copy's TOTP secrets need.
 */
export async function backupSqlite(databaseUrl: string, file: string): Promise<{ users: number; items: number; keyFile?: string }> {
  const from = sqlitePath(databaseUrl);
  if (!existsSync(from)) throw new BackupError(`no database at ${from}`);
  const to = resolve(file);
  checkBackupTarget(to, from);
  const counts = await copySqlite(from, to);
  const keyFile = keyFileOf(from);
  return { ...counts, ...(existsSync(keyFile) ? { keyFile } : {}) };
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
 * it is refused while servers have the database open (checked again just before the database
 * is replaced, as the copy takes a while).
 */
export async function restoreSqlite(
  databaseUrl: string,
  file: string,
  secretKey: string | undefined,
): Promise<{ users: number; items: number }> {
  const to = sqlitePath(databaseUrl);
  const from = resolve(file);
  if (!existsSync(from)) throw new BackupError(`no backup at ${from}`);
  if (canonicalPath(from) === canonicalPath(to)) throw new BackupError('the backup is the database itself');
  if (canonicalPath(from) === canonicalPath(`${to}.partial`))
    throw new BackupError(`the copy of the backup is written to ${to}.partial first: give the backup another name`);
  checkDatabaseFile(from);
  checkRestoreKey(from, to, secretKey);
  checkNotInUse(to);
  return copySqlite(from, to, () => {
    checkNotInUse(to);
    for (const [suffix] of SQLITE_COMPANIONS) rmSync(`${to}${suffix}`, { force: true });
  });
}
