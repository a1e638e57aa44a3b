import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callFails, callOk, callVoid, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { checkLedger } from '../src/market/index.js';
import { sweepExpiredListings } from '../src/market/trading.js';
import type { World } from '../src/world/schema.js';

/*
 * The wallet and the market over the HTTP surface: user 1 sells, 2 buys, 3 has no money,
 * 4 is frozen. Balances are given by admin.grantMoney.
 */

const ADMIN_KEY = 'admin-key-of-the-market-test';
const HOLD = 7 * 86400;
const TTL = 30 * 86400;

const world: World = {
  ...catalogWorld,
  users: [user(1), user(2), user(3), user(4)],
  items: [
    { item_id: 10, user_id: 1, item_proto_id: 101, ts_owned: 1000 },
    { item_id: 11, user_id: 1, item_proto_id: 101, ts_owned: 1001 },
    { item_id: 12, user_id: 1, item_proto_id: 201, ts_owned: 1002, equip: { game: 'classic', slot: 'cards', monopoly_id: 1 } },
    { item_id: 13, user_id: 1, item_proto_id: 101, ts_owned: 1003, ts_can_trade: -1 },
    { item_id: 14, user_id: 1, item_proto_id: 901, ts_owned: 1004 },
    { item_id: 15, user_id: 1, item_proto_id: 501, ts_owned: 1005 },
    { item_id: 16, user_id: 1, item_proto_id: 502, ts_owned: 1006 },
    { item_id: 17, user_id: 1, item_proto_id: 101, ts_owned: 1007 },
    { item_id: 18, user_id: 1, item_proto_id: 102, ts_owned: 1008 },
    { item_id: 20, user_id: 2, item_proto_id: 101, ts_owned: 2000 },
    ...Array.from({ length: 10 }, (_, i) => ({ item_id: 30 + i, user_id: 1, item_proto_id: 101, ts_owned: 3000 + i })),
    { item_id: 40, user_id: 4, item_proto_id: 101, ts_owned: 4000 },
  ],
};

let server: TestServer;
const tokens = new Map<number, string>();
const as = (id: number) => ({ token: tokens.get(id) });
const admin = { headers: { 'x-admin-key': ADMIN_KEY } };
let now: number;

before(async () => {
  server = await startTestServer({ world, config: { adminKey: ADMIN_KEY } });
  for (const id of [1, 2, 3, 4]) tokens.set(id, await tokenFor(server, id));
  now = Math.floor(server.clock.now() / 1000);
});
after(async () => {
  await server.close();
});

const inventoryIds = async (userId: number) =>
  ((await callOk(server, 'inventory.get', { add_legacy: 1 }, as(userId))).things as { thing_id: number }[]).map((t) => t.thing_id);
const walletOf = async (userId: number) => {
  const answer = await server.call('execute.wallet', {}, as(userId));
  assert.equal(answer.body.code, 0);
  return (answer.body.result as { info: { balance: number } }).info.balance;
};
const listingOf = (protoId: number) => callOk(server, 'market.getListing', { thing_prototype_id: protoId });

describe('wallet', () => {
  test('a grant is the balance of execute.wallet and account.info, and the first entry of the history', async () => {
    assert.equal(await walletOf(2), 0);
    assert.deepEqual(await callOk(server, 'admin.grantMoney', { user_id: 2, amount: 100, reason: 'test' }, admin), { balance: 100 });
    assert.equal(await walletOf(2), 100);
    assert.equal((await callOk(server, 'account.info', {}, as(2))).balance, 100);
    const history = await callOk(server, 'wallet.getHistory', {}, as(2));
    assert.equal(history.count, 1);
    assert.deepEqual(history.history[0], { id: history.history[0].id, ts: now, amount: 100, balance: 100, kind: 'admin_grant' });
  });

  test('a revocation needs the balance to cover it', async () => {
    await callOk(server, 'admin.grantMoney', { user_id: 3, amount: 1.5, reason: 'test' }, admin);
    await callFails(server, 'admin.revokeMoney', { user_id: 3, amount: 2, reason: 'test' }, 2103, admin);
    assert.deepEqual(await callOk(server, 'admin.revokeMoney', { user_id: 3, amount: 1.5, reason: 'test' }, admin), { balance: 0 });
    await callFails(server, 'admin.grantMoney', { user_id: 3, amount: 1.234, reason: 'test' }, 2, admin);
    await callFails(server, 'admin.grantMoney', { user_id: 999, amount: 1, reason: 'test' }, 101, admin);
  });
});

