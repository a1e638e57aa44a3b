import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { createServer, loggerOptions } from '../src/app.js';
import { defaultConfig, type Config } from '../src/config.js';
import { openDatabase, type Database } from '../src/db/connection.js';
import { Migrator, sql, type CompiledQuery } from 'kysely';
import { SCHEMA_CHANGE_LOCK, dropPostgresSchema, migrateToLatest, migrationsFor } from '../src/db/migrate.js';
import { ManualClock } from '../src/infra/clock.js';
import { importWorld } from '../src/world/import.js';
import type { World } from '../src/world/schema.js';
import type { Services } from '../src/services.js';
import { allMethods } from '../src/domains.js';
import { watchResponses } from './response-check.js';
import { missing, REDIS_URL } from './components.js';
import type { Channel } from '../src/infra/channels.js';

/** Which database the suite runs on: `sqlite` (default) or `postgres` (TEST_DATABASE_URL). */
export const DB_KIND: 'sqlite' | 'postgres' = process.env.TEST_DB === 'postgres' ? 'postgres' : 'sqlite';
export { REDIS_URL } from './components.js';

export interface CallOptions {
  token?: string;
  ip?: string;
  /** GET puts parameters in the query string; POST sends them as JSON (default) or a form. */
  http?: 'GET' | 'POST';
  form?: boolean;
  headers?: Record<string, string>;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: { code: number; description?: string; data?: any; [key: string]: unknown };
}

export interface TestServer {
  app: FastifyInstance;
  services: Services;
  clock: ManualClock;
  db: Database;
  /** A database location the next server may share (for several processes on one database). */
  location: DatabaseLocation;
  call(method: string, params?: Record<string, unknown>, options?: CallOptions): Promise<Answer>;
  close(): Promise<void>;
}

/** The secret key of the test servers on PostgreSQL (SQLite ones use the key file beside their database). */
export const TEST_SECRET_KEY = '5ec7e7ee5ec7e7ee5ec7e7ee5ec7e7ee5ec7e7ee5ec7e7ee5ec7e7ee5ec7e7ee';

export interface DatabaseLocation {
  url: string;
  schema?: string;
  /** The secret key to give every server and process on this database (SECRET_KEY); none: the SQLite key file. */
  secretKey?: string;
  /** Redis key and channel prefix of the servers on this database (tests share one Redis). */
  redisPrefix: string;
  dispose(): Promise<void>;
}

