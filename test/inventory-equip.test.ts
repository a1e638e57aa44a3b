import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ok, startTestServer, type TestServer } from './helpers.js';
import { catalogWorld, tokenFor, user } from './item-fixtures.js';
import { callsInTurn, needsRedis, startProcesses, type Processes } from './race-support.js';
import type { World } from '../src/world/schema.js';

/*
 * User 1 holds: cards 1, 2 (Card A1, monopoly 1), 3 (Card B1, monopoly 2), 4 (a card of no
 * monopoly); dice 10, 11; taunt 20; badges 30..35; a case 40. User 2 holds card 50.
 */
const world: World = {
  ...catalogWorld,
  item_protos: [...catalogWorld.item_protos!, { item_proto_id: 990, type: 0, quality_id: 1, title: 'Card of no monopoly' }],
  users: [user(1), user(2)],
  items: [
    ...[1, 2].map((item_id) => ({ item_id, user_id: 1, item_proto_id: 101 })),
    { item_id: 3, user_id: 1, item_proto_id: 102 },
    { item_id: 4, user_id: 1, item_proto_id: 990 },
    ...[10, 11].map((item_id) => ({ item_id, user_id: 1, item_proto_id: 601 })),
    { item_id: 20, user_id: 1, item_proto_id: 850 },
    ...[30, 31, 32, 33, 34, 35].map((item_id) => ({ item_id, user_id: 1, item_proto_id: 550 })),
    { item_id: 40, user_id: 1, item_proto_id: 501 },
    { item_id: 50, user_id: 2, item_proto_id: 101 },
  ],
};

const board = (cards: Record<string, number[]>, generator = 0, joke = 0) => ({ cards, generator, joke });