describe('market', () => {
  test('selling takes the item out of the inventory and shows it in the listing, without its seller', async () => {
    assert.deepEqual(await callOk(server, 'market.sell', { thing_id: 10, price: 12.5 }, as(1)), { listing_id: 1, price: 12.5 });
    assert.ok(!(await inventoryIds(1)).includes(10));
    const listing = await listingOf(101);
    assert.equal(listing.count, 1);
    const thing = listing.things[0];
    assert.equal(thing.thing_id, 10);
    assert.equal(thing.price, 12.5);
    assert.equal(thing.thing_prototype_id, 101);
    assert.equal(thing.title, 'Card A1');
    assert.equal(thing.user_id, undefined);
  });

  test('selling it again changes its price', async () => {
    assert.deepEqual(await callOk(server, 'market.sell', { thing_id: 10, price: 12 }, as(1)), { listing_id: 1, price: 12 });
    assert.equal((await listingOf(101)).things[0].price, 12);
  });

  test('an item that cannot be traded, is equipped or is not yours is refused with 603; a price outside the bounds with 2', async () => {
    for (const id of [12, 13, 14, 20, 999]) await callFails(server, 'market.sell', { thing_id: id, price: 1 }, 603, as(1));
    await callFails(server, 'market.sell', { thing_id: 11, price: 0 }, 2, as(1));
    await callFails(server, 'market.sell', { thing_id: 11, price: 1.005 }, 2, as(1));
    await callFails(server, 'market.sell', { thing_id: 11, price: 1_000_001 }, 2, as(1));
  });

  test('buying at another price answers 2102 with the price; at the price, the item moves and the seller is paid less the fee', async () => {
    const changed = await callFails(server, 'market.buy', { thing_id: 10, price: 1250 }, 2102, as(2));
    assert.deepEqual(changed.body.data, { price: 12 });
    assert.deepEqual(await callOk(server, 'market.buy', { thing_id: 10, price: '1200.0000000001' }, as(2)), {
      thing_id: 10,
      price: 12,
      balance: 88,
    });
    assert.equal(await walletOf(2), 88);
    assert.equal(await walletOf(1), 10.8);
    assert.ok((await inventoryIds(2)).includes(10));
    const bought = (await callOk(server, 'inventory.get', { add_legacy: 1 }, as(2))).things.find(
      (i: { thing_id: number }) => i.thing_id === 10,
    );
    assert.equal(bought.ts_can_trade, now + HOLD);
    assert.equal((await listingOf(101)).count, 0);
    assert.deepEqual(await checkLedger(server.db.kysely), []);
  });

  test('a bought item cannot be sold again before its lock ends; a sold one cannot be bought again', async () => {
    await callFails(server, 'market.sell', { thing_id: 10, price: 20 }, 603, as(2));
    await callFails(server, 'market.buy', { thing_id: 10, price: 1200 }, 2101, as(2));
  });

  test('the history shows each side of the sale', async () => {
    const buyer = await callOk(server, 'wallet.getHistory', { type: 'market_purchase' }, as(2));
    assert.deepEqual(buyer.history, [
      {
        id: buyer.history[0].id,
        ts: now,
        amount: -12,
        balance: 88,
        kind: 'market_purchase',
        thing_id: 10,
        thing_prototype_id: 101,
        listing_id: 1,
      },
    ]);
    const seller = await callOk(server, 'wallet.getHistory', {}, as(1));
    assert.deepEqual(seller.history, [
      {
        id: seller.history[0].id,
        ts: now,
        amount: 10.8,
        balance: 10.8,
        kind: 'market_sale',
        thing_id: 10,
        thing_prototype_id: 101,
        listing_id: 1,
      },
    ]);
  });

  test('your own listing cannot be bought; without the money the listing stays', async () => {
    await callOk(server, 'market.sell', { thing_id: 17, price: 3 }, as(1));
    await callFails(server, 'market.buy', { thing_id: 17, price: 300 }, 2104, as(1));
    await callFails(server, 'market.buy', { thing_id: 17, price: 300 }, 2103, as(3));
    assert.equal((await listingOf(101)).count, 1);
    assert.equal(await walletOf(3), 0);
  });

  test('a listed item is refused by trades, crafts and openings with their codes', async () => {
    await callOk(server, 'market.sell', { thing_id: 15, price: 1 }, as(1));
    await callOk(server, 'market.sell', { thing_id: 30, price: 1 }, as(1));
    await callFails(server, 'trades.create', { user_id: 2, thing_ids_from: '17' }, 603, as(1));
    await callFails(server, 'inventory.craft', { item_ids: Array.from({ length: 10 }, (_, i) => 30 + i).join(',') }, 603, as(1));
    await callFails(server, 'inventory.open', { item_id: 15, key_item_id: 16 }, 603, as(1));
    await callVoid(server, 'market.cancel', { thing_id: 30 }, as(1));
  });

  test('market.cancel gives the item back; a second one answers 2101', async () => {
    await callVoid(server, 'market.cancel', { thing_id: 17 }, as(1));
    await callFails(server, 'market.cancel', { thing_id: 17 }, 2101, as(1));
    assert.ok((await inventoryIds(1)).includes(17));
    await callFails(server, 'market.cancel', { thing_id: 15 }, 2101, as(2));
  });

  test('an item in an open trade cannot be listed', async () => {
    await callOk(server, 'trades.create', { user_id: 2, thing_ids_from: '18' }, as(1));
    await callFails(server, 'market.sell', { thing_id: 18, price: 1 }, 603, as(1));
  });

  test("search, the seller's listings and the last sales", async () => {
    await callOk(server, 'market.sell', { thing_id: 11, price: 2 }, as(1));
    await callOk(server, 'market.sell', { thing_id: 17, price: 4 }, as(1));
    const search = await callOk(server, 'market.search', { thing_type: 0, quality: 1 });
    assert.equal(search.count, 1);
    assert.equal(search.things[0].thing_prototype_id, 101);
    assert.equal(search.things[0].price, 2);
    assert.equal(search.things[0].count, 2);
    const mine = await callOk(server, 'market.getMy', {}, as(1));
    assert.deepEqual(
      mine.things.map((t: { thing_id: number; price: number; ts_expires: number }) => [t.thing_id, t.price, t.ts_expires]),
      [
        [17, 4, now + TTL],
        [11, 2, now + TTL],
        [15, 1, now + TTL],
      ],
    );
    const sellups = await callOk(server, 'market.getLastSellups', { count: 50 });
    assert.equal(sellups.things.length, 1);
    assert.equal(sellups.things[0].thing_id, 10);
    assert.equal(sellups.things[0].price, 12);
    assert.equal(sellups.things[0].count, 2);
    assert.deepEqual(sellups.collections, [{ id: 1, title: 'Alpha' }]);
    assert.equal(sellups.thing_types[0].id, 0);
    assert.equal(sellups.qualities[0].id, 1);
    await callFails(server, 'market.getLastSellups', { count: 51 }, 2);
  });

  test('a frozen user can neither sell nor buy', async () => {
    assert.deepEqual(await callOk(server, 'admin.freezeMarket', { user_id: 4, frozen: 1, reason: 'test' }, admin), {
      user_id: 4,
      frozen: 1,
    });
    await callFails(server, 'market.sell', { thing_id: 40, price: 1 }, 2105, as(4));
    await callFails(server, 'market.buy', { thing_id: 11, price: 200 }, 2105, as(4));
    assert.deepEqual(await callOk(server, 'admin.freezeMarket', { user_id: 4, frozen: 0, reason: 'test' }, admin), {
      user_id: 4,
      frozen: 0,
    });
    await callOk(server, 'market.sell', { thing_id: 40, price: 1 }, as(4));
  });

  test('administrators list and cancel listings', async () => {
    const listed = await callOk(server, 'admin.listListings', { user_id: 4 }, admin);
    assert.equal(listed.count, 1);
    assert.equal(listed.listings[0].thing_id, 40);
    assert.deepEqual(await callOk(server, 'admin.cancelListing', { thing_id: 40, reason: 'test' }, admin), { thing_id: 40, user_id: 4 });
    await callFails(server, 'admin.cancelListing', { thing_id: 40, reason: 'test' }, 2101, admin);
    assert.ok((await inventoryIds(4)).includes(40));
  });

  test('an expired listing is not shown nor bought, and the sweep gives the item back', async () => {
    server.clock.advance(TTL);
    assert.equal((await listingOf(101)).count, 0);
    await callFails(server, 'market.buy', { thing_id: 11, price: 200 }, 2101, as(2));
    assert.equal(await sweepExpiredListings(server.services), 3);
    assert.ok((await inventoryIds(1)).includes(11));
    assert.equal((await callOk(server, 'market.getMy', {}, as(1))).count, 0);
    assert.deepEqual(await checkLedger(server.db.kysely), []);
  });
});

