import { closeSync, openSync, readSync } from 'node:fs';

/** The first bytes of every SQLite database file. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** Whether `path` is a SQLite database file (following links); false when it cannot be read. */
function isSqliteDatabase(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const head = Buffer.alloc(SQLITE_HEADER.length);
    return readSync(fd, head, 0, head.length, 0) === head.length && head.equals(SQLITE_HEADER);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The files SQLite keeps beside a database, by the suffix of their names. */
export const SQLITE_COMPANIONS: readonly [suffix: string, what: string][] = [
  ['-wal', 'write-ahead log'],
  ['-shm', 'shared-memory index'],
  ['-journal', 'rollback journal'],
];

/** Beside those, the server's secret key file (src/db/secret-key.ts). */
const COMPANIONS = [...SQLITE_COMPANIONS, ['.key', 'secret key file']] as const;

/**
 * What `path` is to a SQLite database, when it is one or one of its companions (its write-ahead
 * log, shared-memory index, rollback journal or secret key file): a file that writing anything
 * else over would ruin. Undefined for any other path.
 */
export function sqliteFileAt(path: string): string | undefined {
  if (isSqliteDatabase(path)) return 'a SQLite database';
  for (const [suffix, what] of COMPANIONS) {
    if (!path.endsWith(suffix)) continue;
    const database = path.slice(0, -suffix.length);
    if (isSqliteDatabase(database)) return `the ${what} of ${database}`;
  }
  return undefined;
}
