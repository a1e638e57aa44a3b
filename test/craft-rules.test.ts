import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callFails, callOk, catalogWorld, ownedIds, tokenFor, user } from './item-fixtures.js';
import { grantItems } from '../src/inventory/grants.js';
import type { World } from '../src/world/schema.js';

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);
const NOW = Math.floor(Date.UTC(2026, 0, 1) / 1000);

/** Item ids by purpose; all of user 1 unless said otherwise. */
const CARDS_A = range(100, 20); // proto 101, class 1
const CARDS_B = range(120, 10); // proto 102, class 1
const UNCRAFTABLE = 130; // proto 103 (can_craft 0)
const LOCKED = 131; // trade-locked far ahead
const LOCKED_FOREVER = 132; // ts_can_trade -1
const LOCKED_BRIEFLY = 133; // trade-locked for 100 seconds
const EQUIPPED = 134;
const CLASS_2 = range(140, 10); // proto 201
const TOP_CLASS = range(150, 10); // proto 951, class 5
const DICE = range(160, 10); // proto 601: no dice of class 2
const TAUNTS = range(170, 10); // proto 850: no taunt of class 2
const PASSES = range(180, 10); // proto 660: class 2 has only a prototype that is no craft result
const TOP_UNCRAFTABLE = range(190, 10); // proto 952, class 5, can_craft 0 (as the demo world marks the top class)
const OTHERS_CARD = 200; // user 2

const world: World = {
  ...catalogWorld,
  item_protos: [
    ...catalogWorld.item_protos!,
    { item_proto_id: 660, type: 6, quality_id: 1, title: 'Pass' },
    { item_proto_id: 661, type: 6, quality_id: 2, title: 'Pass promo', craft_result: 0 },
    { item_proto_id: 952, type: 0, quality_id: 5, monopoly_id: 1, title: 'Top card, marked uncraftable', can_craft: 0 },
  ],
  users: [user(1), user(2), user(3, { bot_owner: 1 })],
  items: [
    ...CARDS_A.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 101, ts_owned: 100 })),
    ...CARDS_B.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 102, ts_owned: 100 })),
    { item_id: UNCRAFTABLE, user_id: 1, item_proto_id: 103 },
    { item_id: LOCKED, user_id: 1, item_proto_id: 101, ts_can_trade: NOW + 365 * 86400 },
    { item_id: LOCKED_FOREVER, user_id: 1, item_proto_id: 101, ts_can_trade: -1 },
    { item_id: LOCKED_BRIEFLY, user_id: 1, item_proto_id: 101, ts_can_trade: NOW + 100 },
    { item_id: EQUIPPED, user_id: 1, item_proto_id: 101, equip: { game: 'classic', slot: 'cards', monopoly_id: 1 } },
    ...CLASS_2.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 201 })),
    ...TOP_CLASS.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 951 })),
    ...DICE.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 601 })),
    ...TAUNTS.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 850 })),
    ...PASSES.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 660 })),
    ...TOP_UNCRAFTABLE.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 952 })),
    { item_id: OTHERS_CARD, user_id: 2, item_proto_id: 101 },
  ],
};

