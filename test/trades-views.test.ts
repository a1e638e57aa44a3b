import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { admin } from './admin-support.js';
import { ADMIN_KEY } from './admin-support.js';
import { callFails, callOk, callVoid, catalogWorld, tokenFor, user } from './item-fixtures.js';
import type { World } from '../src/world/schema.js';

/*
 * What trades show of other users: the partner's items only as far as inventory privacy lets
 * the caller see them, a globally blocked partner as users.get shows them, one side named
 * under both of its names, form bodies of many keys, and uses a subscription's prototype gives.
 * User 1 asks; 2 hides their inventory from everyone; 3 shows it to friends, and 1 is not one;
 * 4 shows it to friends, and 1 is one; 5 shows it to everyone, a stock card included; 6 is
 * banned after a trade with 1.
 */

const world: World = {
  ...catalogWorld,
  item_protos: [
    ...catalogWorld.item_protos!,
    { item_proto_id: 902, type: 7, quality_id: 1, title: 'Monthly pass', can_craft: 0, extra: { uses: { origin: 30 } } },
  ],
  users: [
    user(1),
    user(2, { inventory_privacy: 'nobody' }),
    user(3, { inventory_privacy: 'friends' }),
    user(4, { inventory_privacy: 'friends' }),
    user(5),
    user(6),
  ],
  friends: [[1, 4]],
  items: [
    { item_id: 10, user_id: 1, item_proto_id: 101, ts_owned: 1000 },
    { item_id: 11, user_id: 1, item_proto_id: 801, ts_owned: 1001 },
    { item_id: 12, user_id: 1, item_proto_id: 102, ts_owned: 1002 },
    { item_id: 13, user_id: 1, item_proto_id: 902, ts_owned: 1003 },
    { item_id: 20, user_id: 2, item_proto_id: 101, ts_owned: 2000 },
    { item_id: 30, user_id: 3, item_proto_id: 101, ts_owned: 3000 },
    { item_id: 40, user_id: 4, item_proto_id: 101, ts_owned: 4000 },
    { item_id: 50, user_id: 5, item_proto_id: 101, ts_owned: 5000 },
    { item_id: 51, user_id: 5, item_proto_id: 801, ts_owned: 5001 },
    { item_id: 60, user_id: 6, item_proto_id: 201, ts_owned: 6000 },
  ],
};

let server: TestServer;
const tokens = new Map<number, string>();

before(async () => {
  server = await startTestServer({ world, config: { adminKey: ADMIN_KEY } });
  for (const id of [1, 2, 3, 4, 5, 6]) tokens.set(id, await tokenFor(server, id));
});
after(async () => {
  await server.close();
});

const as = (id: number) => ({ token: tokens.get(id) });

/** The item ids of prepareTrade's two lists, as `viewer` asks about `partner`. */
async function prepared(viewer: number, partner: number): Promise<[number[], number[]]> {
  const answer = await server.call('execute.prepareTrade', { user_id: partner }, as(viewer));
  assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
  const [mine, theirs] = (answer.body.result as { items: { list: { item_id: number }[] }[] }).items;
  return [mine!.list.map((i) => i.item_id), theirs!.list.map((i) => i.item_id)];
}

describe('execute.prepareTrade and inventory privacy', () => {
  test("the partner's list follows inventory.get: hidden, friends only, everyone; never their stock cards", async () => {
    // The caller's own list keeps their stock card (11).
    const mine = [13, 12, 11, 10];
    assert.deepEqual(await prepared(1, 2), [mine, []]);
    await callFails(server, 'inventory.get', { user_id: 2 }, 701, as(1));
    assert.deepEqual(await prepared(1, 3), [mine, []]);
    await callFails(server, 'inventory.get', { user_id: 3 }, 701, as(1));
    assert.deepEqual(await prepared(1, 4), [mine, [40]]);
    assert.deepEqual(await prepared(1, 5), [mine, [50]]);
    // Seen the other way, the friends-only inventory of 4 is the owner's own business.
    assert.deepEqual(await prepared(4, 1), [[40], [13, 12, 10]]);
  });

  test('a hidden inventory that is opened to everyone shows up at once', async () => {
    await callVoid(server, 'privacy.update', { inventory: 'everyone' }, as(3));
    assert.deepEqual((await prepared(1, 3))[1], [30]);
    await callVoid(server, 'privacy.update', { inventory: 'friends' }, as(3));
    assert.deepEqual((await prepared(1, 3))[1], []);
  });
});

