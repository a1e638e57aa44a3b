import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DB_KIND, startTestServer, type TestServer } from './helpers.js';
import { missing } from './components.js';
import { callFails, callOk, callVoid, catalogWorld, tokenFor, user } from './item-fixtures.js';
import type { World } from '../src/world/schema.js';

/*
 * What an offer may ask for and say about the partner's items, and the open trades that end
 * when a user is banned or blocked.
 * 1 offers; 2 shows their inventory to everyone; 3 to nobody; 4 to friends, and 1 is a friend;
 * 5 to friends, and 1 is not; 6 and 7 trade with 1 and are blocked or banned below.
 */

const ADMIN_KEY = 'admin-key-of-the-trade-visibility-test';

const world: World = {
  ...catalogWorld,
  users: [
    user(1),
    user(2),
    user(3, { inventory_privacy: 'nobody' }),
    user(4, { inventory_privacy: 'friends' }),
    user(5, { inventory_privacy: 'friends' }),
    user(6),
    user(7),
    user(8),
  ],
  friends: [[1, 4]],
  items: [
    ...Array.from({ length: 10 }, (_, i) => ({ item_id: 10 + i, user_id: 1, item_proto_id: 101, ts_owned: 1000 + i })),
    { item_id: 20, user_id: 2, item_proto_id: 101, ts_owned: 2000 },
    { item_id: 21, user_id: 2, item_proto_id: 201, ts_owned: 2001, equip: { game: 'classic', slot: 'cards', monopoly_id: 1 } },
    { item_id: 22, user_id: 2, item_proto_id: 801, ts_owned: 2002 },
    { item_id: 23, user_id: 2, item_proto_id: 101, ts_owned: 2003, ts_can_trade: -1 },
    { item_id: 24, user_id: 1, item_proto_id: 801, ts_owned: 2004 },
    { item_id: 30, user_id: 3, item_proto_id: 101, ts_owned: 3000 },
    { item_id: 40, user_id: 4, item_proto_id: 101, ts_owned: 4000 },
    { item_id: 50, user_id: 5, item_proto_id: 101, ts_owned: 5000 },
    { item_id: 60, user_id: 6, item_proto_id: 101, ts_owned: 6000 },
    { item_id: 61, user_id: 6, item_proto_id: 101, ts_owned: 6001 },
    { item_id: 70, user_id: 7, item_proto_id: 101, ts_owned: 7000 },
    { item_id: 80, user_id: 8, item_proto_id: 101, ts_owned: 8000 },
  ],
};

let server: TestServer;
const tokens = new Map<number, string>();

before(async () => {
  server = await startTestServer({ world, config: { adminKey: ADMIN_KEY } });
  for (const id of [1, 2, 3, 4, 5, 6, 7, 8]) tokens.set(id, await tokenFor(server, id));
});
after(async () => {
  await server.close();
});

const as = (id: number) => ({ token: tokens.get(id) });
const admin = { headers: { 'x-admin-key': ADMIN_KEY } };
const create = (from: number, params: Record<string, unknown>) => server.call('trades.create', params, as(from));
const offer = async (from: number, params: Record<string, unknown>) =>
  (await callOk(server, 'trades.create', params, as(from))).trade_id as number;
const statusOf = async (tradeId: number) =>
  (await server.db.kysely.selectFrom('trades').select('status').where('trade_id', '=', tradeId).executeTakeFirstOrThrow()).status;

