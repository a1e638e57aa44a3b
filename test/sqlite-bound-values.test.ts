import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { DB_KIND, startTestServer, type TestServer } from './helpers.js';
import { callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { sweepExpiredTrades } from '../src/trades/expiry.js';
import { timerTickMs } from '../src/game/timers.js';
import type { World } from '../src/world/schema.js';

/*
 * SQLite compiles a statement again on every run when it compares a column with a bound value
 * where a partial index's condition names that column with a constant (items_by_time's
 * `state = 'owned'`, trades_open_by_age's `status = 0`, users_banned's `global_ban = 1`, the unread private messages' `is_read = 0`): it
 * must know the value to tell whether the index applies. For a statement with subqueries that
 * costs several times its run. Those comparisons are written with the constant itself; this
 * test runs the methods that write and read items, trades and rooms, lets the game timers tick,
 * and looks at every statement SQLite was given.
 */

const sqliteOnly = { skip: DB_KIND !== 'sqlite' && 'SQLite only: PostgreSQL plans a statement on every run anyway' };

const world: World = {
  ...catalogWorld,
  users: [user(1), user(2)],
  items: [
    ...Array.from({ length: 16 }, (_, i) => ({ item_id: 10 + i, user_id: 1, item_proto_id: 101, ts_owned: 1000 + i })),
    ...Array.from({ length: 4 }, (_, i) => ({ item_id: 40 + i, user_id: 2, item_proto_id: 102, ts_owned: 2000 + i })),
  ],
};

const RUNNING = ['all', 'get', 'run', 'iterate'] as const;
type Running = (typeof RUNNING)[number];
const seen = new Set<string>();
const originals = new Map<Running, (...args: unknown[]) => unknown>();
const statementPrototype = Object.getPrototypeOf(new SQLite(':memory:').prepare('select 1')) as Record<
  Running,
  (...args: unknown[]) => unknown
>;

let server: TestServer;
before(async () => {
  if (DB_KIND !== 'sqlite') return;
  server = await startTestServer({ world, config: { trades: { ttl: 3600, hold: 0, maxOpenOutgoing: 100, createsPerMinute: 100 } } });
  for (const name of RUNNING) {
    const original = statementPrototype[name];
    originals.set(name, original);
    statementPrototype[name] = function (this: { source: string }, ...args: unknown[]) {
      seen.add(this.source);
      return original.apply(this, args);
    };
  }
});
after(async () => {
  for (const [name, original] of originals) statementPrototype[name] = original;
  await server?.close();
});

/** `column = ?` (or `<>`, `in (?`) outside an UPDATE's SET list: a comparison with a bound value. */
function comparesWithBoundValue(statement: string, column: string): boolean {
  const withoutSetLists = statement.replace(/\bset\b[\s\S]*?(?=\bwhere\b|\bfrom\b|$)/gi, ' ');
  const name = `(?:^|[^\\w"])"?${column}"?`;
  return new RegExp(`${name}\\s*(?:=|<>|!=|\\bin\\s*\\()\\s*\\?`, 'i').test(withoutSetLists);
}

test('no statement compares a column named by a partial index with a bound value', sqliteOnly, async () => {
  const { rows: indexes } = await sql<{ name: string; sql: string }>`
    select name, sql from sqlite_master where type = 'index' and sql like '% where %'`.execute(server.db.kysely);
  const columns = new Set<string>();
  for (const index of indexes) for (const [, column] of index.sql.matchAll(/(\w+)\s*=\s*(?:'[^']*'|\d+)/g)) columns.add(column!);
  assert.deepEqual(
    [...columns].sort(),
    ['global_ban', 'is_read', 'state', 'status'],
    'the partial indexes and the columns their conditions compare',
  );

  const one = { token: await tokenFor(server, 1) };
  const two = { token: await tokenFor(server, 2) };
  const offer = async (give: number, take?: number) =>
    (
      await callOk(
        server,
        'trades.create',
        { user_id: 2, thing_ids_from: String(give), ...(take ? { thing_ids_to: String(take) } : {}) },
        one,
      )
    ).trade_id as number;
  assert.equal((await server.call('execute.prepareTrade', { user_id: 2 }, one)).body.code, 0);
  const accepted = await offer(10, 40);
  await offer(10, 41);
  await assert.doesNotReject(callOk(server, 'trades.getIncome', {}, two));
  await assert.doesNotReject(callOk(server, 'trades.getOutbound', {}, one));
  assert.deepEqual((await server.call('trades.accept', { trade_id: accepted }, two)).body, { code: 0 });
  assert.deepEqual((await server.call('trades.decline', { trade_id: await offer(11) }, two)).body, { code: 0 });
  assert.deepEqual((await server.call('trades.revoke', { trade_id: await offer(12) }, one)).body, { code: 0 });
  await offer(13);
  await callOk(server, 'inventory.craft', { item_ids: Array.from({ length: 10 }, (_, i) => 13 + i).join(',') }, one);
  await callOk(server, 'trades.history', {}, one);
  await callOk(server, 'trades.historyWith', { user_id: 2 }, one);
  await callOk(server, 'trades.getById', { trade_id: accepted }, one);
  await callOk(server, 'inventory.get', { user_id: 1 }, one);
  await callOk(server, 'users.get', { user_ids: '1,2' }, one);
  await callOk(server, 'friends.get', { user_id: 1 }, one);
  const { room_id } = await callOk(server, 'rooms.create', { maxplayers: 2 }, one);
  assert.deepEqual((await server.call('rooms.invite', { room_id, user_id: 2 }, one)).body, { code: 0 });
  await callOk(server, 'rooms.get', {}, two);
  await callOk(server, 'games.getLive', {}, two);
  await new Promise((resolve) => setTimeout(resolve, 2 * timerTickMs));
  await offer(23);
  server.clock.advance(3601);
  assert.equal(await sweepExpiredTrades(server.services), 1);

  const offending = [...seen].filter((statement) => [...columns].some((column) => comparesWithBoundValue(statement, column)));
  assert.ok(seen.size > 20, `statements seen: ${seen.size}`);
  assert.deepEqual(offending, []);
});
