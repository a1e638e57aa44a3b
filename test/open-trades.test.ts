import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import type { World } from '../src/world/schema.js';

/* Items an opening consumes leave the open trades that hold them invalid (status 4). */

const CASE = 100; // proto 501
const KEY = 110; // proto 502
const CARD = 120; // proto 101

const world: World = {
  ...catalogWorld,
  users: [user(1), user(2)],
  items: [
    { item_id: CASE, user_id: 1, item_proto_id: 501 },
    { item_id: KEY, user_id: 1, item_proto_id: 502 },
    { item_id: CARD, user_id: 1, item_proto_id: 101 },
  ],
};

let server: TestServer;
let token: string;
before(async () => {
  server = await startTestServer({ world });
  token = await tokenFor(server, 1);
});
after(() => server.close());

test('opening a case invalidates every open trade holding the case or its key, and no other', async () => {
  const offer = (ids: number[]) => callOk(server, 'trades.create', { user_id: 2, thing_ids_from: ids.join(',') }, { token });
  const withCase = await offer([CASE]);
  const withKey = await offer([KEY, CARD]);
  const untouched = await offer([CARD]);
  await callOk(server, 'inventory.open', { item_id: CASE, key_item_id: KEY }, { token });
  const statuses = await server.db.kysely.selectFrom('trades').select(['trade_id', 'status']).orderBy('trade_id').execute();
  assert.deepEqual(
    statuses.map((t) => [t.trade_id, t.status]),
    [
      [withCase.trade_id, 4],
      [withKey.trade_id, 4],
      [untouched.trade_id, 0],
    ],
  );
});
