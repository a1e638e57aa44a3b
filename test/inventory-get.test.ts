import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callFails, callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { revokeItem } from '../src/inventory/grants.js';
import type { World } from '../src/world/schema.js';

const LOCKED = 2_000_000_000;

/**
 * User 1 (domain alice) holds items 10-25 with chosen times; 23 is consumed and 24 revoked
 * before the tests. Users 1 and 2 are friends, as are 4 and 2.
 */
const world: World = {
  ...catalogWorld,
  users: [
    user(1, { domain: 'alice' }),
    user(2, { domain: 'bob' }),
    user(3),
    user(4, { inventory_privacy: 'friends' }),
    user(5, { inventory_privacy: 'nobody' }),
    user(6, { inventory_privacy: 'everyone' }),
    user(7, { bot_owner: 1 }),
    user(8, { domain: 'henry' }),
    user(9, { domain: 'ivan', global_ban: 1 }),
  ],
  friends: [
    [1, 2],
    [4, 2],
  ],
  // A pending request makes no friendship.
  friend_requests: [{ from: 3, to: 4 }],
  items: [
    { item_id: 10, user_id: 1, item_proto_id: 101, ts_owned: 1000 },
    { item_id: 11, user_id: 1, item_proto_id: 101, ts_owned: 1000 },
    { item_id: 12, user_id: 1, item_proto_id: 201, ts_owned: 900, equip: { game: 'quick', slot: 'cards', monopoly_id: 1 } },
    { item_id: 13, user_id: 1, item_proto_id: 801, ts_owned: 1100 },
    { item_id: 14, user_id: 1, item_proto_id: 501, ts_owned: 1200 },
    { item_id: 15, user_id: 1, item_proto_id: 301, ts_owned: 800, equip: { game: 'classic', slot: 'cards', monopoly_id: 1 } },
    { item_id: 16, user_id: 1, item_proto_id: 601, ts_owned: 700, equip: { game: 'classic', slot: 'generator' } },
    { item_id: 17, user_id: 1, item_proto_id: 102, ts_owned: 1000, ts_can_trade: LOCKED },
    { item_id: 18, user_id: 1, item_proto_id: 901, ts_owned: 600, data: { uses: { left: 3, origin: 5 } } },
    { item_id: 19, user_id: 1, item_proto_id: 101, ts_owned: 500, data: { souvenir: 'Cup 2025', autograph: { user_id: 2, text: 'hi' } } },
    { item_id: 20, user_id: 1, item_proto_id: 550, ts_owned: 400, equip: { slot: 'badge' } },
    { item_id: 21, user_id: 1, item_proto_id: 103, ts_owned: 300 },
    { item_id: 22, user_id: 1, item_proto_id: 101, ts_owned: 1000, ts_can_trade: LOCKED },
    { item_id: 23, user_id: 1, item_proto_id: 101, ts_owned: 1000 },
    { item_id: 24, user_id: 1, item_proto_id: 102, ts_owned: 1300, equip: { game: 'classic', slot: 'cards', monopoly_id: 2 } },
    { item_id: 25, user_id: 1, item_proto_id: 850, ts_owned: 350, equip: { game: 'classic', slot: 'joke' } },
    { item_id: 40, user_id: 4, item_proto_id: 101, ts_owned: 100 },
    { item_id: 50, user_id: 5, item_proto_id: 101, ts_owned: 100 },
    { item_id: 60, user_id: 6, item_proto_id: 801, ts_owned: 100 },
    { item_id: 61, user_id: 6, item_proto_id: 101, ts_owned: 100 },
    { item_id: 80, user_id: 8, item_proto_id: 502, ts_owned: 200, ts_can_trade: -1, data: { ts_can_sell: 99 } },
    { item_id: 81, user_id: 8, item_proto_id: 502, ts_owned: 100, ts_can_trade: -1, data: { ts_can_sell: 99 } },
    { item_id: 90, user_id: 9, item_proto_id: 101, ts_owned: 100 },
  ],
};

const TIME_ORDER = [14, 22, 17, 11, 10, 12, 15, 16, 18, 19, 20, 25, 21];
const QUALITY_ORDER = [15, 12, 14, 22, 17, 11, 10, 16, 18, 19, 20, 25, 21];

const idsOf = (data: any) => (data.things ?? data.items).map((i: any) => i.item_id);

