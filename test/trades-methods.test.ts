import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callFails, callOk, callVoid, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { craftItems } from '../src/inventory/craft.js';
import { revokeItem } from '../src/inventory/grants.js';
import type { World } from '../src/world/schema.js';

/*
 * The trades.* methods, privacy.* and execute.prepareTrade over the HTTP surface. Users 1
 * and 2 trade; 3 blocked 1; 4 takes trades from friends only (2 is a friend); 5 takes
 * gifts only; 6 takes nothing; 7 takes gifts at once; 8 is a bot of 1; 9 is banned.
 */

const LOCKED = 2_000_000_000;
const ADMIN_KEY = 'admin-key-of-the-trades-test';

const world: World = {
  ...catalogWorld,
  users: [
    user(1),
    user(2, { domain: 'bob' }),
    user(3),
    user(4),
    user(5),
    user(6),
    user(7),
    user(8, { bot_owner: 1 }),
    user(9, { global_ban: 1 }),
  ],
  friends: [[2, 4]],
  blocks: [{ user_id: 3, blocked_user_id: 1 }],
  items: [
    { item_id: 10, user_id: 1, item_proto_id: 101, ts_owned: 1000 },
    { item_id: 11, user_id: 1, item_proto_id: 102, ts_owned: 1001, data: { souvenir: 'Cup' } },
    { item_id: 12, user_id: 1, item_proto_id: 201, ts_owned: 1002, equip: { game: 'classic', slot: 'cards', monopoly_id: 1 } },
    { item_id: 13, user_id: 1, item_proto_id: 101, ts_owned: 1003, ts_can_trade: LOCKED },
    { item_id: 14, user_id: 1, item_proto_id: 101, ts_owned: 1004, ts_can_trade: -1 },
    { item_id: 15, user_id: 1, item_proto_id: 901, ts_owned: 1005 },
    { item_id: 16, user_id: 1, item_proto_id: 501, ts_owned: 1006 },
    { item_id: 17, user_id: 1, item_proto_id: 101, ts_owned: 1007 },
    { item_id: 18, user_id: 1, item_proto_id: 101, ts_owned: 1008 },
    { item_id: 20, user_id: 2, item_proto_id: 201, ts_owned: 2000 },
    { item_id: 21, user_id: 2, item_proto_id: 502, ts_owned: 2001 },
    { item_id: 22, user_id: 2, item_proto_id: 101, ts_owned: 2002 },
    { item_id: 80, user_id: 8, item_proto_id: 101, ts_owned: 3000 },
    // Ten class-1 cards of user 1 for a craft that ends a trade.
    ...Array.from({ length: 10 }, (_, i) => ({ item_id: 100 + i, user_id: 1, item_proto_id: 101, ts_owned: 4000 + i })),
  ],
};

let server: TestServer;
const tokens = new Map<number, string>();
let bot: string;
let now: number;

before(async () => {
  server = await startTestServer({ world, config: { adminKey: ADMIN_KEY } });
  for (const id of [1, 2, 3, 4, 5, 6, 7]) tokens.set(id, await tokenFor(server, id));
  bot = await tokenFor(server, 8, { bot: true });
  now = Math.floor(server.clock.now() / 1000);
  const settings: [number, Record<string, number>][] = [
    [4, { trades_income_from_friends: 1 }],
    [5, { trades_income: 0 }],
    [6, { trades_income: 0, trades_income_gifts: 0 }],
    [7, { trades_income_gifts_autoaccept: 1 }],
  ];
  for (const [id, values] of settings) await callVoid(server, 'privacy.update', values, { token: tokens.get(id) });
});
after(async () => {
  await server.close();
});

const as = (id: number) => ({ token: tokens.get(id) });

/** Items of a user as inventory.get shows them in the legacy form, by id. */
async function things(userId: number): Promise<Map<number, any>> {
  const data = await callOk(server, 'inventory.get', { add_legacy: 1 }, as(userId));
  return new Map(data.things.map((t: any) => [t.thing_id, t]));
}