describe('shop and quick sell', () => {
  test('shop.buy makes the item at prices.buy; a retry with the same request_id answers the same purchase', async () => {
    const before = await walletOf(2);
    const bought = await callOk(server, 'shop.buy', { item_proto_id: 101, request_id: 'r-1' }, as(2));
    assert.equal(bought.item.item_proto_id, 101);
    assert.equal(bought.balance, before - 5);
    assert.deepEqual(await callOk(server, 'shop.buy', { item_proto_id: 101, request_id: 'r-1' }, as(2)), bought);
    assert.equal(await walletOf(2), before - 5);
    assert.ok((await inventoryIds(2)).includes(bought.item.item_id));
    await callFails(server, 'shop.buy', { item_proto_id: 102 }, 2106, as(2));
    await callFails(server, 'shop.buy', { item_proto_id: 999 }, 2106, as(2));
    await callFails(server, 'shop.buy', { item_proto_id: 101 }, 2103, as(3));
    const history = await callOk(server, 'wallet.getHistory', { type: 'shop' }, as(2));
    assert.deepEqual(history.history, [
      {
        id: history.history[0].id,
        ts: history.history[0].ts,
        amount: -5,
        balance: before - 5,
        kind: 'shop',
        thing_id: bought.item.item_id,
        thing_prototype_id: 101,
      },
    ]);
  });

  test('market.quickSell ends the item and pays prices.quick_sell; what the catalogue does not buy back answers 2106', async () => {
    const before = await walletOf(1);
    assert.deepEqual(await callOk(server, 'market.quickSell', { thing_id: 11 }, as(1)), { balance: before + 0.5 });
    assert.ok(!(await inventoryIds(1)).includes(11));
    await callFails(server, 'market.quickSell', { thing_id: 11 }, 603, as(1));
    await callFails(server, 'market.quickSell', { thing_id: 18 }, 2106, as(1));
    await callFails(server, 'market.quickSell', { thing_id: 20 }, 603, as(1));
    assert.deepEqual(await checkLedger(server.db.kysely), []);
  });
});