describe('inventory.equip and inventory.unequip', () => {
  let server: TestServer;
  let alice: string;
  let bob: string;
  before(async () => {
    server = await startTestServer({ world });
    alice = await tokenFor(server, 1);
    bob = await tokenFor(server, 2);
  });
  after(() => server?.close());
  const equip = async (params: Record<string, unknown>, token = alice) => (await server.call('inventory.equip', params, { token })).body;
  const unequip = async (params: Record<string, unknown>, token = alice) =>
    (await server.call('inventory.unequip', params, { token })).body;
  const tree = async () => ok(await server.call('inventory.get', { add_equipped: 'tree', add_legacy: 0 }, { token: alice })).equipped;

  test('cards, dice and taunts go on a board, one card of a prototype, one die and one taunt each; badges on the profile', async () => {
    assert.deepEqual(await equip({ item_id: 1 }), { code: 0, data: { equipped: { game: { classic: board({ 1: [1] }) } } } });
    // Another Card A1 takes the first one's place; Card B1 joins it.
    assert.deepEqual((await equip({ item_id: 2, game: 'classic' })).data.equipped, { game: { classic: board({ 1: [2] }) } });
    assert.deepEqual((await equip({ item_id: 3 })).data.equipped, { game: { classic: board({ 1: [2], 2: [3] }) } });
    // A die, then the other die in its place; a taunt; the same card on another board moves there.
    await equip({ item_id: 10 });
    await equip({ item_id: 20 });
    assert.deepEqual((await equip({ item_id: 11 })).data.equipped, { game: { classic: board({ 1: [2], 2: [3] }, 11, 20) } });
    assert.deepEqual((await equip({ item_id: 3, game: 'duel' })).data.equipped, {
      game: { classic: board({ 1: [2] }, 11, 20), duel: board({ 2: [3] }) },
    });
    // Equipped where it is already: nothing changes.
    assert.deepEqual((await equip({ item_id: 3, game: 'duel' })).data.equipped, {
      game: { classic: board({ 1: [2] }, 11, 20), duel: board({ 2: [3] }) },
    });
    // Five badges at most.
    for (const item_id of [30, 31, 32, 33, 34]) assert.equal((await equip({ item_id })).code, 0);
    assert.deepEqual(await equip({ item_id: 35 }), {
      code: 624,
      description: 'the profile shows at most 5 badges: take one off first',
    });
    assert.deepEqual(await tree(), {
      game: { classic: board({ 1: [2] }, 11, 20), duel: board({ 2: [3] }) },
      profile: { badges: [30, 31, 32, 33, 34] },
    });
    const flat = ok(await server.call('inventory.get', { add_equipped: 'array', add_legacy: 0 }, { token: alice }));
    assert.deepEqual(flat.item_ids_equipped, [2, 3, 11, 20, 30, 31, 32, 33, 34]);

    // Off again: an item equipped nowhere stays so.
    assert.deepEqual((await unequip({ item_id: 30 })).data.equipped.profile, { badges: [31, 32, 33, 34] });
    assert.equal((await equip({ item_id: 35 })).code, 0);
    assert.deepEqual(await unequip({ item_id: 1 }), { code: 0, data: { equipped: await tree() } });
    for (const item_id of [2, 3, 11, 20, 31, 32, 33, 34, 35]) assert.equal((await unequip({ item_id })).code, 0);
    assert.deepEqual(await tree(), { game: {} });
  });

  test('refused: what is not the caller’s, what cannot be equipped, a badge on a board, bad parameters', async () => {
    assert.deepEqual(await equip({ item_id: 50 }), { code: 603, description: 'the item is not in your inventory' });
    assert.deepEqual(await equip({ item_id: 999 }), { code: 603, description: 'the item is not in your inventory' });
    assert.deepEqual(await unequip({ item_id: 50 }), { code: 603, description: 'the item is not in your inventory' });
    assert.deepEqual(await equip({ item_id: 40 }), { code: 624, description: 'only cards, dice, taunts and badges can be equipped' });
    assert.deepEqual(await equip({ item_id: 4 }), {
      code: 624,
      description: 'the card belongs to no monopoly, so no board has a place for it',
    });
    assert.deepEqual(await equip({ item_id: 30, game: 'classic' }), {
      code: 2,
      description: 'parameter game: badges go on the profile, not on a board',
    });
    assert.equal((await equip({ item_id: 1, game: ' classic' })).code, 2);
    assert.equal((await equip({ item_id: 1, game: '' })).code, 2);
    assert.equal((await equip({ item_id: 1, game: 'x'.repeat(101) })).code, 2);
    assert.equal((await equip({ item_id: 0 })).code, 2);
    assert.equal((await equip({})).code, 2);
    assert.equal((await server.call('inventory.equip', { item_id: 1 })).body.code, 1);
    assert.deepEqual(await tree(), { game: {} });
  });

  test('an equipped item cannot be sold, crafted or offered, and the offers holding it end', async () => {
    const offer = ok(await server.call('trades.create', { user_id: 2, thing_ids_from: '1' }, { token: alice }));
    assert.equal((await equip({ item_id: 1 })).code, 0);
    // The offer ended invalid (status 4) as the item was equipped.
    const ended = await server.db.kysely
      .selectFrom('trades')
      .select('status')
      .where('trade_id', '=', offer.trade_id)
      .executeTakeFirstOrThrow();
    assert.equal(ended.status, 4);
    assert.notEqual((await server.call('trades.accept', { trade_id: offer.trade_id }, { token: bob })).body.code, 0);
    assert.equal((await server.call('trades.create', { user_id: 2, thing_ids_from: '1' }, { token: alice })).body.code, 603);
    assert.equal((await server.call('market.sell', { thing_id: 1, price: 10 }, { token: alice })).body.code, 603);
    assert.equal((await unequip({ item_id: 1 })).code, 0);
    assert.equal(ok(await server.call('market.sell', { thing_id: 1, price: 10 }, { token: alice })).listing_id > 0, true);
    // On sale, it is not in the inventory to equip.
    assert.deepEqual(await equip({ item_id: 1 }), { code: 603, description: 'the item is not in your inventory' });
  });
});

describe('equips under concurrency', { skip: needsRedis }, () => {
  let processes: Processes;
  let call: ReturnType<typeof callsInTurn>;
  const DICE = 12;
  before(async () => {
    processes = await startProcesses({
      world: {
        ...catalogWorld,
        users: [user(1)],
        items: Array.from({ length: DICE }, (_, i) => ({ item_id: 100 + i, user_id: 1, item_proto_id: 601 })),
      },
      config: { rateLimit: false },
      redis: false,
    });
    const token = await tokenFor(processes.servers[0], 1);
    call = callsInTurn(processes, () => token);
  });
  after(() => processes?.close());

  test(`${DICE} dice equipped at once on one board: one of them is its die`, async () => {
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(Array.from({ length: DICE }, (_, i) => call(1, 'inventory.equip', { item_id: 100 + i })));
      assert.deepEqual(
        answers.map((a) => a.code),
        Array(DICE).fill(0),
      );
      const rows = await processes.servers[0].db.kysely.selectFrom('equipped').select(['item_id', 'slot', 'game']).execute();
      assert.equal(rows.length, 1, `round ${round}: ${JSON.stringify(rows)}`);
      assert.deepEqual([rows[0]!.slot, rows[0]!.game], ['generator', 'classic']);
      assert.equal((await call(1, 'inventory.unequip', { item_id: rows[0]!.item_id })).code, 0);
    }
  });
});