/** Users as users.get answers them to `viewer` in the full form (the trade lists show partners so). */
async function fullUsers(ids: number[], viewer: number): Promise<any[]> {
  return callOk(server, 'users.get', { user_ids: ids.join(',') }, as(viewer));
}

async function owner(itemId: number): Promise<{ user_id: number; state: string }> {
  return server.db.kysely.selectFrom('items').select(['user_id', 'state']).where('item_id', '=', itemId).executeTakeFirstOrThrow();
}

describe('privacy', () => {
  test('privacy.get answers every setting as numbers; privacy.update changes only those given', async () => {
    assert.deepEqual(await callOk(server, 'privacy.get', {}, as(2)), {
      inventory: 'everyone',
      messages: 'everyone',
      trades_income: 1,
      trades_income_from_friends: 0,
      trades_income_gifts: 1,
      trades_income_gifts_autoaccept: 0,
    });
    assert.deepEqual(await callOk(server, 'privacy.get', {}, as(4)), {
      inventory: 'everyone',
      messages: 'everyone',
      trades_income: 1,
      trades_income_from_friends: 1,
      trades_income_gifts: 1,
      trades_income_gifts_autoaccept: 0,
    });
    assert.deepEqual((await server.call('privacy.update', { inventory: 'friends' }, as(3))).body, { code: 0 });
    assert.deepEqual(await callOk(server, 'account.getPrivacy', {}, as(3)), {
      inventory: 'friends',
      messages: 'everyone',
      trades_income: 1,
      trades_income_from_friends: 0,
      trades_income_gifts: 1,
      trades_income_gifts_autoaccept: 0,
    });
    await callFails(server, 'privacy.update', { trades_income: 2 }, 2, as(3));
    await callFails(server, 'privacy.update', { inventory: 'strangers' }, 2, as(3));
    await callFails(server, 'privacy.get', {}, 4, { token: bot });
    await callFails(server, 'privacy.get', {}, 1);
  });
});

