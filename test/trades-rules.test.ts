import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callFails, callOk, callVoid, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { sweepExpiredTrades } from '../src/trades/expiry.js';
import { exportWorld } from '../src/world/export.js';
import { importWorld } from '../src/world/import.js';
import type { World } from '../src/world/schema.js';

/*
 * Expiry (--trade-ttl), the hold on received items (--trade-hold), the limits on offers,
 * the admin methods and world files that carry trades.
 */

const TTL = 3600;
const HOLD = 600;
const ADMIN_KEY = 'admin-key-of-the-trade-rules-test';

const world: World = {
  ...catalogWorld,
  users: [user(1), user(2), user(3)],
  items: [
    ...Array.from({ length: 12 }, (_, i) => ({ item_id: 10 + i, user_id: 1, item_proto_id: 101, ts_owned: 1000 + i })),
    { item_id: 40, user_id: 2, item_proto_id: 201, ts_owned: 2000 },
    { item_id: 41, user_id: 2, item_proto_id: 102, ts_owned: 2001 },
  ],
};

let server: TestServer;
const tokens = new Map<number, string>();
let start: number;

before(async () => {
  server = await startTestServer({
    world,
    config: { adminKey: ADMIN_KEY, trades: { ttl: TTL, hold: HOLD, maxOpenOutgoing: 3, createsPerMinute: 5 } },
  });
  for (const id of [1, 2, 3]) tokens.set(id, await tokenFor(server, id));
  start = Math.floor(server.clock.now() / 1000);
});
after(async () => {
  await server.close();
});

const as = (id: number) => ({ token: tokens.get(id) });
const admin = { headers: { 'x-admin-key': ADMIN_KEY } };
const nowSeconds = () => Math.floor(server.clock.now() / 1000);
const offer = async (from: number, to: number, give: string, take?: string) =>
  (await callOk(server, 'trades.create', { user_id: to, thing_ids_from: give, ...(take ? { thing_ids_to: take } : {}) }, as(from)))
    .trade_id as number;

describe('expiry', () => {
  test('an open trade expires after the TTL: lists drop it, history shows 5 at create_time + TTL, accept answers 802; the sweep writes it', async () => {
    const tradeId = await offer(1, 2, '10');
    server.clock.advance(TTL - 1);
    assert.equal((await callOk(server, 'trades.getIncome', {}, as(2))).count, 1, 'still open a second before');
    server.clock.advance(1);
    assert.equal((await callOk(server, 'trades.getIncome', {}, as(2))).count, 0);
    assert.equal((await callOk(server, 'trades.getOutbound', {}, as(1))).count, 0);
    const history = await callOk(server, 'trades.history', {}, as(2));
    assert.deepEqual(
      [history.count, history.trades[0].trade_id, history.trades[0].status, history.trades[0].reaction_time],
      [1, tradeId, 5, start + TTL],
    );
    await callFails(server, 'trades.accept', { trade_id: tradeId }, 802, as(2));
    await callFails(server, 'trades.cancel', { trade_id: tradeId }, 802, as(1));
    assert.equal(await sweepExpiredTrades(server.services), 1);
    assert.deepEqual(
      await server.db.kysely
        .selectFrom('trades')
        .select(['status', 'reaction_time'])
        .where('trade_id', '=', tradeId)
        .executeTakeFirstOrThrow(),
      { status: 5, reaction_time: start + TTL },
    );
    assert.equal(await sweepExpiredTrades(server.services), 0);
    assert.deepEqual((await callOk(server, 'trades.getById', { trade_id: tradeId }, as(1))).trades[0].status, 5);
  });
});

describe('the hold on received items', () => {
  test('received items cannot be offered or crafted until the hold ends', async () => {
    const tradeId = await offer(1, 2, '11', '41');
    await callVoid(server, 'trades.accept', { trade_id: tradeId }, as(2));
    const at = nowSeconds();
    const held = await server.db.kysely
      .selectFrom('items')
      .select(['item_id', 'ts_can_trade'])
      .where('item_id', 'in', [11, 41])
      .orderBy('item_id')
      .execute();
    assert.deepEqual(held, [
      { item_id: 11, ts_can_trade: at + HOLD },
      { item_id: 41, ts_can_trade: at + HOLD },
    ]);
    const things = (await callOk(server, 'inventory.get', { add_legacy: 1 }, as(2))).things;
    assert.equal(things.find((t: any) => t.thing_id === 11).can_give, at + HOLD);
    await callFails(server, 'trades.create', { user_id: 1, thing_ids_from: '11' }, 603, as(2));
    await callFails(server, 'trades.create', { user_id: 2, thing_ids_to: '11' }, 603, as(1));
    const prepared = await server.call('execute.prepareTrade', { user_id: 1 }, as(2));
    assert.deepEqual(
      (prepared.body.result as any).items[0].list.map((t: any) => t.thing_id),
      [40],
    );
    server.clock.advance(HOLD);
    const back = await offer(2, 1, '11');
    await callVoid(server, 'trades.revoke', { trade_id: back }, as(2));
  });
});

