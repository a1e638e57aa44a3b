import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { getCatalog } from '../src/catalog/cache.js';
import { ownedItemJson, ownedItemObject } from '../src/catalog/serialize.js';
import { listOwnedItems } from '../src/inventory/queries.js';
import type { World } from '../src/world/schema.js';

const LOCKED = 2_000_000_000;

// Every kind of prototype, every per-item field alone and together, and text that JSON must escape.
const world: World = {
  ...catalogWorld,
  users: [user(1)],
  items: [
    { item_id: 1, user_id: 1, item_proto_id: 101, ts_owned: 100 },
    { item_id: 2, user_id: 1, item_proto_id: 102, ts_owned: 101, ts_can_trade: LOCKED },
    { item_id: 3, user_id: 1, item_proto_id: 502, ts_owned: 102, ts_can_trade: -1, data: { ts_can_sell: 99 } },
    { item_id: 4, user_id: 1, item_proto_id: 501, ts_owned: 103 },
    { item_id: 5, user_id: 1, item_proto_id: 901, ts_owned: 104 },
    { item_id: 6, user_id: 1, item_proto_id: 901, ts_owned: 105, data: { uses: { left: 3, origin: 5 } } },
    { item_id: 7, user_id: 1, item_proto_id: 901, ts_owned: 106, data: { uses: { left: 2 } } },
    { item_id: 8, user_id: 1, item_proto_id: 901, ts_owned: 107, data: { uses: 4 } },
    {
      item_id: 9,
      user_id: 1,
      item_proto_id: 101,
      ts_owned: 108,
      data: { souvenir: 'Cup "2025" \\ é 😀', autograph: { user_id: 2, text: 'hi "there"' } },
    },
    { item_id: 10, user_id: 1, item_proto_id: 101, ts_owned: 109, data: { autograph: { user_id: 3 } } },
    { item_id: 11, user_id: 1, item_proto_id: 201, ts_owned: 110, data: { moneybox: { transactions: 3, money_inside: 12.5 } } },
    { item_id: 12, user_id: 1, item_proto_id: 601, ts_owned: 111, data: { seed: 'seed\n1' } },
    { item_id: 19, user_id: 1, item_proto_id: 202, ts_owned: 118, data: { moneybox: { numbers: [3, 1, 2] } } },
    {
      item_id: 13,
      user_id: 1,
      item_proto_id: 701,
      ts_owned: 112,
      ts_can_trade: LOCKED,
      data: { previous_owners_user_ids: [4, 5], gift: { from_user_id: 5, to_user_id: 1, ts: 90 }, ts_can_sell: LOCKED },
    },
    { item_id: 14, user_id: 1, item_proto_id: 702, ts_owned: 113, data: { unknown: 1, souvenir: 7 } },
    { item_id: 15, user_id: 1, item_proto_id: 801, ts_owned: 114 },
    { item_id: 16, user_id: 1, item_proto_id: 550, ts_owned: 115 },
    { item_id: 17, user_id: 1, item_proto_id: 850, ts_owned: 116 },
    { item_id: 18, user_id: 1, item_proto_id: 951, ts_owned: 117, data: { previous_owners_user_ids: [] } },
  ],
};

let server: TestServer;
before(async () => {
  server = await startTestServer({ world });
});
after(async () => {
  await server.close();
});

test('owned item JSON text is exactly JSON.stringify of the owned item object, for every kind of item, in both forms', async () => {
  const catalog = await getCatalog(server.services);
  const rows = await listOwnedItems(server.services, 1, { includeStock: true, order: 'time' });
  assert.equal(rows.length, world.items!.length);
  for (const row of rows)
    for (const legacy of [false, true])
      for (const mergedIds of [undefined, [row.item_id, 1000 + row.item_id]]) {
        const proto = catalog.protos.get(row.item_proto_id)!;
        assert.equal(ownedItemJson(proto, row, legacy, mergedIds), JSON.stringify(ownedItemObject(proto, row, legacy, mergedIds)));
      }
});

test('inventory.get lists the owned item objects, in both forms', async () => {
  const catalog = await getCatalog(server.services);
  const rows = await listOwnedItems(server.services, 1, { includeStock: true, order: 'time' });
  const token = await tokenFor(server, 1);
  for (const legacy of [false, true]) {
    const data = await callOk(server, 'inventory.get', { include_stock: 1, add_legacy: legacy ? 1 : 0 }, { token });
    const expected = rows.map((row) => ownedItemObject(catalog.protos.get(row.item_proto_id)!, row, legacy));
    assert.deepEqual(legacy ? data.things : data.items, expected);
  }
});