describe('trades.create', () => {
  test('checks its parameters, the partner and every item', async () => {
    await callFails(server, 'trades.create', { user_id: 2 }, 2, as(1));
    await callFails(server, 'trades.create', { user_id: 1, thing_ids_from: '10' }, 2, as(1));
    await callFails(server, 'trades.create', { user_id: 2, thing_ids_from: '10,10' }, 2, as(1));
    await callFails(server, 'trades.create', { user_id: 2, thing_ids_from: '10', thing_ids_to: '10' }, 2, as(1));
    const many = Array.from({ length: 51 }, (_, i) => i + 1000).join(',');
    await callFails(server, 'trades.create', { user_id: 2, thing_ids_from: many }, 6, as(1));
    await callFails(server, 'trades.create', { user_id: 2, thing_ids_to: many }, 6, as(1));
    await callFails(server, 'trades.create', { user_id: 424242, thing_ids_from: '10' }, 101, as(1));
    await callFails(server, 'trades.create', { user_id: 9, thing_ids_from: '10' }, 101, as(1));
    await callFails(server, 'trades.create', { user_id: 3, thing_ids_from: '10' }, 107, as(1));
    await callFails(server, 'trades.create', { user_id: 1, thing_ids_from: '10' }, 107, as(3));
    // Not the side's, unknown, equipped, trade-locked, never tradable (lock -1 or prototype status 1).
    for (const [from, to] of [
      ['20', ''],
      ['', '10'],
      ['999', ''],
      ['12', ''],
      ['13', ''],
      ['14', ''],
      ['15', ''],
      ['10', '999'],
    ]) {
      const params: Record<string, unknown> = { user_id: 2 };
      if (from) params.thing_ids_from = from;
      if (to) params.thing_ids_to = to;
      await callFails(server, 'trades.create', params, 603, as(1));
    }
    assert.equal(await server.db.kysely.selectFrom('trades').select('trade_id').executeTakeFirst(), undefined, 'no trade was made');
  });

  test("the receiver's privacy: friends only, gifts only, nothing, gifts at once", async () => {
    await callFails(server, 'trades.create', { user_id: 4, thing_ids_from: '10', thing_ids_to: '22' }, 701, as(1));
    await callFails(server, 'trades.create', { user_id: 5, thing_ids_from: '10', thing_ids_to: '22' }, 701, as(1));
    await callFails(server, 'trades.create', { user_id: 6, thing_ids_from: '10' }, 701, as(1));
    // 4 takes trades from a friend; gifts from anyone (trades_income_gifts), like 5.
    const fromFriend = await callOk(server, 'trades.create', { user_id: 4, thing_ids_from: '20' }, as(2));
    const gift = await callOk(server, 'trades.create', { user_id: 5, thing_ids_from: '17' }, as(1));
    await callVoid(server, 'trades.cancel', { trade_id: fromFriend.trade_id }, as(2));
    await callVoid(server, 'trades.cancel', { trade_id: gift.trade_id }, as(1));
    assert.deepEqual([(await owner(20)).user_id, (await owner(17)).user_id], [2, 1]);
  });

  test('a gift to a user who accepts gifts at once completes at once', async () => {
    const before = await things(1);
    const { trade_id } = await callOk(server, 'trades.create', { user_id: 7, item_ids_from: '18' }, as(1));
    assert.deepEqual(await owner(18), { user_id: 7, state: 'owned' });
    const list = await callOk(server, 'trades.history', {}, as(7));
    assert.equal(list.trades[0].trade_id, trade_id);
    assert.equal(list.trades[0].status, 1);
    assert.equal(list.trades[0].reaction_time, now);
    assert.deepEqual(list.trades[0].things_from, [before.get(18)]);
    const received = (await things(7)).get(18);
    assert.deepEqual(received.previous_owners_user_ids, [1]);
    assert.deepEqual(received.owners_history, [1]);
    assert.deepEqual(received.gift, { from_user_id: 1, to_user_id: 7, ts: now });
    assert.equal(received.user_id, 7);
    assert.equal(received.owned_time, now);
    assert.equal(received.ts_owned, now);
  });
});