describe('limits', () => {
  test('at most 3 open offers at once and 5 offers made a minute: both answer 7 with retry_after; a refused offer does not count', async () => {
    server.clock.advance(60);
    const open = [await offer(1, 3, '12'), await offer(1, 3, '13'), await offer(1, 3, '14')];
    const full = await server.call('trades.create', { user_id: 3, thing_ids_from: '15' }, as(1));
    assert.equal(full.body.code, 7);
    assert.equal(full.status, 429);
    assert.deepEqual(full.body.data, { retry_after: TTL });
    await callVoid(server, 'trades.revoke', { trade_id: open[0] }, as(1));
    await callFails(server, 'trades.create', { user_id: 3, thing_ids_from: '40' }, 603, as(1));
    open[0] = await offer(1, 3, '15');
    await callVoid(server, 'trades.revoke', { trade_id: open[1] }, as(1));
    server.clock.advance(10);
    open[1] = await offer(1, 3, '16');
    await callVoid(server, 'trades.revoke', { trade_id: open[2] }, as(1));
    // Five offers made in the last minute, four of them 10 s ago: the sixth waits until those leave the window.
    const rate = await server.call('trades.create', { user_id: 3, thing_ids_from: '17' }, as(1));
    assert.equal(rate.status, 429);
    assert.deepEqual(rate.body, { code: 7, description: rate.body.description, data: { retry_after: 50 } });
    server.clock.advance(49);
    await callFails(server, 'trades.create', { user_id: 3, thing_ids_from: '17' }, 7, as(1));
    server.clock.advance(1);
    open[2] = await offer(1, 3, '17');
    for (const tradeId of open) await callVoid(server, 'trades.cancel', { trade_id: tradeId }, as(3));
  });
});

describe('admin', () => {
  test("lists a user's trades, shows one, cancels an open one; every call is audited", async () => {
    const tradeId = await offer(2, 3, '40');
    const listed = await callOk(server, 'admin.listTrades', { user_id: 2, count: 50 }, admin);
    assert.equal(listed.trades[0].trade_id, tradeId);
    assert.equal(listed.count, (await callOk(server, 'trades.history', {}, as(2))).count + 1);
    const shown = await callOk(server, 'admin.getTrade', { trade_id: tradeId }, admin);
    assert.deepEqual(shown.trades, [listed.trades[0]]);
    assert.deepEqual(
      shown.users_data.map((u: any) => u.user_id),
      [2, 3],
    );
    assert.deepEqual(await callOk(server, 'admin.cancelTrade', { trade_id: tradeId, reason: 'fraud' }, admin), { trade_id: tradeId });
    await callFails(server, 'admin.cancelTrade', { trade_id: tradeId }, 802, admin);
    await callFails(server, 'admin.getTrade', { trade_id: 999_999 }, 801, admin);
    assert.equal((await callOk(server, 'trades.getById', { trade_id: tradeId }, as(3))).trades[0].status, 3);
    const audit = await server.db.kysely
      .selectFrom('audit_log')
      .select(['action', 'params', 'result_code'])
      .where('action', '=', 'admin.cancelTrade')
      .orderBy('audit_id')
      .execute();
    assert.deepEqual(
      audit.map((a) => [a.result_code, JSON.parse(a.params).reason ?? null]),
      [
        [0, 'fraud'],
        [802, null],
      ],
    );
  });
});

describe('world files', () => {
  test('an export carries every trade and move; importing it restores them; a merge that replaces an item invalidates its open trades', async () => {
    const open = await offer(2, 1, '40');
    const exported = await exportWorld(server.db);
    assert.ok(exported.trades!.length >= 6);
    const accepted = exported.trades!.find((t) => t.status === 1)!;
    assert.deepEqual(accepted.things_from![0], { item_id: 11, item_proto_id: 101, user_id: 1, ts_owned: 1001, ts_can_trade: 0 });
    assert.deepEqual(
      exported.trade_moves!.filter((m) => m.trade_id === accepted.trade_id).map((m) => [m.item_id, m.from_user_id, m.to_user_id]),
      [
        [11, 1, 2],
        [41, 2, 1],
      ],
    );
    const copy = await startTestServer({
      world: exported,
      config: { trades: { ttl: TTL, hold: HOLD, maxOpenOutgoing: 3, createsPerMinute: 5 } },
      clock: server.clock,
    });
    try {
      const again = await exportWorld(copy.db);
      assert.deepEqual(again.trades, exported.trades);
      assert.deepEqual(again.trade_moves, exported.trade_moves);
      const token = await tokenFor(copy, 1);
      const income = await copy.call('trades.getIncome', {}, { token });
      assert.deepEqual(income.body.data.trades, (await callOk(server, 'trades.getIncome', {}, as(1))).trades);
    } finally {
      await copy.close();
    }
    await importWorld(server.db, { items: [{ item_id: 40, user_id: 2, item_proto_id: 201 }] }, { mode: 'merge', now: nowSeconds() });
    assert.equal((await callOk(server, 'trades.getById', { trade_id: open }, as(1))).trades[0].status, 4);
  });

  test('a trade naming unknown users or prototypes, or moves without their trade, is refused', async () => {
    const bad: World[] = [
      { trades: [{ trade_id: 900, user_id_from: 1, user_id_to: 77, things_from: [{ item_id: 10, item_proto_id: 101 }] }] },
      { trades: [{ trade_id: 900, user_id_from: 1, user_id_to: 2, things_from: [{ item_id: 10, item_proto_id: 9999 }] }] },
      { trades: [{ trade_id: 900, user_id_from: 1, user_id_to: 2 }] },
      { trade_moves: [{ trade_id: 901, item_id: 10, from_user_id: 1, to_user_id: 2, ts: 1 }] },
    ];
    for (const file of bad) await assert.rejects(importWorld(server.db, file, { mode: 'merge', now: nowSeconds() }), /invalid world file/);
  });
});