describe('inventory.craft', () => {
  let server: TestServer;
  let token: string;
  let botToken: string;
  before(async () => {
    server = await startTestServer({ world });
    token = await tokenFor(server, 1);
    botToken = await tokenFor(server, 3, { bot: true });
  });
  after(() => server.close());

  const craft = (itemIds: number[], t = token) => server.call('inventory.craft', { item_ids: itemIds.join(',') }, { token: t });
  const fails = (itemIds: number[], code: number, t = token) =>
    callFails(server, 'inventory.craft', { item_ids: itemIds.join(',') }, code, { token: t });
  const nine = () => CARDS_A.slice(10, 19);

  async function assertUnchanged(): Promise<void> {
    const owned = new Set(await ownedIds(server, 1));
    for (const id of [
      ...CARDS_A.slice(10),
      UNCRAFTABLE,
      LOCKED,
      LOCKED_FOREVER,
      EQUIPPED,
      ...CLASS_2,
      ...TOP_CLASS,
      ...DICE,
      ...TAUNTS,
      ...PASSES,
    ])
      assert.ok(owned.has(id), `item ${id} is still owned`);
    assert.deepEqual(await ownedIds(server, 2), [OTHERS_CARD]);
  }

  test('item_ids must be exactly ten distinct ids (else 2); a token is required (else 1)', async () => {
    await fails(CARDS_A.slice(0, 9), 2);
    await fails(CARDS_A.slice(0, 11), 2);
    await fails([...CARDS_A.slice(0, 9), CARDS_A[0]], 2);
    await callFails(server, 'inventory.craft', {}, 2, { token });
    await callFails(server, 'inventory.craft', { item_ids: 'a,b' }, 2, { token });
    await callFails(server, 'inventory.craft', { item_ids: CARDS_A.slice(0, 10).join(',') }, 1);
    await assertUnchanged();
    assert.deepEqual(await ownedIds(server, 1, 101), [...CARDS_A, LOCKED, LOCKED_FOREVER, LOCKED_BRIEFLY, EQUIPPED]);
  });

  test("603 for an unknown item, another user's, an uncraftable, trade-locked or equipped one", async () => {
    await fails([...nine(), 99_999], 603);
    await fails([...nine(), OTHERS_CARD], 603);
    await fails([...nine(), UNCRAFTABLE], 603);
    await fails([...nine(), LOCKED], 603);
    await fails([...nine(), LOCKED_FOREVER], 603);
    await fails([...nine(), LOCKED_BRIEFLY], 603);
    await fails([...nine(), EQUIPPED], 603);
    // 603 comes before 605: an unusable item among mixed classes.
    await fails([...nine().slice(1), CLASS_2[0], OTHERS_CARD], 603);
    // Another user cannot craft user 1's items.
    await fails(CARDS_A.slice(0, 10), 603, await tokenFor(server, 2));
    await assertUnchanged();
  });

  test('605 when types or classes differ', async () => {
    await fails([...nine(), CLASS_2[0]], 605);
    await fails([...nine(), DICE[0]], 605);
    await fails([...CLASS_2.slice(0, 9), TOP_CLASS[0]], 605);
    await assertUnchanged();
  });

  test('624 for the top class and for types with no prototype in the next class', async () => {
    await fails(TOP_CLASS, 624);
    // 624 before 603: crafting never takes the class, whether or not its prototypes are marked craftable.
    await fails(TOP_UNCRAFTABLE, 624);
    await fails([...TOP_CLASS.slice(0, 5), ...TOP_UNCRAFTABLE.slice(0, 5)], 624);
    await fails(DICE, 624);
    await fails(TAUNTS, 624);
    // A prototype of the next class that is not a craft result does not count.
    await fails(PASSES, 624);
    await assertUnchanged();
  });

  test('ten items of one type and class, even of different prototypes, give one item of the next class', async () => {
    server.clock.advance(60);
    const now = Math.floor(server.clock.now() / 1000);
    const inputs = [...CARDS_A.slice(0, 5), ...CARDS_B.slice(0, 5)];
    const answer = await craft(inputs);
    assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
    const item = answer.body.data.item;
    assert.ok([201, 202].includes(item.item_proto_id), `a craft result of class 2 (got ${item.item_proto_id})`);
    const expected =
      item.item_proto_id === 201
        ? {
            item_proto_id: 201,
            type: 0,
            image: '',
            title: 'Card A2',
            description: '',
            quality_id: 2,
            collection_id: 2,
            monopoly_id: 1,
            can_craft: 1,
          }
        : { item_proto_id: 202, type: 0, image: '', title: 'Card B2', description: '', quality_id: 2, monopoly_id: 2, can_craft: 1 };
    assert.deepEqual(item, { item_id: item.item_id, ...expected, ts_owned: now });
    assert.ok(item.item_id > OTHERS_CARD);

    const owned = await ownedIds(server, 1);
    for (const id of inputs) assert.ok(!owned.includes(id), `item ${id} left the inventory`);
    assert.ok(owned.includes(item.item_id));
    const inventory = await callOk(server, 'inventory.get', { count: 1, add_legacy: 0 }, { token, http: 'GET' });
    assert.deepEqual(inventory.items[0], item);

    const crafts = await server.db.kysely.selectFrom('crafts').selectAll().execute();
    assert.equal(crafts.length, 1);
    assert.equal(crafts[0].user_id, 1);
    assert.equal(crafts[0].ts, now);
    assert.equal(crafts[0].result_item_id, item.item_id);
    assert.deepEqual(
      JSON.parse(crafts[0].consumed_item_ids),
      [...inputs].sort((a, b) => a - b),
    );
    const consumed = await server.db.kysely.selectFrom('items').selectAll().where('item_id', 'in', inputs).execute();
    for (const row of consumed) {
      assert.equal(row.state, 'consumed');
      assert.equal(row.craft_id, crafts[0].craft_id);
      assert.equal(row.ended_at, now);
      assert.equal(row.user_id, 1);
    }
    const created = await server.db.kysely.selectFrom('items').selectAll().where('item_id', '=', item.item_id).executeTakeFirstOrThrow();
    assert.equal(created.created_by_craft_id, crafts[0].craft_id);
    assert.equal(created.state, 'owned');
    assert.equal(created.quality_id, 2);
    assert.equal(created.type, 0);
  });

  test('consumed items cannot be crafted again', async () => {
    await fails([...CARDS_A.slice(0, 5), ...CARDS_A.slice(10, 15)], 603);
    assert.equal((await server.db.kysely.selectFrom('crafts').select('craft_id').execute()).length, 1);
  });

  test('a trade lock ends at its time', async () => {
    await fails([...CARDS_A.slice(5, 10), ...CARDS_B.slice(5, 9), LOCKED_BRIEFLY], 603);
    server.clock.advance(100);
    const item = (
      await callOk(
        server,
        'inventory.craft',
        { item_ids: [...CARDS_A.slice(5, 10), ...CARDS_B.slice(5, 9), LOCKED_BRIEFLY].join(',') },
        { token },
      )
    ).item;
    assert.equal(item.quality_id, 2);
  });

  test('class 2 crafts to class 3', async () => {
    const item = (await callOk(server, 'inventory.craft', { item_ids: CLASS_2.join(',') }, { token })).item;
    assert.equal(item.item_proto_id, 301);
    assert.equal(item.quality_id, 3);
  });

  test('the result is drawn among the craft results of the next class, never another prototype', async () => {
    const CRAFTS = 40;
    const cards = await grantItems(server.services, { userId: 1, itemProtoId: 101, copies: CRAFTS * 10 });
    const drawn = new Map<number, number>();
    for (let i = 0; i < CRAFTS; i++) {
      const item = (await callOk(server, 'inventory.craft', { item_ids: cards.slice(i * 10, i * 10 + 10).join(',') }, { token })).item;
      drawn.set(item.item_proto_id, (drawn.get(item.item_proto_id) ?? 0) + 1);
    }
    // 201 and 202 are the craft results of class 2 (203 is not one); 40 fair draws all
    // landing on the same one have probability 2^-39.
    assert.deepEqual([...drawn.keys()].sort(), [201, 202]);
    assert.deepEqual(await ownedIds(server, 1, 101).then((ids) => ids.filter((id) => cards.includes(id))), []);
  });

  test('a bot may craft its own items, and only those', async () => {
    await fails(CARDS_A.slice(10, 20), 603, botToken);
    const rows = await server.db.kysely
      .insertInto('items')
      .values(range(0, 10).map(() => ({ user_id: 3, item_proto_id: 102, type: 0, quality_id: 1, ts_owned: 1 })))
      .returning('item_id')
      .execute();
    const ids = rows.map((r) => r.item_id);
    const item = (await callOk(server, 'inventory.craft', { item_ids: ids.join(',') }, { token: botToken })).item;
    assert.equal(item.quality_id, 2);
    assert.deepEqual(await ownedIds(server, 3), [item.item_id]);
  });
});