describe('what an offer may ask for', () => {
  test("an inventory its owner's privacy hides cannot be asked from: 701, and gifts still go", async () => {
    const hidden = 'the privacy settings of the user hide their inventory from you: you can only offer them gifts';
    for (const [partner, item] of [
      [3, '30'],
      [5, '50'],
    ] as const) {
      // The answer is the same whether or not the item is theirs, or exists.
      for (const asked of [item, '999999', '20'])
        assert.deepEqual((await create(1, { user_id: partner, thing_ids_from: '10', thing_ids_to: asked })).body, {
          code: 701,
          description: hidden,
        });
    }
    // A friend sees a friends-only inventory.
    const fromFriend = await offer(1, { user_id: 4, thing_ids_from: '10', thing_ids_to: '40' });
    await callVoid(server, 'trades.revoke', { trade_id: fromFriend }, as(1));
    const gift = await offer(1, { user_id: 3, thing_ids_from: '11' });
    await callVoid(server, 'trades.revoke', { trade_id: gift }, as(1));
  });

  test("the partner's items are refused without saying which or why; the sender's own are named", async () => {
    const notEvery = {
      code: 603,
      description: "parameter thing_ids_to: not every item asked for is in the partner's inventory and tradable now",
    };
    // Another user's, unknown, equipped, stock class, never tradable.
    for (const asked of ['30', '999999', '21', '22', '23', '20,22'])
      assert.deepEqual((await create(1, { user_id: 2, thing_ids_from: '10', thing_ids_to: asked })).body, notEvery, asked);
    assert.deepEqual((await create(1, { user_id: 2, item_ids_from: '10', item_ids_to: '22' })).body, {
      ...notEvery,
      description: notEvery.description.replace('thing_ids_to', 'item_ids_to'),
    });
    assert.deepEqual((await create(1, { user_id: 2, thing_ids_from: '20' })).body, {
      code: 603,
      description: 'parameter thing_ids_from: item 20 is not in the inventory of its side',
    });
    // Someone else's item and one that does not exist answer alike: no answer tells which ids exist.
    for (const [param, id] of [
      ['thing_ids_from', '30'],
      ['thing_ids_from', '999999'],
      ['item_ids_from', '999999'],
    ])
      assert.deepEqual((await create(1, { user_id: 2, [param]: id })).body, {
        code: 603,
        description: `parameter ${param}: item ${id} is not in the inventory of its side`,
      });
    // The sender may offer their own stock-class items.
    const stock = await offer(1, { user_id: 2, thing_ids_from: '24', thing_ids_to: '20' });
    await callVoid(server, 'trades.revoke', { trade_id: stock }, as(1));
  });

  test('errors name the parameter the client sent', async () => {
    const refused = async (params: Record<string, unknown>, description: string) =>
      assert.deepEqual((await create(1, { user_id: 2, ...params })).body, { code: 2, description });
    await refused({ item_ids_from: '12,12' }, 'parameter item_ids_from: lists an item twice');
    await refused({ item_ids_from: '12', item_ids_to: '20,20' }, 'parameter item_ids_to: lists an item twice');
    await refused({ item_ids_from: '12', item_ids_to: '12' }, 'parameter item_ids_to: lists an item that is also offered');
    await refused({ thing_ids_from: '12,12', item_ids_from: '12,12' }, 'parameter thing_ids_from: lists an item twice');
    await refused(
      { thing_ids_from: '12', item_ids_from: '13' },
      'parameter item_ids_from: names other items than thing_ids_from: give the side under one name',
    );
  });

  test('an unknown trade in the admin methods is no trade, not "no trade of yours"', async () => {
    for (const method of ['admin.getTrade', 'admin.cancelTrade'])
      assert.deepEqual((await server.call(method, { trade_id: 999999 }, admin)).body, {
        code: 801,
        description: 'parameter trade_id: no such trade',
      });
  });
});