describe('a trade from offer to acceptance', () => {
  test('lists, getById, accept: items move, keep their ids and record their provenance', async () => {
    const mine = await things(1);
    const theirs = await things(2);
    const { trade_id } = await callOk(server, 'trades.create', { user_id: 'bob', thing_ids_from: '10,11', thing_ids_to: '20' }, as(1));
    const expected = {
      trade_id,
      status: 0,
      create_time: now,
      reaction_time: null,
      user_id_from: 1,
      user_id_to: 2,
      things_from: [mine.get(10), mine.get(11)],
      things_to: [theirs.get(20)],
    };
    const [one, two] = [await fullUsers([1], 2), await fullUsers([2], 1)];
    const metadata = { collections: [1, 2], qualities: [1, 2], thing_types: [0] };
    assert.deepEqual(await callOk(server, 'trades.getIncome', {}, as(2)), {
      count: 1,
      trades: [expected],
      users_data: one,
      user_data: one,
      ...metadata,
    });
    assert.deepEqual(await callOk(server, 'trades.getOutbound', {}, as(1)), {
      count: 1,
      trades: [expected],
      users_data: two,
      user_data: two,
      ...metadata,
    });
    assert.deepEqual(await callOk(server, 'trades.getById', { trade_id }, as(2)), {
      count: 1,
      trades: [expected],
      users_data: one,
      user_data: one,
      ...metadata,
    });
    assert.deepEqual(await callOk(server, 'trades.getOutbound', {}, as(2)), {
      count: 0,
      trades: [],
      users_data: [],
      user_data: [],
      collections: [],
      qualities: [],
      thing_types: [],
    });
    await callFails(server, 'trades.getById', { trade_id }, 801, as(3));
    await callFails(server, 'trades.getById', { trade_id: 999_999 }, 801, as(1));
    await callFails(server, 'trades.accept', { trade_id }, 4, as(1));
    await callFails(server, 'trades.decline', { trade_id }, 4, as(1));
    await callFails(server, 'trades.revoke', { trade_id }, 4, as(2));
    await callFails(server, 'trades.accept', { trade_id }, 801, as(3));

    server.clock.advance(60);
    const at = now + 60;
    assert.deepEqual((await server.call('trades.accept', { trade_id }, as(2))).body, { code: 0 });
    await callFails(server, 'trades.accept', { trade_id }, 802, as(2));
    await callFails(server, 'trades.cancel', { trade_id }, 802, as(1));
    assert.deepEqual(
      [await owner(10), await owner(11), await owner(20)],
      [
        { user_id: 2, state: 'owned' },
        { user_id: 2, state: 'owned' },
        { user_id: 1, state: 'owned' },
      ],
    );
    const received = await things(2);
    assert.deepEqual(received.get(10), {
      ...mine.get(10),
      user_id: 2,
      ts_owned: at,
      owned_time: at,
      previous_owners_user_ids: [1],
      owners_history: [1],
    });
    assert.deepEqual(received.get(11), {
      ...mine.get(11),
      user_id: 2,
      ts_owned: at,
      owned_time: at,
      previous_owners_user_ids: [1],
      owners_history: [1],
    });
    assert.deepEqual((await things(1)).get(20), {
      ...theirs.get(20),
      user_id: 1,
      ts_owned: at,
      owned_time: at,
      previous_owners_user_ids: [2],
      owners_history: [2],
    });
    // History shows the items as they were offered, with the reaction time.
    const history = await callOk(server, 'trades.history', {}, as(2));
    assert.deepEqual(history.trades[0], { ...expected, status: 1, reaction_time: at });
    assert.deepEqual(await callOk(server, 'trades.historyWith', { user_id: 1 }, as(2)), {
      count: 1,
      trades: [{ ...expected, status: 1, reaction_time: at }],
      users_data: one,
      user_data: one,
      ...metadata,
    });
    assert.equal((await callOk(server, 'trades.historyWith', { user_id: 4 }, as(2))).count, 1, 'the cancelled gift to 4');
    const ledger = await server.db.kysely
      .selectFrom('trade_moves')
      .select(['trade_id', 'item_id', 'from_user_id', 'to_user_id', 'ts'])
      .where('trade_id', '=', trade_id)
      .orderBy('item_id')
      .execute();
    assert.deepEqual(ledger, [
      { trade_id, item_id: 10, from_user_id: 1, to_user_id: 2, ts: at },
      { trade_id, item_id: 11, from_user_id: 1, to_user_id: 2, ts: at },
      { trade_id, item_id: 20, from_user_id: 2, to_user_id: 1, ts: at },
    ]);
    // Back again: the earlier owners accumulate.
    const back = await callOk(server, 'trades.create', { user_id: 1, thing_ids_from: '10' }, as(2));
    await callVoid(server, 'trades.accept', { trade_id: back.trade_id }, as(1));
    assert.deepEqual((await things(1)).get(10).previous_owners_user_ids, [1, 2]);
  });

  test('decline, revoke, cancel: one transition each, nothing moves', async () => {
    const statuses: number[] = [];
    for (const [method, by, status] of [
      ['trades.decline', 1, 2],
      ['trades.revoke', 2, 3],
      ['trades.cancel', 1, 2],
      ['trades.cancel', 2, 3],
    ] as const) {
      const { trade_id } = await callOk(server, 'trades.create', { user_id: 1, thing_ids_from: '21', thing_ids_to: '16' }, as(2));
      assert.deepEqual((await server.call(method, { trade_id }, as(by))).body, { code: 0 });
      await callFails(server, method, { trade_id }, 802, as(by));
      await callFails(server, 'trades.accept', { trade_id }, 802, as(1));
      const shown = await callOk(server, 'trades.getById', { trade_id }, as(1));
      assert.equal(shown.trades[0].reaction_time, now + 60);
      statuses.push(shown.trades[0].status);
      assert.equal(status, shown.trades[0].status);
    }
    assert.deepEqual(statuses, [2, 3, 2, 3]);
    assert.deepEqual([(await owner(21)).user_id, (await owner(16)).user_id], [2, 1]);
  });

  test('paging: offset and count, newest first; count above 50 answers 6', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await callOk(server, 'trades.create', { user_id: 2, thing_ids_from: '16' }, as(1))).trade_id);
    const page = await callOk(server, 'trades.getOutbound', { offset: 1, count: 1 }, as(1));
    assert.equal(page.count, 3);
    assert.deepEqual(
      page.trades.map((t: any) => t.trade_id),
      [ids[1]],
    );
    await callFails(server, 'trades.getOutbound', { count: 51 }, 6, as(1));
    const zero = await callOk(server, 'trades.getIncome', { count: 0 }, as(2));
    assert.deepEqual([zero.count, zero.trades], [3, []]);
    for (const trade_id of ids) await callVoid(server, 'trades.revoke', { trade_id }, as(1));
  });
});