/** A new empty database for one test server: a temporary SQLite file or a PostgreSQL schema. */
export async function newDatabaseLocation(): Promise<DatabaseLocation> {
  if (DB_KIND === 'postgres') {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) throw new Error('TEST_DB=postgres needs TEST_DATABASE_URL');
    const schema = `t_${process.pid}_${randomBytes(6).toString('hex')}`;
    return {
      url,
      schema,
      secretKey: TEST_SECRET_KEY,
      redisPrefix: `gp:${schema}:`,
      dispose: () => dropPostgresSchema(url, schema),
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'gp-test-'));
  return {
    url: `sqlite:${join(dir, 'test.db')}`,
    redisPrefix: `gp:t_${process.pid}_${randomBytes(6).toString('hex')}:`,
    async dispose() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The settings another process (`game-platform serve`, `migrate`, ...) needs for this
 * database: DATABASE_URL, for PostgreSQL with the schema chosen by search_path, and SECRET_KEY.
 */
export function processDatabaseEnv(location: DatabaseLocation): { DATABASE_URL: string; SECRET_KEY: string } {
  let url = location.url;
  if (location.schema) {
    const withPath = new URL(location.url);
    withPath.searchParams.set('options', `-c search_path=${location.schema}`);
    url = withPath.toString();
  }
  return { DATABASE_URL: url, SECRET_KEY: location.secretKey ?? '' };
}

/**
 * Migrates a database up to an earlier level (upgrade tests), as migrateToLatest does: on
 * PostgreSQL under the schema-change lock.
 */
export async function migrateTo(db: Database, level: string, schema: string | undefined): Promise<string[]> {
  return db.kysely.connection().execute(async (connection) => {
    if (db.dialect === 'postgres') await sql`select pg_advisory_lock(${SCHEMA_CHANGE_LOCK})`.execute(connection);
    try {
      const migrator = new Migrator({
        db: connection,
        provider: { getMigrations: async () => migrationsFor(db) },
        ...(schema ? { migrationTableSchema: schema } : {}),
      });
      const { error, results } = await migrator.migrateTo(level);
      if (error) throw error instanceof Error ? error : new Error(String(error));
      return (results ?? []).map((r) => r.migrationName);
    } finally {
      if (db.dialect === 'postgres') await sql`select pg_advisory_unlock(${SCHEMA_CHANGE_LOCK})`.execute(connection);
    }
  });
}

export interface StartOptions {
  world?: World;
  config?: Partial<Config>;
  clock?: ManualClock;
  /** Share the database of an earlier server (it stays owned by that server). */
  location?: DatabaseLocation;
  /** Connect to the test Redis. */
  redis?: boolean;
  /** Receives the server's log lines (JSON, from `logLevel`, default warn); logs are silent without it. */
  logLines?: string[];
  logLevel?: string;
}

/** Starts a server on a fresh database (or a shared one) with a manual clock. */
export async function startTestServer(options: StartOptions = {}): Promise<TestServer> {
  if (options.redis && missing.redis)
    throw new Error(`${missing.redis}. Declare the test with { skip: missing.redis } (test/components.ts)`);
  const location = options.location ?? (await newDatabaseLocation());
  const ownsLocation = !options.location;
  const db = await openDatabase(location.url, { schema: location.schema, poolSize: 5, secretKey: location.secretKey });
  const clock = options.clock ?? new ManualClock();
  const config: Config = {
    ...defaultConfig(),
    databaseUrl: location.url,
    ...(location.secretKey ? { secretKey: location.secretKey } : {}),
    logLevel: 'silent',
    captcha: { testVerifier: true },
    // Every test client connects from loopback, often with many connections at once: the cap per address is tested where it is set.
    maxConnectionsPerIp: 100_000,
    // Bursts of sign-ins test the guessing defence, which must judge every password the hashers' queue would refuse: the queue is tested where it is set.
    passwordHashQueue: 100_000,
    // A loaded machine can leave a socket quiet for seconds while its request waits its turn, and a
    // client in the same process may reuse a kept-alive socket just as a late timer ends it: the
    // timeouts are tested where they are set.
    http: { ...defaultConfig().http, connectionTimeoutMs: 120_000, keepAliveTimeoutMs: 120_000, requestTimeoutMs: 120_000 },
    ...(options.redis ? { redisUrl: REDIS_URL, redisPrefix: location.redisPrefix } : {}),
    ...options.config,
  };
  // The world is in place before the server starts, as `serve --world` does, so every
  // capability's start hook (and in-memory state) sees it.
  if (options.world) {
    await migrateToLatest(db);
    await importWorld(db, options.world, { mode: 'merge', now: Math.floor(clock.now() / 1000) });
  }
  const logLines = options.logLines;
  const logger = logLines
    ? { ...(loggerOptions(options.logLevel ?? 'warn') as object), stream: { write: (line: string) => void logLines.push(line) } }
    : false;
  const { app, services } = await createServer(config, { clock, db, logger });
  // Every /api answer is checked against the published schemas (test/response-check.ts).
  const responses = watchResponses(app, allMethods());
  await app.ready();

  return {
    app,
    services,
    clock,
    db,
    location,
    async call(method, params = {}, callOptions = {}) {
      const http = callOptions.http ?? 'POST';
      const headers: Record<string, string> = { ...callOptions.headers };
      const payload: Record<string, unknown> = { ...params };
      if (callOptions.token) payload.access_token = callOptions.token;
      let url = `/api/${method}`;
      let body: string | undefined;
      if (http === 'GET') {
        const query = new URLSearchParams(
          Object.entries(payload)
            .filter(([, v]) => v !== undefined)
            .map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]),
        ).toString();
        if (query) url += `?${query}`;
      } else if (callOptions.form) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        body = new URLSearchParams(Object.entries(payload).map(([k, v]) => [k, String(v)])).toString();
      } else {
        headers['content-type'] ??= 'application/json';
        body = JSON.stringify(payload);
      }
      const response = await app.inject({ method: http, url, headers, payload: body, remoteAddress: callOptions.ip ?? '127.0.0.1' });
      const problems = responses.take(String(response.headers['x-request-id']));
      if (problems.length > 0) throw new Error(`answer does not match the published schema:\n${problems.join('\n')}`);
      return { status: response.statusCode, headers: response.headers, body: response.json() };
    },
    async close() {
      await app.close();
      await db.close();
      if (ownsLocation) await location.dispose();
      const problems = responses.unreported();
      if (problems.length > 0) throw new Error(`answers did not match the published schema:\n${problems.join('\n')}`);
    },
  };
}

/** Asserts success and returns `data`. */
export function ok(answer: Answer): any {
  if (answer.body.code !== 0) throw new Error(`expected code 0, got ${JSON.stringify(answer.body)}`);
  return answer.body.data;
}

/** Resolves once `server` has received a message on `channel` (one that `match` accepts). */
export function heard(server: TestServer, channel: Channel<unknown>, match: (message: any) => boolean = () => true): Promise<void> {
  return new Promise((resolve) => {
    const stop = server.services.bus.subscribe(channel, (message) => {
      if (!match(message)) return;
      stop();
      resolve();
    });
  });
}

/** Resolves once the bus proves itself current (see Bus.isCurrent): from then on a server keeps resolved tokens in memory. */
export async function busCurrent(bus: { isCurrent(): boolean }): Promise<void> {
  while (!bus.isCurrent()) await new Promise((r) => setTimeout(r, 10));
}

/** The database's plan of a query, as text: EXPLAIN QUERY PLAN on SQLite, EXPLAIN on PostgreSQL. */
export async function queryPlan(server: TestServer, query: CompiledQuery): Promise<string> {
  const prefix = DB_KIND === 'postgres' ? 'explain (format text) ' : 'explain query plan ';
  const { rows } = await server.db.kysely.executeQuery<Record<string, string>>({ ...query, sql: prefix + query.sql });
  return rows.map((row) => Object.values(row).join(' ')).join('\n');
}
