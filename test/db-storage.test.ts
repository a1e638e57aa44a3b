import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../src/db/connection.js';
import { migrateToLatest, migrationsFor } from '../src/db/migrate.js';
import { DB_KIND, newDatabaseLocation, processDatabaseEnv } from './helpers.js';

const MAIN = new URL('../src/cli/main.ts', import.meta.url).pathname;

/** Every table of the schema: the resources of the spec and what the server keeps about them. */
const TABLES = [
  'account_tokens',
  'audit_log',
  'balances',
  'blocks',
  'chat_messages',
  'chat_state',
  'collections',
  'crafts',
  'draws',
  'equipped',
  'friend_requests',
  'friendships',
  'game_actions',
  'game_live_players',
  'game_players',
  'game_ranks',
  'game_stats',
  'games',
  'im_dialogs',
  'im_events',
  'im_messages',
  'inventory_counts',
  'item_protos',
  'item_types',
  'items',
  'ledger_entries',
  'ledger_transfers',
  'market_freezes',
  'market_listings',
  'market_sales',
  'mission_progress',
  'missions',
  'oauth_apps',
  'oauth_codes',
  'oauth_consents',
  'promocode_uses',
  'promocodes',
  'qualities',
  'recovery_codes',
  'revocations',
  'room_bans',
  'room_invites',
  'room_members',
  'rooms',
  'secret_key_check',
  'sessions',
  'shop_purchases',
  'signin_sources',
  'totp_challenges',
  'trade_items',
  'trade_moves',
  'trades',
  'users',
];

function migrateInProcess(databaseEnv: { DATABASE_URL: string; SECRET_KEY: string }): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'migrate'], {
    env: { ...process.env, ...databaseEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

async function tableNames(db: Database, schema: string | undefined): Promise<string[]> {
  const tables = await db.kysely.introspection.getTables();
  return tables
    .filter((t) => schema === undefined || t.schema === schema)
    .map((t) => t.name)
    .sort();
}

test('several processes migrating one new database at once: one creates the schema, the others find it in place', async () => {
  const location = await newDatabaseLocation();
  // PostgreSQL: the schema exists before the processes start, as a database would.
  if (location.schema) await (await openDatabase(location.url, { schema: location.schema, secretKey: location.secretKey })).close();
  try {
    const runs = await Promise.all([1, 2, 3].map(() => migrateInProcess(processDatabaseEnv(location))));
    for (const run of runs) assert.equal(run.code, 0, run.output);
    assert.equal(runs.filter((r) => /applied 001_initial/.test(r.output)).length, 1, runs.map((r) => r.output).join('\n'));
    assert.equal(runs.filter((r) => /the schema is up to date/.test(r.output)).length, 2);

    const db = await openDatabase(location.url, { schema: location.schema, secretKey: location.secretKey });
    try {
      assert.deepEqual(await tableNames(db, location.schema), TABLES);
      assert.deepEqual(await migrateToLatest(db), [], 'nothing left to apply');
    } finally {
      await db.close();
    }
  } finally {
    await location.dispose();
  }
});

test(
  'a SQLite database has its write-ahead log copied into the file by a background thread, not by commits',
  { skip: DB_KIND !== 'sqlite' && 'SQLite only' },
  async () => {
    const location = await newDatabaseLocation();
    const path = location.url.slice('sqlite:'.length);
    const db = await openDatabase(location.url);
    try {
      const limit = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db.kysely);
      assert.equal(limit.rows[0].wal_autocheckpoint, 10_000);
      await sql`create table filler (text text not null)`.execute(db.kysely);
      const before = statSync(path).size;
      // About 2 MB: hundreds of pages, far below the committing writer's own threshold.
      await db.kysely.transaction().execute(async (trx) => {
        for (let i = 0; i < 500; i++) await sql`insert into filler (text) values (${'x'.repeat(4000)})`.execute(trx);
      });
      assert.ok(statSync(path).size < before + 1_000_000, 'the commit left the pages in the log');
      const deadline = Date.now() + 10_000;
      // The thread writes the pages one by one: wait for all of them, not for the first.
      while (statSync(path).size < before + 2_000_000 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(statSync(path).size >= before + 2_000_000, 'the background thread copied the log into the file');
    } finally {
      await db.close();
      await location.dispose();
    }
  },
);

test(
  'a SQLite database runs in WAL mode with foreign keys enforced and temporary storage in memory',
  { skip: DB_KIND !== 'sqlite' && 'SQLite only' },
  async () => {
    const location = await newDatabaseLocation();
    const db = await openDatabase(location.url);
    try {
      await migrateToLatest(db);
      const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db.kysely);
      assert.equal(mode.rows[0].journal_mode, 'wal');
      const keys = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db.kysely);
      assert.equal(keys.rows[0].foreign_keys, 1);
      // Statement journals (a craft's update of ten items) in memory, not in a temporary file each time.
      const tempStore = await sql<{ temp_store: number }>`pragma temp_store`.execute(db.kysely);
      assert.equal(tempStore.rows[0].temp_store, 2);
    } finally {
      await db.close();
      await location.dispose();
    }
  },
);

test(
  'migrating on PostgreSQL reads only its own schema: tables renamed meanwhile in another schema do not fail it',
  { skip: DB_KIND !== 'postgres' && 'PostgreSQL only' },
  async () => {
    const mine = await newDatabaseLocation();
    const other = await newDatabaseLocation();
    const db = await openDatabase(mine.url, { schema: mine.schema, secretKey: mine.secretKey });
    const neighbour = await openDatabase(other.url, { schema: other.schema, secretKey: other.secretKey });
    try {
      await sql`create table churn (id serial primary key)`.execute(neighbour.kysely);
      let renaming = true;
      const renames = (async () => {
        let name = 'churn';
        while (renaming) {
          const next = name === 'churn' ? 'churn_gone' : 'churn';
          await sql`alter table ${sql.id(name)} rename to ${sql.id(next)}`.execute(neighbour.kysely);
          name = next;
        }
      })();
      try {
        for (let i = 0; i < 40; i++) assert.deepEqual(await migrateToLatest(db), i === 0 ? Object.keys(migrationsFor(db)) : []);
      } finally {
        renaming = false;
        await renames;
      }
      assert.deepEqual(await tableNames(db, undefined), TABLES, 'the tables of this schema, and no other');
    } finally {
      await db.close();
      await neighbour.close();
      await mine.dispose();
      await other.dispose();
    }
  },
);
