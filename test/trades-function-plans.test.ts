import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { DB_KIND, processDatabaseEnv, startTestServer, type TestServer } from './helpers.js';
import { catalogWorld, user } from './item-fixtures.js';
import type { Tables } from '../src/db/tables.js';
import { acceptInOneStatement, createInOneStatement } from '../src/trades/queries.js';
import { Side } from '../src/trades/status.js';
import type { World } from '../src/world/schema.js';

/*
 * PostgreSQL runs a trade's creation and acceptance as functions (migrations 011 to 013) that
 * keep the plans of their statements for the life of a connection. A kept plan is made once,
 * from the table sizes of that moment: here the tables are nearly empty, as on a new server, and
 * every plan must still find its rows by key through an index, never by reading a table or an
 * index whole (which, kept until the tables have grown, would read all of them on every call).
 * auto_explain reports the plan of every statement the functions run, as it ran.
 */

const postgresOnly = { skip: DB_KIND !== 'postgres' && 'PostgreSQL only: SQLite runs a trade as statements of its own, tested elsewhere' };

const ROUNDS = 8;
const NOW = 100_000;
const CUTOFF = NOW - 3600;
const world: World = {
  ...catalogWorld,
  users: [user(1), user(2)],
  items: [
    ...Array.from({ length: ROUNDS }, (_, i) => ({ item_id: 10 + i, user_id: 1, item_proto_id: 101, ts_owned: 1000 + i })),
    ...Array.from({ length: 2 * ROUNDS }, (_, i) => ({ item_id: 40 + i, user_id: 2, item_proto_id: 102, ts_owned: 2000 + i })),
  ],
};

let server: TestServer;
let db: Kysely<Tables>;
const plans: string[] = [];

before(async () => {
  if (DB_KIND !== 'postgres') return;
  server = await startTestServer({ world });
  // One connection, so that auto_explain, loaded into it, sees every call.
  const pool = new pg.Pool({ connectionString: processDatabaseEnv(server.location).DATABASE_URL, max: 1 });
  pool.on('connect', (client) => client.on('notice', (notice) => plans.push(notice.message ?? '')));
  db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  // Statistics of small tables, as autovacuum gathers them on a young server: with them a whole
  // table costs less to read than an index.
  await sql`analyze users, items, item_protos, equipped, inventory_counts, trades, trade_items, trade_moves`.execute(db);
  await sql`load 'auto_explain'`.execute(db);
  for (const setting of ['log_min_duration = 0', 'log_nested_statements = on', 'log_level = notice'])
    await sql.raw(`set auto_explain.${setting}`).execute(db);
});
after(async () => {
  await db?.destroy();
  await server?.close();
});

/**
 * The scans of a plan that read a table or an index whole, each with its statement: a sequential
 * scan of a table, or an index scan without an index condition (all of a partial index, say).
 */
function wholeReadsOf(plan: string): string[] {
  const lines = plan.split('\n');
  const statement = /Query Text: ([^\n]*)/.exec(plan)?.[1] ?? '?';
  const found: string[] = [];
  lines.forEach((line, at) => {
    if (/Seq Scan on /.test(line)) found.push(`${statement}: ${line.trim()}`);
    if (!/(Index Scan|Index Only Scan|Bitmap Index Scan)( Backward)? (using|on) /.test(line)) return;
    const depth = line.search(/\S/);
    let keyed = false;
    for (const next of lines.slice(at + 1)) {
      if (next.search(/\S/) <= depth || next.includes('->')) break;
      if (next.includes('Index Cond:')) keyed = true;
    }
    if (!keyed) found.push(`${statement}: ${line.trim()}`);
  });
  return found;
}

/** Offers `give` (user 1's) for `take` (user 2's); answers the new trade's id. */
async function offer(give: number, take: number): Promise<number> {
  const tradeId = await createInOneStatement(
    db,
    {
      fromId: 1,
      toId: 2,
      items: [
        { item_id: give, side: Side.FROM, owner: 1 },
        { item_id: take, side: Side.TO, owner: 2 },
      ],
    },
    { now: NOW, cutoff: CUTOFF, maxOpen: 100, since: NOW - 60, maxRecent: 100, friend: false },
  );
  assert.ok(tradeId !== undefined, `the offer of ${give} for ${take} was recorded`);
  return tradeId;
}

test('the trade functions keep plans that read every row by key, made while the tables were nearly empty', postgresOnly, async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const give = 10 + round;
    // Two offers share the item given: accepting the first makes the second invalid.
    const accepted = await offer(give, 40 + 2 * round);
    const displaced = await offer(give, 41 + 2 * round);
    const rows = await acceptInOneStatement(db, accepted, 2, { now: NOW, cutoff: CUTOFF, hold: 0 });
    assert.deepEqual(rows, [
      { kind: 'accepted', trade_id: accepted, user_id_from: 1, user_id_to: 2 },
      { kind: 'invalidated', trade_id: displaced, user_id_from: 1, user_id_to: 2 },
    ]);
  }
  const reported = plans.slice();
  await sql`set auto_explain.log_min_duration = -1`.execute(db);
  const owners = await db
    .selectFrom('items')
    .select(['item_id', 'user_id', 'data'])
    .where('item_id', '<', 40 + 2 * ROUNDS)
    .orderBy('item_id')
    .execute();
  const provenance = (giver: number) => ({ previous_owners_user_ids: [giver] });
  assert.deepEqual(
    owners.map((item) => [item.item_id, item.user_id, item.data === null ? null : JSON.parse(item.data)]),
    [
      ...Array.from({ length: ROUNDS }, (_, i) => [10 + i, 2, provenance(1)]),
      ...Array.from({ length: 2 * ROUNDS }, (_, i) => (i % 2 === 0 ? [40 + i, 1, provenance(2)] : [40 + i, 2, null])),
    ],
  );

  const nested = reported.filter((plan) => !/Query Text: select (trade_create|kind)/.test(plan));
  const statements = new Set(nested.map((plan) => /Query Text: ([^\n]*)/.exec(plan)?.[1]));
  assert.ok(statements.size >= 10, `auto_explain reported the functions' statements (${statements.size})`);
  const wholeReads = nested.flatMap(wholeReadsOf);
  assert.deepEqual(wholeReads, [], 'no statement of the trade functions reads a table or an index whole');
  // A plan made for one call would name that call's values; a kept one names the parameters.
  const acceptance = nested.filter((plan) => plan.includes('update trades set status = 1'));
  assert.equal(acceptance.length, ROUNDS);
  for (const plan of acceptance) assert.match(plan, /trade_id = \$1\b/, plan);
});
