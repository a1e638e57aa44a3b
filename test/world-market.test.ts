import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newDatabaseLocation, processDatabaseEnv, startTestServer, type DatabaseLocation, type TestServer } from './helpers.js';
import { callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { runCli } from './process-support.js';
import { checkMarket } from '../src/market/index.js';
import type { World } from '../src/world/schema.js';

/*
 * The market in world files: balances, the ledger, listings, sales and freezes are exported,
 * and an import gives them back exactly, or refuses a file whose money does not add up.
 * User 1 sells, 2 buys and shops, 3 redeems a promo code of money and is frozen.
 */

const ADMIN_KEY = 'admin-key-of-the-world-market-test';
const adminHeaders = { headers: { 'x-admin-key': ADMIN_KEY } };

const world: World = {
  ...catalogWorld,
  users: [user(1), user(2), user(3)],
  items: [
    { item_id: 10, user_id: 1, item_proto_id: 101, ts_owned: 1000 },
    { item_id: 11, user_id: 1, item_proto_id: 101, ts_owned: 1001 },
    { item_id: 12, user_id: 1, item_proto_id: 201, ts_owned: 1002 },
    { item_id: 13, user_id: 1, item_proto_id: 101, ts_owned: 1003 },
    { item_id: 14, user_id: 1, item_proto_id: 501, ts_owned: 1004 },
    { item_id: 20, user_id: 2, item_proto_id: 101, ts_owned: 2000, equip: { game: 'classic', slot: 'cards', monopoly_id: 1 } },
  ],
};

let location: DatabaseLocation;
let server: TestServer;
const tokens = new Map<number, string>();
const as = (id: number) => ({ token: tokens.get(id) });

async function signInAll(): Promise<void> {
  for (const id of [1, 2, 3]) tokens.set(id, await tokenFor(server, id));
}

before(async () => {
  location = await newDatabaseLocation();
  server = await startTestServer({ world, location, config: { adminKey: ADMIN_KEY } });
  await signInAll();
  // Money and trade: grants, two listings, one sale, a shop purchase, a quick sale, a promo code's money, a freeze.
  await callOk(server, 'admin.grantMoney', { user_id: 2, amount: 100, reason: 'start' }, adminHeaders);
  await callOk(server, 'admin.grantMoney', { user_id: 1, amount: 1.5, reason: 'start' }, adminHeaders);
  await callOk(server, 'market.sell', { thing_id: 10, price: 12.5 }, as(1));
  await callOk(server, 'market.sell', { thing_id: 11, price: 7 }, as(1));
  await callOk(server, 'market.sell', { thing_id: 12, price: 3.33 }, as(1));
  server.clock.advance(10);
  await callOk(server, 'market.buy', { thing_id: 10, price: 1250 }, as(2));
  await callOk(server, 'shop.buy', { item_proto_id: 101, request_id: 'r1' }, as(2));
  await callOk(server, 'market.quickSell', { thing_id: 14 }, as(1));
  await callOk(server, 'admin.createPromocode', { code: 'cash-five', money: 5.05 }, adminHeaders);
  assert.deepEqual(await callOk(server, 'wallet.promocodeActivate', { promocode: 'cash-five' }, as(3)), {
    items: [],
    money: 5.05,
    balance: 5.05,
  });
  await callOk(server, 'admin.freezeMarket', { user_id: 3, frozen: 1, reason: 'checks' }, adminHeaders);
});
after(async () => {
  await server?.close();
  await location?.dispose();
});

/** What players and administrators read of the market and the wallets. */
async function marketReads() {
  const reads: Record<string, unknown> = {};
  for (const id of [1, 2, 3]) {
    reads[`wallet ${id}`] = (await server.call('execute.wallet', {}, as(id))).body;
    reads[`history ${id}`] = await callOk(server, 'wallet.getHistory', { count: 100 }, as(id));
    reads[`my ${id}`] = await callOk(server, 'market.getMy', { count: 100 }, as(id));
  }
  for (const proto of [101, 201]) reads[`listing ${proto}`] = await callOk(server, 'market.getListing', { thing_prototype_id: proto });
  reads.search = await callOk(server, 'market.search', {});
  reads.sellups = await callOk(server, 'market.getLastSellups', {});
  reads.listings = await callOk(server, 'admin.listListings', { count: 100 }, adminHeaders);
  return reads;
}

const MARKET_SECTIONS = ['balances', 'ledger', 'listings', 'market_sales', 'market_freezes', 'promocodes', 'items'] as const;

/** The market's sections of a world and the items and codes they name. */
const marketOf = (file: World) => Object.fromEntries(MARKET_SECTIONS.map((key) => [key, file[key]]));

async function exported(): Promise<World> {
  return (await callOk(server, 'admin.exportWorld', {}, adminHeaders)).world as World;
}

async function importAnswer(file: unknown, mode: 'merge' | 'replace') {
  return (await server.call('admin.importWorld', { world: JSON.stringify(file), mode }, adminHeaders)).body;
}

describe('the market in world files', () => {
  test('export carries balances, the ledger, listings, sales and freezes; a replace import gives back identical wallets, listings and history', async () => {
    const file = await exported();
    const kopecks = new Map(file.balances!.map((b) => [b.user_id, b.balance]));
    assert.deepEqual(Object.fromEntries(kopecks), { 1: 150 + 1250 - 125 + 30, 2: 10000 - 1250 - 500, 3: 505 });
    assert.deepEqual(
      file.listings!.map((l) => [l.item_id, l.price]),
      [
        [11, 700],
        [12, 333],
      ],
    );
    assert.deepEqual(
      file.market_sales!.map((s) => [s.item_id, s.seller_id, s.buyer_id, s.price, s.fee]),
      [[10, 1, 2, 1250, 125]],
    );
    assert.deepEqual(
      file.ledger!.map((t) => t.kind),
      ['admin_grant', 'admin_grant', 'market_purchase', 'shop', 'quick_sell', 'promocode'],
    );
    assert.deepEqual(
      file.market_freezes!.map((f) => [f.user_id, f.reason]),
      [[3, 'checks']],
    );
    assert.deepEqual(
      file.promocodes!.map((p) => [p.code, p.money, p.uses]),
      [['CASH-FIVE', 505, 1]],
    );
    assert.ok(
      file.items!.some((i) => i.item_id === 11 && i.user_id === 1),
      "a listed item is exported as its seller's",
    );

    const before = await marketReads();
    server.clock.advance(3600);
    assert.equal((await importAnswer(file, 'replace')).code, 0);
    await signInAll();
    assert.deepEqual(marketOf(await exported()), marketOf(file), 'export, import, export: the same market');
    assert.deepEqual(await marketReads(), before, 'the same wallets, histories, listings and sales');
    assert.deepEqual(await checkMarket(server.db.kysely), []);

    // The market goes on from there: new ids follow the imported ones, the freeze holds, the promo code is spent.
    const bought = await callOk(server, 'market.buy', { thing_id: 11, price: 700 }, as(2));
    assert.equal(bought.balance, (10000 - 1250 - 500 - 700) / 100);
    assert.equal((await server.call('market.buy', { thing_id: 12, price: 333 }, as(3))).body.code, 2105);
    assert.equal((await server.call('wallet.promocodeActivate', { promocode: 'CASH-FIVE' }, as(3))).body.code, 1501);
    const history = await callOk(server, 'wallet.getHistory', { count: 1 }, as(2));
    const highest = Math.max(...file.ledger!.flatMap((t) => t.entries.map((e) => e.entry_id!)));
    assert.ok(history.history[0].id > highest, 'a new entry is numbered after the imported ones');
    assert.deepEqual(await checkMarket(server.db.kysely), []);
  });

  test('a merge that replaces a listed item ends its listing; merging the market into itself changes nothing', async () => {
    const file = await exported();
    assert.equal((await importAnswer({ ...file, users: undefined }, 'merge')).code, 0);
    assert.deepEqual(marketOf(await exported()), marketOf(file));

    assert.equal((await importAnswer({ items: [{ item_id: 12, user_id: 2, item_proto_id: 201, ts_owned: 5000 }] }, 'merge')).code, 0);
    const after = await exported();
    assert.deepEqual(
      after.listings,
      file.listings!.filter((l) => l.item_id !== 12),
    );
    assert.deepEqual(await callOk(server, 'market.getListing', { thing_prototype_id: 201 }), { count: 0, things: [] });
    assert.deepEqual(await checkMarket(server.db.kysely), []);
  });

  test('an import whose money or listings do not add up is refused, naming the problem, and changes nothing', async () => {
    const file = await exported();
    const ledger = file.ledger!;
    const cases: { change: Partial<World>; mode: 'merge' | 'replace'; problem: RegExp }[] = [
      {
        mode: 'replace',
        change: { balances: file.balances!.map((b) => (b.user_id === 2 ? { ...b, balance: b.balance + 1 } : b)) },
        problem: /the market does not add up: user 2: balance \d+, entries sum to \d+/,
      },
      { mode: 'merge', change: { balances: [{ user_id: 3, balance: 99999 }] }, problem: /user 3: balance 99999, entries sum to 505/ },
      {
        mode: 'replace',
        change: {
          ledger: ledger.map((t, i) =>
            i === 0 ? { ...t, entries: t.entries.map((e, j) => (j === 0 ? { ...e, amount: e.amount * 2 } : e)) } : t,
          ),
        },
        problem: /ledger\[0\]\.entries: their amounts sum to -?\d+, not 0/,
      },
      {
        mode: 'replace',
        change: { market_sales: file.market_sales!.map((s) => ({ ...s, fee: s.fee + 1 })) },
        problem: /the fee account holds (\d+), sales' fees sum to (\d+)/,
      },
      { mode: 'merge', change: { listings: [{ item_id: 20, price: 100 }] }, problem: /listings\[0\]\.item_id: item 20 is equipped/ },
      { mode: 'merge', change: { listings: [{ item_id: 999, price: 100 }] }, problem: /listings\[0\]\.item_id: unknown item 999/ },
      {
        mode: 'merge',
        change: {
          ledger: [
            {
              transfer_id: 900,
              kind: 'admin_grant',
              entries: [
                { account_id: 77, kind: 'admin_grant', amount: 5, balance_after: 5 },
                { account_id: -2, kind: 'admin_grant', amount: -5 },
              ],
            },
          ],
        },
        problem: /ledger\[0\]\.entries\[0\]\.account_id: unknown user 77/,
      },
    ];
    for (const { change, mode, problem } of cases) {
      const answer = await importAnswer(mode === 'replace' ? { ...file, ...change } : change, mode);
      assert.equal(answer.code, 2, JSON.stringify(answer));
      assert.match(answer.description ?? '', problem);
      assert.deepEqual(marketOf(await exported()), marketOf(file), `nothing changed after ${problem}`);
    }
  });

  test('the command line exports and re-imports the market of a stopped server', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gp-world-market-'));
    const before = await exported();
    await server.close();
    try {
      const env = processDatabaseEnv(location);
      const path = join(dir, 'w.json');
      const first = await runCli(['export', path], env);
      assert.equal(first.code, 0, first.stderr);
      const written = JSON.parse(readFileSync(path, 'utf8')) as World;
      assert.deepEqual(written.ledger, before.ledger);
      assert.deepEqual(written.balances, before.balances);
      const imported = await runCli(['import', path, '--mode', 'replace'], env);
      assert.equal(imported.code, 0, imported.stderr);
      const again = await runCli(['export'], env);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(JSON.parse(again.stdout), written);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      server = await startTestServer({ location, config: { adminKey: ADMIN_KEY } });
    }
    assert.deepEqual(await checkMarket(server.db.kysely), []);
  });
});