describe('an item that moves or ends invalidates every open trade holding it', () => {
  test('accepting one trade invalidates the others holding its items; accepting those answers 603', async () => {
    const first = await callOk(server, 'trades.create', { user_id: 2, thing_ids_from: '16' }, as(1));
    const second = await callOk(server, 'trades.create', { user_id: 7, thing_ids_from: '16', thing_ids_to: '18' }, as(1));
    const unrelated = await callOk(server, 'trades.create', { user_id: 2, thing_ids_from: '17' }, as(1));
    await callVoid(server, 'trades.accept', { trade_id: first.trade_id }, as(2));
    await callFails(server, 'trades.accept', { trade_id: second.trade_id }, 603, as(7));
    const shown = await callOk(server, 'trades.getById', { trade_id: second.trade_id }, as(7));
    assert.deepEqual([shown.trades[0].status, shown.trades[0].reaction_time], [4, now + 60]);
    assert.deepEqual((await callOk(server, 'trades.getIncome', {}, as(7))).count, 0);
    assert.deepEqual(
      (await callOk(server, 'trades.getOutbound', {}, as(1))).trades.map((t: any) => t.trade_id),
      [unrelated.trade_id],
    );
    await callVoid(server, 'trades.revoke', { trade_id: unrelated.trade_id }, as(1));
  });

  test('a craft and an admin revocation invalidate the open trades of their items', async () => {
    const crafted = await callOk(server, 'trades.create', { user_id: 2, thing_ids_from: '100,101' }, as(1));
    const revoked = await callOk(server, 'trades.create', { user_id: 2, thing_ids_from: '17' }, as(1));
    const untouched = await callOk(server, 'trades.create', { user_id: 2, thing_ids_to: '22' }, as(1));
    await craftItems(
      server.services,
      1,
      Array.from({ length: 10 }, (_, i) => 100 + i),
    );
    await revokeItem(server.services, 17, 'test');
    const history = await callOk(server, 'trades.history', { count: 2 }, as(1));
    assert.deepEqual(
      history.trades.map((t: any) => [t.trade_id, t.status]).sort(),
      [
        [crafted.trade_id, 4],
        [revoked.trade_id, 4],
      ].sort(),
    );
    assert.deepEqual(
      (await callOk(server, 'trades.getIncome', {}, as(2))).trades.map((t: any) => t.trade_id),
      [untouched.trade_id],
    );
    await callFails(server, 'trades.accept', { trade_id: crafted.trade_id }, 603, as(2));
    await callVoid(server, 'trades.cancel', { trade_id: untouched.trade_id }, as(2));
  });

  test('an item whose per-item data changed since it was offered is not the item offered: accepting answers 603', async () => {
    const asked = await callOk(server, 'trades.create', { user_id: 2, thing_ids_to: '22' }, as(1));
    await server.db.kysely.updateTable('items').set({ data: '{"souvenir":"Mug"}' }).where('item_id', '=', 22).execute();
    await callFails(server, 'trades.accept', { trade_id: asked.trade_id }, 603, as(2));
    const shown = await callOk(server, 'trades.getById', { trade_id: asked.trade_id }, as(1));
    assert.equal(shown.trades[0].status, 4);
    const item = await server.db.kysely.selectFrom('items').select(['user_id', 'data']).where('item_id', '=', 22).executeTakeFirstOrThrow();
    assert.deepEqual(item, { user_id: 2, data: '{"souvenir":"Mug"}' });
  });
});

