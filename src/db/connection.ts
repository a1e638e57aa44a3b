import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, SqliteDialect, sql, type LogEvent, type Transaction } from 'kysely';
import type { Tables } from './tables.js';
import { CurrentSchemaPostgresDialect } from './schema-introspector.js';
import { WRITER_CHECKPOINT_PAGES, startCheckpointer } from './checkpointer.js';
import { secretKeyFor, type SecretKeySource } from './secret-key.js';
import { SecretBox, parseSecretKey } from '../infra/secret-box.js';
import type { Config } from '../config.js';
import { keepStatementsPrepared } from './prepared-statements.js';

const previousBox = (text: string | undefined) =>
  text === undefined ? undefined : new SecretBox(parseSecretKey(text, 'PREVIOUS_SECRET_KEY'));

export type DialectName = 'sqlite' | 'postgres';
export type Executor = Kysely<Tables> | Transaction<Tables>;

/**
 * Runs `work` in one transaction and answers what it returns. Code that writes takes one
 * where its caller may need the writes to commit together with its own (an admin action with
 * its audit entry); elsewhere it is the database's own, `ownTransaction`.
 */
export type InTransaction = <T>(work: (trx: Transaction<Tables>) => Promise<T>) => Promise<T>;

/** A new transaction of the database for each call. */
export function ownTransaction(db: { kysely: Kysely<Tables> }): InTransaction {
  return (work) => db.kysely.transaction().execute(work);
}

/** `inTransaction`, with `more` run in each of its transactions after the work: both commit or neither. */
export function followedBy(inTransaction: InTransaction, more: (trx: Transaction<Tables>) => Promise<void>): InTransaction {
  return (work) =>
    inTransaction(async (trx) => {
      const result = await work(trx);
      await more(trx);
      return result;
    });
}

export interface Database {
  kysely: Kysely<Tables>;
  dialect: DialectName;
  /** Checks that the database answers (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** Calls `listener` after every statement with its time, ms (metrics); undefined stops it. */
  onQuery(listener: QueryListener | undefined): void;
  /** PostgreSQL: connections of the pool, open and idle, and queries waiting for one. */
  poolUse?(): { total: number; idle: number; waiting: number };
  /** Seals and opens the secrets stored in this database (TOTP secrets) with its secret key. */
  secrets: SecretBox;
  secretKeySource: SecretKeySource;
  /** The key the secrets were sealed with until now (a change of key), if given. */
  previousSecrets?: SecretBox;
}

export type QueryListener = (ms: number, failed: boolean) => void;

/** Kysely's log hook, passing each statement's time to whoever listens. */
function queryTimer(): { log: (event: LogEvent) => void; listen: (listener: QueryListener | undefined) => void } {
  let listener: QueryListener | undefined;
  return {
    log: (event) => listener?.(event.queryDurationMillis, event.level === 'error'),
    listen: (next) => {
      listener = next;
    },
  };
}

export interface OpenOptions {
  /** PostgreSQL only: the schema to work in (created when missing). */
  schema?: string;
  poolSize?: number;
  /** The secret key (64 hexadecimal digits or base64); without it see secretKeyFor. */
  secretKey?: string;
  /** The key the secrets were sealed with until now: the migration seals them again with the secret key. */
  previousSecretKey?: string;
  /** PostgreSQL: each connection keeps the statements it runs prepared (see keepStatementsPrepared); default on. */
  preparedStatements?: boolean;
}

/** The options of the database the settings name. */
export function databaseOptions(config: Pick<Config, 'secretKey' | 'previousSecretKey' | 'preparedStatements'>): OpenOptions {
  return { secretKey: config.secretKey, previousSecretKey: config.previousSecretKey, preparedStatements: config.preparedStatements };
}