describe('inventory.get', () => {
  let server: TestServer;
  const tokens: Record<number, string> = {};
  before(async () => {
    server = await startTestServer({ world });
    for (const id of [1, 2, 3, 4, 5, 7]) tokens[id] = await tokenFor(server, id, { bot: id === 7 });
    await server.db.kysely.updateTable('items').set({ state: 'consumed' }).where('item_id', '=', 23).execute();
    await revokeItem(server.services, 24, 'test');
  });
  after(() => server.close());

  const get = (params: Record<string, unknown>, token?: string) => callOk(server, 'inventory.get', params, { http: 'GET', token });

  test('without user_id and without a token answers 1; unknown users answer 101', async () => {
    await callFails(server, 'inventory.get', {}, 1);
    await callFails(server, 'inventory.get', { user_id: 999 }, 101);
    await callFails(server, 'inventory.get', { user_id: 'nobody-here' }, 101);
    await callFails(server, 'inventory.get', { user_id: 999 }, 101, { token: tokens[1] });
    // A globally blocked account is shown to no one, as friends.get shows it.
    for (const key of [9, 'ivan']) {
      const refused = await callFails(server, 'inventory.get', { user_id: key, add_user: 1 }, 101, { token: tokens[1] });
      assert.equal(refused.body.description, `parameter user_id: user ${key} does not exist`);
      await callFails(server, 'inventory.get', { user_id: key }, 101);
    }
    await callFails(server, 'inventory.get', { user_id: 0 }, 2);
    await callFails(server, 'inventory.get', { order: 'price' }, 2, { token: tokens[1] });
    await callFails(server, 'inventory.get', { add_equipped: 'list' }, 2, { token: tokens[1] });
  });

  test('newest first by default; equal times fall to the higher item_id; consumed and revoked items are gone', async () => {
    const own = await get({}, tokens[1]);
    assert.deepEqual(idsOf(own), TIME_ORDER);
    assert.equal(own.count, TIME_ORDER.length);
    const byId = await get({ user_id: 1 });
    assert.deepEqual(idsOf(byId), TIME_ORDER);
    const byDomain = await get({ user_id: 'alice', order: 'time' });
    assert.deepEqual(idsOf(byDomain), TIME_ORDER);
  });

  test('order = quality: highest class first, then newest', async () => {
    assert.deepEqual(idsOf(await get({ user_id: 1, order: 'quality' })), QUALITY_ORDER);
    const withStock = await get({ order: 'quality', include_stock: 1 }, tokens[1]);
    assert.deepEqual(idsOf(withStock), [...QUALITY_ORDER, 13]);
  });

  test('include_stock applies to the own inventory only, and count follows the same rule', async () => {
    const own = await get({ include_stock: 1 }, tokens[1]);
    assert.deepEqual(idsOf(own), [14, 13, ...TIME_ORDER.slice(1)]);
    assert.equal(own.count, TIME_ORDER.length + 1);
    const other = await get({ user_id: 1, include_stock: 1 }, tokens[2]);
    assert.deepEqual(idsOf(other), TIME_ORDER);
    assert.equal(other.count, TIME_ORDER.length);
    const anonymous = await get({ user_id: 6, include_stock: 1 });
    assert.deepEqual(idsOf(anonymous), [61]);
    assert.equal(anonymous.count, 1);
  });

  test('count limits the list, the answer counts the whole inventory', async () => {
    for (const [count, includeStock, total] of [
      [3, 0, 13],
      [3, 1, 14],
      [13, 0, 13],
      [20, 0, 13],
      [0, 0, 13],
      [0, 1, 14],
    ] as const) {
      const data = await get({ count, include_stock: includeStock }, tokens[1]);
      const expected = (includeStock ? [14, 13, ...TIME_ORDER.slice(1)] : TIME_ORDER).slice(0, count);
      assert.deepEqual(idsOf(data), expected, `count ${count}`);
      assert.equal(data.count, total, `count ${count}, include_stock ${includeStock}`);
    }
    const quality = await get({ user_id: 1, order: 'quality', count: 2 });
    assert.deepEqual(idsOf(quality), [15, 12]);
    assert.equal(quality.count, 13);
  });

  test('legacy mode (the default): things with the Thing fields, thing_types, qualities, collections with id', async () => {
    const data = await get({ user_id: 1 });
    assert.deepEqual(Object.keys(data).sort(), ['collections', 'count', 'qualities', 'thing_types', 'things']);
    const byId = new Map(data.things.map((t: any) => [t.item_id, t]));
    assert.deepEqual(byId.get(19), {
      item_id: 19,
      item_proto_id: 101,
      type: 0,
      image: 'https://img.example/a1.png',
      title: 'Card A1',
      description: 'First card',
      quality_id: 1,
      collection_id: 1,
      monopoly_id: 1,
      prices: { buy: 5, quick_sell: 0.5 },
      twin_item_proto_ids: [102],
      can_craft: 1,
      ts_owned: 500,
      souvenir: 'Cup 2025',
      autograph: { user_id: 2, text: 'hi' },
      thing_prototype_id: 101,
      thing_prototype_status: 0,
      thing_type: 0,
      quality: 1,
      group: 1,
      collection: 1,
      twin_thing_prototype_id: [102],
      delete_price: 0.5,
      can_be_upgraded: 1,
      buy_cost: 5,
      thing_id: 19,
      user_id: 1,
      owned_time: 500,
    });
    assert.deepEqual(byId.get(17), {
      item_id: 17,
      item_proto_id: 102,
      type: 0,
      image: '',
      title: 'Card B1',
      description: '',
      quality_id: 1,
      collection_id: 1,
      monopoly_id: 2,
      can_craft: 1,
      ts_owned: 1000,
      ts_can_trade: LOCKED,
      thing_prototype_id: 102,
      thing_prototype_status: 0,
      thing_type: 0,
      quality: 1,
      group: 2,
      collection: 1,
      can_be_upgraded: 1,
      thing_id: 17,
      user_id: 1,
      owned_time: 1000,
      can_give: LOCKED,
    });
    const subscription: any = byId.get(18);
    assert.deepEqual(subscription.uses, { left: 3, origin: 5 });
    assert.equal(subscription.uses_left, 3);
    assert.equal(subscription.uses_origin, 5);
    assert.equal(subscription.thing_prototype_status, 1);
    assert.equal(subscription.collection, -1);
    assert.deepEqual(data.collections, [
      { collection_id: 1, id: 1, title: 'Alpha' },
      { collection_id: 2, id: 2, title: 'Beta' },
    ]);
    assert.deepEqual(data.thing_types, [
      { id: 0, title: 'Card' },
      { id: 2, title: 'Case' },
      { id: 4, title: 'Number generator' },
      { id: 5, title: 'Badge' },
      { id: 7, title: 'Subscription' },
      { id: 8, title: 'Taunt' },
    ]);
    assert.deepEqual(data.qualities, [
      { id: 1, title: 'Common', coeff_rent: 1.1 },
      { id: 2, title: 'Standard', coeff_rent: 1.25 },
      { id: 3, title: 'Special', coeff_rent: 1.5 },
    ]);
  });

  test('legacy lock fields: can_give and can_sell repeat the trade and sell locks', async () => {
    const key = {
      item_proto_id: 502,
      type: 3,
      image: '',
      title: 'Key',
      description: '',
      quality_id: 1,
      prices: { buy: 33 },
      case_item_proto_ids: [501],
    };
    const legacy = await get({ user_id: 'henry' });
    assert.deepEqual(legacy, {
      count: 2,
      things: [80, 81].map((id, i) => ({
        item_id: id,
        ...key,
        ts_owned: 200 - 100 * i,
        ts_can_trade: -1,
        ts_can_sell: 99,
        thing_prototype_id: 502,
        thing_prototype_status: 0,
        thing_type: 3,
        quality: 1,
        collection: -1,
        buy_cost: 39,
        cases: [501],
        thing_id: id,
        user_id: 8,
        owned_time: 200 - 100 * i,
        can_give: -1,
        can_sell: 99,
      })),
      collections: [],
      thing_types: [{ id: 3, title: 'Key' }],
      qualities: [{ id: 1, title: 'Common', coeff_rent: 1.1 }],
    });
    const plain = await get({ user_id: 8, add_legacy: 0, shrink: 1 });
    assert.deepEqual(plain, {
      count: 2,
      items: [{ item_id: 80, item_ids: [80, 81], ...key, ts_owned: 200, ts_can_trade: -1, ts_can_sell: 99 }],
      collections: [],
    });
    const shrunkLegacy = await get({ user_id: 8, shrink: 1 });
    assert.deepEqual(
      shrunkLegacy.things.map((t: any) => [t.item_id, t.thing_id, t.item_ids, t.owned_time]),
      [[80, 80, [80, 81], 200]],
    );
  });

  test('add_legacy = 0: items without the Thing fields, collections without id', async () => {
    const data = await get({ user_id: 1, add_legacy: 0 });
    assert.deepEqual(Object.keys(data).sort(), ['collections', 'count', 'items']);
    const byId = new Map(data.items.map((t: any) => [t.item_id, t]));
    assert.deepEqual(byId.get(14), {
      item_id: 14,
      item_proto_id: 501,
      type: 2,
      image: 'https://img.example/case.png',
      title: 'Case',
      description: '',
      quality_id: 1,
      collection_id: 2,
      prices: { quick_sell: 0.3 },
      key_item_proto_id: 502,
      drop: [
        { item_proto_id: 101, weight: 1, chance: 1 / 3 },
        { item_proto_id: 201, is_secondary: 1, weight: 1, chance: 1 / 3 },
        { item_proto_id: 301, is_rare: 1, weight: 1, chance: 1 / 3 },
      ],
      ts_owned: 1200,
    });
    assert.deepEqual(byId.get(18), {
      item_id: 18,
      item_proto_id: 901,
      item_proto_status: 1,
      type: 7,
      image: '',
      title: 'Subscription',
      description: '',
      quality_id: 1,
      ts_owned: 600,
      uses: { left: 3, origin: 5 },
    });
    assert.deepEqual(data.collections, [
      { collection_id: 1, title: 'Alpha' },
      { collection_id: 2, title: 'Beta' },
    ]);
  });

  test('collections, thing_types and qualities follow the listed items only', async () => {
    const data = await get({ user_id: 1, count: 1 });
    assert.deepEqual(idsOf(data), [14]);
    assert.deepEqual(data.collections, [{ collection_id: 2, id: 2, title: 'Beta' }]);
    assert.deepEqual(data.thing_types, [{ id: 2, title: 'Case' }]);
    assert.deepEqual(data.qualities, [{ id: 1, title: 'Common', coeff_rent: 1.1 }]);
    const empty = await get({ user_id: 3 });
    assert.deepEqual(empty, { count: 0, things: [], collections: [], thing_types: [], qualities: [] });
  });

  test('the own inventory named by id or domain is still the own one: stock and equipped items', async () => {
    for (const userId of [1, 'alice']) {
      const data = await get({ user_id: userId, include_stock: 1, add_equipped: 'array', count: 2, add_legacy: 0 }, tokens[1]);
      assert.deepEqual(idsOf(data), [14, 13]);
      assert.equal(data.count, TIME_ORDER.length + 1);
      assert.deepEqual(data.item_ids_equipped, [12, 15, 16, 20, 25]);
    }
  });

  test('add_equipped = array and tree, for the own inventory only', async () => {
    const array = await get({ add_equipped: 'array' }, tokens[1]);
    assert.deepEqual(array.item_ids_equipped, [12, 15, 16, 20, 25]);
    assert.equal(array.equipped, undefined);
    const tree = await get({ add_equipped: 'tree', add_legacy: 0 }, tokens[1]);
    assert.deepEqual(tree.equipped, {
      game: {
        classic: { cards: { 1: [15] }, generator: 16, joke: 25 },
        // A board with only cards: the generator and taunt slots hold 0.
        quick: { cards: { 1: [12] }, generator: 0, joke: 0 },
      },
      profile: { badges: [20] },
    });
    assert.equal(tree.item_ids_equipped, undefined);
    const other = await get({ user_id: 1, add_equipped: 'array' }, tokens[2]);
    assert.equal(other.item_ids_equipped, undefined);
    const anonymous = await get({ user_id: 1, add_equipped: 'tree' });
    assert.equal(anonymous.equipped, undefined);
    const nothing = await get({ add_equipped: 'tree' }, tokens[3]);
    assert.deepEqual(nothing.equipped, { game: {} });
  });

  test('add_user and add_user_info return the owner in the full form', async () => {
    const both = await get({ user_id: 'alice', add_user: 1, add_user_info: 1, count: 0 }, tokens[2]);
    assert.equal(both.user.user_id, 1);
    assert.equal(both.user.domain, 'alice');
    assert.deepEqual(both.user.nicks_old, []);
    assert.equal(both.user.friendship, 1);
    assert.deepEqual(both.user_info, both.user);
    const userOnly = await get({ user_id: 1, add_user: 1, count: 0 });
    assert.equal(userOnly.user.user_id, 1);
    assert.equal(userOnly.user.friendship, undefined);
    assert.equal(userOnly.user_info, undefined);
    const infoOnly = await get({ add_user_info: 1, count: 0 }, tokens[3]);
    assert.equal(infoOnly.user_info.user_id, 3);
    assert.equal(infoOnly.user, undefined);
    const own = await get({ add_user: 1, count: 0 }, tokens[1]);
    assert.equal(own.user.friendship, undefined);
  });

  test('shrink merges identical items into the newest of them, listing every id newest first', async () => {
    const data = await get({ user_id: 1, shrink: 1, add_legacy: 0 });
    assert.deepEqual(idsOf(data), [14, 22, 17, 11, 12, 15, 16, 18, 19, 20, 25, 21]);
    const merged = data.items.find((i: any) => i.item_id === 11);
    assert.deepEqual(merged.item_ids, [11, 10]);
    assert.equal(merged.ts_owned, 1000);
    // Same prototype but another trade lock, or per-item data: not merged.
    assert.equal(data.items.find((i: any) => i.item_id === 22).item_ids, undefined);
    assert.equal(data.items.find((i: any) => i.item_id === 19).item_ids, undefined);
    assert.equal(data.count, 13);
    const legacy = await get({ user_id: 1, shrink: 1, order: 'quality' });
    assert.deepEqual(idsOf(legacy), [15, 12, 14, 22, 17, 11, 16, 18, 19, 20, 25, 21]);
    const plain = await get({ user_id: 1, add_legacy: 0 });
    assert.ok(plain.items.every((i: any) => i.item_ids === undefined));
  });

  test('shrink groups by lock and keeps the newest id and time', async () => {
    const k = server.db.kysely;
    const inserted = await k
      .insertInto('items')
      .values([
        { user_id: 6, item_proto_id: 102, type: 0, quality_id: 1, ts_owned: 10, ts_can_trade: 0 },
        { user_id: 6, item_proto_id: 102, type: 0, quality_id: 1, ts_owned: 30, ts_can_trade: 0 },
        { user_id: 6, item_proto_id: 102, type: 0, quality_id: 1, ts_owned: 20, ts_can_trade: 0 },
        { user_id: 6, item_proto_id: 102, type: 0, quality_id: 1, ts_owned: 40, ts_can_trade: -1 },
        { user_id: 6, item_proto_id: 102, type: 0, quality_id: 1, ts_owned: 50, ts_can_trade: -1 },
        { user_id: 6, item_proto_id: 102, type: 0, quality_id: 1, ts_owned: 5, ts_can_trade: 0, data: JSON.stringify({ ts_can_sell: 99 }) },
      ])
      .returning('item_id')
      .execute();
    const [a, b, c, d, e, f] = inserted.map((r) => r.item_id);
    const data = await get({ user_id: 6, shrink: 1, add_legacy: 0 });
    assert.deepEqual(idsOf(data), [61, e, b, f]);
    const locked = data.items[1];
    assert.deepEqual(locked.item_ids, [e, d]);
    assert.equal(locked.ts_can_trade, -1);
    assert.equal(locked.ts_owned, 50);
    assert.deepEqual(data.items[2].item_ids, [b, c, a]);
    assert.equal(data.items[2].ts_owned, 30);
    assert.equal(data.items[3].ts_can_sell, 99);
    assert.equal(data.count, 7);
  });

  test('privacy: everyone, friends and nobody; the owner always may', async () => {
    await get({ user_id: 6 });
    await get({ user_id: 6 }, tokens[3]);
    // friends: only the owner's friends; user 3's pending request is not enough.
    await callFails(server, 'inventory.get', { user_id: 4 }, 701, { http: 'GET' });
    await callFails(server, 'inventory.get', { user_id: 4 }, 701, { token: tokens[3] });
    await callFails(server, 'inventory.get', { user_id: 4 }, 701, { token: tokens[1] });
    assert.deepEqual(idsOf(await get({ user_id: 4 }, tokens[2])), [40]);
    assert.deepEqual(idsOf(await get({ user_id: 4 }, tokens[4])), [40]);
    assert.deepEqual(idsOf(await get({}, tokens[4])), [40]);
    // nobody: the owner alone.
    await callFails(server, 'inventory.get', { user_id: 5 }, 701, { http: 'GET' });
    await callFails(server, 'inventory.get', { user_id: 5 }, 701, { token: tokens[2] });
    await callFails(server, 'inventory.get', { user_id: 5, count: 0 }, 701, { token: tokens[3] });
    assert.deepEqual(idsOf(await get({ user_id: 5 }, tokens[5])), [50]);
    assert.deepEqual(idsOf(await get({}, tokens[5])), [50]);
  });

  test('a bot token may read inventories', async () => {
    assert.deepEqual(idsOf(await get({}, tokens[7])), []);
    assert.deepEqual(idsOf(await get({ user_id: 1, count: 1 }, tokens[7])), [14]);
  });

  test('POST and form bodies work as GET does', async () => {
    const post = await callOk(server, 'inventory.get', { user_id: 1, count: 2 }, { token: tokens[2] });
    assert.deepEqual(idsOf(post), [14, 22]);
    const form = await callOk(server, 'inventory.get', { user_id: 'alice', count: '2', add_legacy: '0' }, { form: true });
    assert.deepEqual(idsOf(form), [14, 22]);
  });
});