describe('execute.prepareTrade', () => {
  test('answers under result the items either side could trade now', async () => {
    const answer = await server.call('execute.prepareTrade', { user_id: 2 }, as(1));
    assert.deepEqual(Object.keys(answer.body), ['code', 'result']);
    const mine = await things(1);
    const theirs = await things(2);
    const tradable = (all: Map<number, any>, ids: number[]) => ids.map((id) => all.get(id));
    const crafted = await server.db.kysely
      .selectFrom('items')
      .select('item_id')
      .where('created_by_craft_id', 'is not', null)
      .executeTakeFirstOrThrow();
    // Newest first (ties: higher id first); equipped (12), locked (13, -1: 14) and status-1 (15) items are left out.
    assert.deepEqual(answer.body.result, {
      items: [{ list: tradable(mine, [crafted.item_id, 20, 10]) }, { list: tradable(theirs, [16, 11, 22, 21]) }],
    });
    // 5 takes gifts only: their list is empty. 6 takes nothing: 701.
    const giftsOnly = await server.call('execute.prepareTrade', { user_id: 5 }, as(1));
    assert.deepEqual((giftsOnly.body.result as any).items[1], { list: [] });
    await callFails(server, 'execute.prepareTrade', { user_id: 6 }, 701, as(1));
    await callFails(server, 'execute.prepareTrade', { user_id: 3 }, 107, as(1));
    await callFails(server, 'execute.prepareTrade', { user_id: 424242 }, 101, as(1));
    await callFails(server, 'execute.prepareTrade', { user_id: 1 }, 2, as(1));
    await callFails(server, 'execute.prepareTrade', { user_id: 2 }, 4, { token: bot });
  });
});

describe('bots', () => {
  test('may create, accept, decline, cancel and list, not revoke, getById or historyWith', async () => {
    const { trade_id } = await callOk(server, 'trades.create', { user_id: 2, thing_ids_from: '80' }, { token: bot });
    for (const method of ['trades.getIncome', 'trades.getOutbound', 'trades.history']) await callOk(server, method, {}, { token: bot });
    await callFails(server, 'trades.revoke', { trade_id }, 4, { token: bot });
    await callFails(server, 'trades.getById', { trade_id }, 4, { token: bot });
    await callFails(server, 'trades.historyWith', { user_id: 2 }, 4, { token: bot });
    assert.deepEqual((await server.call('trades.cancel', { trade_id }, { token: bot })).body, { code: 0 });
    const back = await callOk(server, 'trades.create', { user_id: 8, thing_ids_to: '80' }, as(2));
    await callVoid(server, 'trades.decline', { trade_id: back.trade_id }, { token: bot });
    const gift = await callOk(server, 'trades.create', { user_id: 8, thing_ids_from: '22' }, as(2));
    await callVoid(server, 'trades.accept', { trade_id: gift.trade_id }, { token: bot });
    assert.equal((await owner(22)).user_id, 8);
  });
});