// 64-bit integers (ids, timestamps) as JS numbers: every value we store is below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));
// double precision and numeric as numbers.
pg.types.setTypeParser(701, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

export function describeDatabaseUrl(url: string): string {
  return url.replace(/\/\/([^:@/]+):([^@/]+)@/, '//$1:***@');
}

export async function openDatabase(url: string, options: OpenOptions = {}): Promise<Database> {
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgres(url, options);
  if (url.startsWith('sqlite:')) return openSqlite(url.slice('sqlite:'.length), options);
  throw new Error(`unsupported database URL ${describeDatabaseUrl(url)}: use sqlite:<path> or postgres://...`);
}

/** Read and write for the server's user alone. */
const PRIVATE_MODE = 0o600;

/**
 * Makes the database file (when new) with mode 0600, and takes group and others' access off
 * an existing one and its companions. SQLite creates the write-ahead log and shared-memory
 * files (-wal, -shm) later, as it needs them, with the mode of the database file.
 */
export function keepSqliteFilesPrivate(path: string): void {
  closeSync(openSync(path, 'a', PRIVATE_MODE));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    let mode: number;
    try {
      mode = statSync(file).mode;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    if ((mode & 0o077) !== 0) chmodSync(file, mode & 0o700);
  }
}

function openSqlite(path: string, options: OpenOptions): Database {
  const inMemory = path === ':memory:' || path === '';
  if (!inMemory) {
    mkdirSync(dirname(resolve(path)), { recursive: true });
    keepSqliteFilesPrivate(resolve(path));
  }
  const { box, source } = secretKeyFor(`sqlite:${path}`, options.secretKey);
  const previousSecrets = previousBox(options.previousSecretKey);
  const connection = new SQLite(path);
  connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = NORMAL');
  connection.pragma('busy_timeout = 5000');
  connection.pragma('foreign_keys = ON');
  // A statement that changes several rows inside a transaction (a craft's update of ten items
  // and their counts) keeps the pages it changes in a statement journal; past 64 kB SQLite
  // spills that journal to a temporary file, created, written and deleted on every such
  // statement. In memory it costs only the pages it holds.
  connection.pragma('temp_store = MEMORY');
  // Up to 32 MB of pages in memory instead of SQLite's 2 MB: the index leaves a write changes
  // (a craft's ten items sit on about twenty of them) are then mostly found there, not read
  // from the file again. The memory is taken only as pages are read.
  connection.pragma('cache_size = -32768');
  let stopCheckpointer: (() => Promise<void>) | undefined;
  if (!inMemory) {
    connection.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
    stopCheckpointer = startCheckpointer(resolve(path));
  }
  const timer = queryTimer();
  const kysely = new Kysely<Tables>({ dialect: new SqliteDialect({ database: withStatementCache(connection) }), log: timer.log });
  return {
    kysely,
    dialect: 'sqlite',
    onQuery: timer.listen,
    secrets: box,
    secretKeySource: source,
    ...(previousSecrets ? { previousSecrets } : {}),
    async ping() {
      await sql`select 1`.execute(kysely);
    },
    async close() {
      await stopCheckpointer?.();
      await kysely.destroy();
    },
  };
}

const CACHED_STATEMENTS = 500;
/** Longer statements (bulk inserts of an import) are used once: not worth their memory. */
const MAX_CACHED_SQL_LENGTH = 4096;

/**
 * The connection as Kysely sees it, with compiled statements kept for reuse: Kysely prepares
 * every query it runs, and preparing often costs more than running. Kysely runs one query at
 * a time on the single connection, so a statement is never asked to run while it is running.
 */
function withStatementCache(connection: SQLite.Database): { prepare(sql: string): SQLite.Statement; close(): void } {
  const statements = new Map<string, SQLite.Statement>();
  return {
    prepare(sql: string) {
      if (sql.length > MAX_CACHED_SQL_LENGTH) return connection.prepare(sql);
      let statement = statements.get(sql);
      if (statement === undefined) {
        statement = connection.prepare(sql);
        if (statements.size >= CACHED_STATEMENTS) statements.delete(statements.keys().next().value!);
      } else {
        // Least recently used first in line to go.
        statements.delete(sql);
      }
      statements.set(sql, statement);
      return statement;
    },
    close() {
      statements.clear();
      connection.close();
    },
  };
}

async function openPostgres(url: string, options: OpenOptions): Promise<Database> {
  if (options.schema && !/^[a-z_][a-z0-9_]*$/.test(options.schema)) throw new Error('invalid schema name');
  const { box, source } = secretKeyFor(url, options.secretKey);
  const previousSecrets = previousBox(options.previousSecretKey);
  if (options.schema) {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`create schema if not exists ${options.schema}`);
    } finally {
      await admin.end();
    }
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  if (options.preparedStatements !== false) pool.on('connect', keepStatementsPrepared);
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it on next use.
  });
  const timer = queryTimer();
  const kysely = new Kysely<Tables>({ dialect: new CurrentSchemaPostgresDialect({ pool }), log: timer.log });
  return {
    kysely,
    dialect: 'postgres',
    onQuery: timer.listen,
    secrets: box,
    secretKeySource: source,
    ...(previousSecrets ? { previousSecrets } : {}),
    poolUse: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async ping() {
      await sql`select 1`.execute(kysely);
    },
    async close() {
      await kysely.destroy();
    },
  };
}