describe('trade lists', () => {
  test('a globally blocked partner is shown as users.get shows them, in users_data and user_data alike', async () => {
    const { trade_id } = await callOk(server, 'trades.create', { user_id: 6, thing_ids_from: '12', thing_ids_to: '60' }, as(1));
    const before = await callOk(server, 'trades.getOutbound', {}, as(1));
    assert.equal(before.users_data[0].user_id, 6);
    assert.equal(before.users_data[0].nick, 'user6');

    await admin(server, 'banUser', { user_id: 6 });
    const placeholder = (await callOk(server, 'users.get', { user_id: 6 }, as(1)))[0];
    assert.deepEqual(placeholder, { user_id: 6, nick: 'Blocked account', avatar: '', avatar_key: '', inactive: 'global_ban' });
    // The ban made the open trade invalid: it is in the history now.
    assert.equal((await callOk(server, 'trades.getOutbound', {}, as(1))).count, 0);
    const after = await callOk(server, 'trades.history', {}, as(1));
    assert.deepEqual(after.users_data, [placeholder]);
    assert.deepEqual(after.user_data, [placeholder]);
    assert.deepEqual(
      after.trades.map((t: { trade_id: number; status: number }) => [t.trade_id, t.status]),
      [[trade_id, 4]],
    );
  });
});

describe('trades.create', () => {
  test('a side named under both of its names: the same items pass, other items answer 2 and nothing is made', async () => {
    const same = await callOk(server, 'trades.create', { user_id: 5, thing_ids_from: '10,12', item_ids_from: '12,10' }, as(1));
    const shown = await callOk(server, 'trades.getById', { trade_id: same.trade_id }, as(1));
    assert.deepEqual(
      shown.trades[0].things_from.map((t: { item_id: number }) => t.item_id),
      [10, 12],
    );
    const outbound = (await callOk(server, 'trades.getOutbound', {}, as(1))).count;
    const from = await callFails(server, 'trades.create', { user_id: 5, thing_ids_from: '12', item_ids_from: '10' }, 2, as(1));
    assert.match(from.body.description!, /item_ids_from/);
    const to = await callFails(server, 'trades.create', { user_id: 5, thing_ids_to: '50', item_ids_to: '50,51' }, 2, as(1));
    assert.match(to.body.description!, /item_ids_to/);
    assert.equal((await callOk(server, 'trades.getOutbound', {}, as(1))).count, outbound);
  });

  test('a form body is read to its last key, however many come before it', async () => {
    const { trade_id } = await callOk(server, 'trades.create', { user_id: 5, thing_ids_from: '10' }, as(1));
    const junk = Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`k${i}`, '1']));
    const answer = await server.call('trades.getById', { ...junk, trade_id }, { ...as(1), form: true });
    assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
    assert.equal(answer.body.data.trades[0].trade_id, trade_id);
  });
});

describe('uses', () => {
  test('an item of a prototype that gives uses by their number alone has every use left', async () => {
    const items = (await callOk(server, 'inventory.get', { add_legacy: 0 }, as(1))).items;
    const pass = items.find((i: { item_id: number }) => i.item_id === 13);
    assert.deepEqual(pass.uses, { left: 30, origin: 30 });
    const things = (await callOk(server, 'inventory.get', { add_legacy: 1 }, as(1))).things;
    const thing = things.find((t: { thing_id: number }) => t.thing_id === 13);
    assert.equal(thing.uses_left, 30);
    assert.equal(thing.uses_origin, 30);
  });
});