describe('world files', () => {
  test("a listed item is exported as its seller's; a replace keeps the market the file carries, and ends what it does not", async () => {
    await callOk(server, 'market.sell', { thing_id: 17, price: 3 }, as(1));
    const { world: exported } = await callOk(server, 'admin.exportWorld', {}, admin);
    assert.equal(exported.items.find((i: { item_id: number }) => i.item_id === 17).user_id, 1);
    const k = server.db.kysely;
    const before = {
      listings: await k.selectFrom('market_listings').selectAll().orderBy('listing_id').execute(),
      balances: await k.selectFrom('balances').selectAll().orderBy('user_id').execute(),
    };
    assert.ok(before.listings.some((l) => Number(l.item_id) === 17));
    await callOk(server, 'admin.importWorld', { world: JSON.stringify(exported), mode: 'replace' }, admin);
    assert.deepEqual(await k.selectFrom('market_listings').selectAll().orderBy('listing_id').execute(), before.listings);
    assert.deepEqual(await k.selectFrom('balances').selectAll().orderBy('user_id').execute(), before.balances);
    assert.deepEqual(await checkLedger(k), []);

    const { balances: _b, ledger: _l, listings: _s, market_sales: _m, market_freezes: _f, ...withoutMarket } = exported;
    await callOk(server, 'admin.importWorld', { world: JSON.stringify(withoutMarket), mode: 'replace' }, admin);
    assert.deepEqual(await k.selectFrom('market_listings').selectAll().execute(), []);
    assert.deepEqual(await k.selectFrom('balances').selectAll().execute(), []);
    assert.deepEqual(await checkLedger(k), []);
    const item = await k.selectFrom('items').select(['user_id', 'state']).where('item_id', '=', 17).executeTakeFirstOrThrow();
    assert.deepEqual({ user_id: Number(item.user_id), state: item.state }, { user_id: 1, state: 'owned' });
  });
});