describe('trades that end with a block or a ban', () => {
  test("a block makes the two users' open trades with each other invalid, and no one else's", async () => {
    const offered = await offer(1, { user_id: 6, thing_ids_from: '12', thing_ids_to: '60' });
    const received = await offer(6, { user_id: 1, thing_ids_from: '61', thing_ids_to: '13' });
    const other = await offer(1, { user_id: 2, thing_ids_from: '14', thing_ids_to: '20' });
    await callVoid(server, 'blacklist.add', { user_id: 1 }, as(6));
    assert.deepEqual([await statusOf(offered), await statusOf(received), await statusOf(other)], [4, 4, 0]);
    await callFails(server, 'trades.accept', { trade_id: offered }, 603, as(6));
    await callFails(server, 'trades.accept', { trade_id: received }, 603, as(1));
    assert.equal((await callOk(server, 'trades.getIncome', {}, as(1))).count, 0);
    await callVoid(server, 'trades.revoke', { trade_id: other }, as(1));
  });

  test('a block an operator puts in place ends them too', async () => {
    const offered = await offer(2, { user_id: 8, thing_ids_from: '20' });
    await callOk(server, 'admin.block', { user_id: 8, other_user_id: 2 }, admin);
    assert.equal(await statusOf(offered), 4);
  });

  test("a ban makes the account's open trades, offered and received, invalid", async () => {
    const offered = await offer(7, { user_id: 1, thing_ids_from: '70', thing_ids_to: '15' });
    const received = await offer(1, { user_id: 7, thing_ids_from: '16' });
    const other = await offer(8, { user_id: 1, thing_ids_from: '80', thing_ids_to: '17' });
    await callOk(server, 'admin.banUser', { user_id: 7 }, admin);
    assert.deepEqual([await statusOf(offered), await statusOf(received), await statusOf(other)], [4, 4, 0]);
    await callFails(server, 'trades.accept', { trade_id: offered }, 603, as(1));
    const owners = await server.db.kysely
      .selectFrom('items')
      .select(['item_id', 'user_id'])
      .where('item_id', 'in', [15, 16, 70])
      .orderBy('item_id')
      .execute();
    assert.deepEqual(owners, [
      { item_id: 15, user_id: 1 },
      { item_id: 16, user_id: 1 },
      { item_id: 70, user_id: 7 },
    ]);
    await callVoid(server, 'trades.accept', { trade_id: other }, as(1));
  });
});

describe('a block or a ban that lands while an offer is made', () => {
  // Written straight to the database, unannounced: the server's caches still say there is none, as
  // they do for an offer whose checks ran just before a block or a ban committed. The offer's
  // transaction reads them again under the parties' locks. On PostgreSQL the caches need Redis.
  const cached = DB_KIND === 'sqlite' || !missing.redis;
  let raced: TestServer;
  const raceTokens = new Map<number, string>();
  before(async () => {
    raced = await startTestServer({ world, redis: DB_KIND === 'postgres' && cached });
    for (const id of [1, 2, 6, 7, 8]) raceTokens.set(id, await tokenFor(raced, id));
  });
  after(async () => {
    await raced?.close();
  });
  const offerAs = (from: number, params: Record<string, unknown>) => raced.call('trades.create', params, { token: raceTokens.get(from) });
  const warm = async (from: number, to: number) => {
    // The relation and the profiles are read once, so that the caches hold them.
    await raced.call('friends.get', { user_id: to }, { token: raceTokens.get(from) });
    await raced.call('users.get', { user_ids: `${from},${to}` }, { token: raceTokens.get(from) });
  };
  const openTrades = async () => (await raced.db.kysely.selectFrom('trades').select('trade_id').where('status', '=', 0).execute()).length;

  test('a block refuses it (107), a gift to a receiver who accepts at once included', { skip: !cached && missing.redis }, async () => {
    await warm(1, 6);
    await callVoid(raced, 'privacy.update', { trades_income_gifts_autoaccept: 1 }, { token: raceTokens.get(6) });
    await raced.db.kysely.insertInto('blocks').values({ user_id: 6, blocked_user_id: 1, ts: 1 }).execute();
    for (const params of [{ thing_ids_from: '18', thing_ids_to: '60' }, { thing_ids_from: '18' }])
      assert.deepEqual((await offerAs(1, { user_id: 6, ...params })).body, { code: 107, description: 'one of you has blocked the other' });
    assert.equal(await openTrades(), 0);
    assert.deepEqual(await raced.db.kysely.selectFrom('items').select('user_id').where('item_id', '=', 18).executeTakeFirstOrThrow(), {
      user_id: 1,
    });
  });

  test('a ban of the receiver refuses it (101), of the sender too (412)', { skip: !cached && missing.redis }, async () => {
    await warm(8, 7);
    await raced.db.kysely.updateTable('users').set({ global_ban: 1 }).where('user_id', '=', 7).execute();
    assert.deepEqual((await offerAs(8, { user_id: 7, thing_ids_from: '80' })).body, {
      code: 101,
      description: 'parameter user_id: user does not exist',
    });
    await warm(2, 8);
    await raced.db.kysely.updateTable('users').set({ global_ban: 1 }).where('user_id', '=', 2).execute();
    assert.deepEqual((await offerAs(2, { user_id: 8, thing_ids_from: '20' })).body, {
      code: 412,
      description: 'your account is globally blocked',
    });
    assert.equal(await openTrades(), 0);
  });
});
