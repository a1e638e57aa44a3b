import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type CompiledQuery } from 'kysely';
import { DB_KIND, startTestServer, type TestServer } from './helpers.js';
import { callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { grantItems } from '../src/inventory/grants.js';
import { mergesClasses, ownedClassesQuery, ownedItemsQuery, type ListOptions } from '../src/inventory/queries.js';

const SIZE = 10_000;

describe('an inventory of 10,000 items', () => {
  let server: TestServer;
  let token: string;
  let cards: number[];
  let stock: number[];
  let special: number[];
  before(async () => {
    server = await startTestServer({ world: { ...catalogWorld, users: [user(1), user(2)] } });
    token = await tokenFor(server, 1);
    special = await grantItems(server.services, { userId: 1, itemProtoId: 301, copies: 5 });
    server.clock.advance(1);
    stock = await grantItems(server.services, { userId: 1, itemProtoId: 801, copies: 995 });
    server.clock.advance(1);
    cards = await grantItems(server.services, { userId: 1, itemProtoId: 101, copies: SIZE - 1000 });
  });
  after(() => server.close());

  const newestFirst = (ids: number[]) => [...ids].sort((a, b) => b - a);

  test('answers in full without count', async () => {
    const data = await callOk(server, 'inventory.get', { include_stock: 1 }, { token, http: 'GET' });
    assert.equal(data.count, SIZE);
    assert.equal(data.things.length, SIZE);
    assert.deepEqual(
      data.things.map((t: any) => t.item_id),
      [...newestFirst(cards), ...newestFirst(stock), ...newestFirst(special)],
    );
    const others = await callOk(server, 'inventory.get', { user_id: 1, add_legacy: 0 }, { http: 'GET' });
    assert.equal(others.count, SIZE - stock.length);
    assert.equal(others.items.length, SIZE - stock.length);
  });

  test('over a real socket the whole inventory comes in pieces, and reads the same as a short one assembled at once', async () => {
    await server.app.listen({ host: '127.0.0.1', port: 0 });
    const address = server.app.server.address() as { port: number };
    const base = `http://127.0.0.1:${address.port}/api/inventory.get?user_id=1&add_legacy=0`;
    const whole = await fetch(base);
    assert.equal(whole.headers.get('transfer-encoding'), 'chunked');
    assert.equal(whole.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.ok(whole.headers.get('x-request-id'));
    const body = (await whole.json()) as { code: number; data: { count: number; items: { item_id: number }[]; collections: unknown[] } };
    assert.equal(body.code, 0);
    assert.equal(body.data.items.length, SIZE - stock.length);
    const short = await fetch(`${base}&count=20`);
    assert.ok(short.headers.get('content-length'));
    const first = (await short.json()) as typeof body;
    assert.deepEqual(body.data.items.slice(0, 20), first.data.items);
    assert.equal(body.data.count, first.data.count);
  });

  test('count = 20 answers the first twenty and the whole count', async () => {
    const byTime = await callOk(server, 'inventory.get', { count: 20, include_stock: 1 }, { token, http: 'GET' });
    assert.equal(byTime.count, SIZE);
    assert.deepEqual(
      byTime.things.map((t: any) => t.item_id),
      newestFirst(cards).slice(0, 20),
    );
    const byQuality = await callOk(server, 'inventory.get', { count: 20, order: 'quality' }, { token, http: 'GET' });
    assert.equal(byQuality.count, SIZE - stock.length);
    assert.deepEqual(
      byQuality.things.map((t: any) => t.item_id),
      [...newestFirst(special), ...newestFirst(cards).slice(0, 15)],
    );
    const stockLast = await callOk(
      server,
      'inventory.get',
      { count: 20, order: 'quality', include_stock: 1, shrink: 1 },
      { token, http: 'GET' },
    );
    assert.equal(stockLast.count, SIZE);
    assert.deepEqual(
      stockLast.things.map((t: any) => t.item_ids.length),
      [5, 15],
    );
  });

  test('shrink = 1 collapses the whole inventory into one entry per prototype', async () => {
    const data = await callOk(server, 'inventory.get', { include_stock: 1, shrink: 1, add_legacy: 0 }, { token, http: 'GET' });
    assert.equal(data.count, SIZE);
    assert.deepEqual(
      data.items.map((i: any) => [i.item_proto_id, i.item_ids.length]),
      [
        [101, cards.length],
        [801, stock.length],
        [301, special.length],
      ],
    );
    assert.deepEqual(data.items[0].item_ids, newestFirst(cards));
  });

  test('the whole inventory reads the same when asked again and with its owner, and shows a change at once', async () => {
    const asked = { include_stock: 1 };
    const first = await callOk(server, 'inventory.get', asked, { token, http: 'GET' });
    assert.deepEqual(await callOk(server, 'inventory.get', asked, { token, http: 'GET' }), first);
    const { user: owner, ...withOwner } = await callOk(server, 'inventory.get', { ...asked, add_user: 1 }, { token, http: 'GET' });
    assert.deepEqual(withOwner, first);
    assert.equal(owner.user_id, 1);
    const [granted] = await grantItems(server.services, { userId: 1, itemProtoId: 301, copies: 1 });
    const after = await callOk(server, 'inventory.get', asked, { token, http: 'GET' });
    assert.equal(after.count, SIZE + 1);
    assert.equal(after.things[0].item_id, granted);
    assert.deepEqual(after.things.slice(1), first.things);
  });
});

/** How PostgreSQL ran a query: the rows each scan of `items` read, filtered-out rows included. */
interface ItemsScan {
  node: string;
  index?: string;
  rowsRead: number;
}

function itemsScans(plan: any, out: ItemsScan[] = []): ItemsScan[] {
  if (plan['Relation Name'] === 'items') {
    const perLoop = plan['Actual Rows'] + (plan['Rows Removed by Filter'] ?? 0) + (plan['Rows Removed by Index Recheck'] ?? 0);
    out.push({ node: plan['Node Type'], index: plan['Index Name'], rowsRead: perLoop * plan['Actual Loops'] });
  }
  for (const child of plan.Plans ?? []) itemsScans(child, out);
  return out;
}

describe('inventory.get with a small count reads about count rows, however large the inventory', () => {
  const STOCK = 10_000;
  const LIMIT = 20;
  let server: TestServer;
  let token: string;
  let special: number[];
  let cards: number[];
  let stock: number[];
  before(async () => {
    server = await startTestServer({ world: { ...catalogWorld, users: [user(1), user(2)] } });
    token = await tokenFor(server, 2);
    // Other users' items share the indexes.
    await grantItems(server.services, { userId: 1, itemProtoId: 101, copies: 2000 });
    special = await grantItems(server.services, { userId: 2, itemProtoId: 301, copies: 5 });
    server.clock.advance(1);
    cards = await grantItems(server.services, { userId: 2, itemProtoId: 101, copies: 20 });
    server.clock.advance(1);
    // The newest items are stock items: a list without stock must not read through them.
    stock = await grantItems(server.services, { userId: 2, itemProtoId: 801, copies: STOCK });
  });
  after(() => server.close());

  const newestFirst = (ids: number[]) => [...ids].sort((a, b) => b - a);
  const COMBINATIONS: ListOptions[] = [
    { order: 'time', includeStock: false, limit: LIMIT },
    { order: 'time', includeStock: true, limit: LIMIT },
    { order: 'quality', includeStock: false, limit: LIMIT },
    { order: 'quality', includeStock: true, limit: LIMIT },
  ];

  test('the answers skip the stock items without reading them', async () => {
    const byTime = await callOk(server, 'inventory.get', { user_id: 2, count: 22, add_legacy: 0 }, { http: 'GET' });
    assert.equal(byTime.count, 25);
    assert.deepEqual(
      byTime.items.map((i: any) => i.item_id),
      [...newestFirst(cards), ...newestFirst(special).slice(0, 2)],
    );
    const own = await callOk(server, 'inventory.get', { count: 3, include_stock: 1 }, { token, http: 'GET' });
    assert.equal(own.count, 25 + STOCK);
    assert.deepEqual(
      own.things.map((i: any) => i.item_id),
      newestFirst(stock).slice(0, 3),
    );
    const byQuality = await callOk(server, 'inventory.get', { count: 7, order: 'quality' }, { token, http: 'GET' });
    assert.equal(byQuality.count, 25);
    assert.deepEqual(
      byQuality.things.map((i: any) => i.item_id),
      [...newestFirst(special), ...newestFirst(cards).slice(0, 2)],
    );
  });

  async function classesOf(userId: number): Promise<number[]> {
    return (await ownedClassesQuery(userId).execute(server.db.kysely)).rows.map((r) => Number(r.quality_id));
  }

  function compiled(options: ListOptions, classes: number[]): CompiledQuery {
    return ownedItemsQuery(server.services, 2, options, classes).compile();
  }

  test('the classes above stock of an inventory, highest first', async () => {
    assert.deepEqual(await classesOf(2), [3, 1]);
    assert.deepEqual(await classesOf(3), []);
  });

  async function sqlitePlan(query: CompiledQuery): Promise<string[]> {
    const result = await server.db.kysely.executeQuery<{ detail: string }>({ ...query, sql: `explain query plan ${query.sql}` });
    return result.rows.map((r) => r.detail);
  }

  async function assertSqlitePlans(): Promise<void> {
    const classes = await classesOf(2);
    // With no more stock items than the limit, the list by time walks items_by_time.
    const fewStock: ListOptions = { order: 'time', includeStock: false, limit: LIMIT, stockOwned: LIMIT };
    for (const options of [...COMBINATIONS, fewStock]) {
      const query = compiled(options, classes);
      // The indexes hold owned items only: with the state as a bound value SQLite would use
      // them only by compiling the statement again on every run.
      assert.ok(!query.parameters.includes('owned'), query.sql);
      const plan = await sqlitePlan(query);
      const label = `${JSON.stringify(options)}: ${plan.join(' | ')}`;
      const reads = plan.filter((line) => /\bitems\b/.test(line));
      assert.ok(reads.length > 0, label);
      for (const line of reads) assert.match(line, /^SEARCH items USING (COVERING )?INDEX items_by_(time|quality) \(user_id=\?/, label);
      if (mergesClasses(options)) {
        // One walk per class, each down a prefix of items_by_quality and stopped by the limit;
        // only those few rows are sorted.
        assert.equal(reads.length, classes.length, label);
        for (const line of reads) assert.match(line, /INDEX items_by_quality \(user_id=\? AND quality_id=\?\)$/, label);
      } else {
        // One walk down the index in the answer's order: no sort, stopped by the limit.
        assert.equal(reads.length, 1, label);
        assert.match(reads[0], options.order === 'time' ? /items_by_time/ : /items_by_quality/, label);
        assert.ok(!plan.some((line) => line.includes('TEMP B-TREE')), label);
      }
    }
    const classPlan = await sqlitePlan(ownedClassesQuery(2).compile(server.db.kysely));
    for (const line of classPlan.filter((l) => /\bitems\b|\bi\b/.test(l) && /SEARCH|SCAN/.test(l)))
      assert.match(line, /^SEARCH (items|i) USING COVERING INDEX items_by_quality \(user_id=\?/, classPlan.join(' | '));
  }

  test('SQLite walks the indexes in order, without statistics and with them', { skip: DB_KIND !== 'sqlite' }, async () => {
    await assertSqlitePlans();
    await sql`analyze`.execute(server.db.kysely);
    await assertSqlitePlans();
  });

  test('PostgreSQL reads at most count rows per class', { skip: DB_KIND !== 'postgres' }, async () => {
    await sql`analyze items`.execute(server.db.kysely);
    const explain = async (query: CompiledQuery) => {
      const result = await server.db.kysely.executeQuery<{ 'QUERY PLAN': any }>({
        ...query,
        sql: `explain (analyze, format json) ${query.sql}`,
      });
      return itemsScans(result.rows[0]['QUERY PLAN'][0].Plan);
    };
    const classes = await classesOf(2);
    assert.deepEqual(classes, [3, 1]);
    for (const options of COMBINATIONS) {
      const scans = await explain(compiled(options, classes));
      const label = `${JSON.stringify(options)}: ${JSON.stringify(scans)}`;
      for (const scan of scans) assert.match(scan.node, /^Index (Only )?Scan$/, label);
      const read = scans.reduce((sum, scan) => sum + scan.rowsRead, 0);
      const bound = options.order === 'time' && !options.includeStock ? classes.length * LIMIT : LIMIT;
      assert.ok(read <= bound, `read ${read} rows, at most ${bound} expected: ${label}`);
    }
    const classScans = await explain(ownedClassesQuery(2).compile(server.db.kysely));
    for (const scan of classScans) assert.equal(scan.node, 'Index Only Scan', JSON.stringify(classScans));
    assert.ok(classScans.reduce((sum, scan) => sum + scan.rowsRead, 0) <= classes.length + 1, JSON.stringify(classScans));
  });
});
