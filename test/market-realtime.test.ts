import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { listen } from './transport-support.js';
import { ExtwsClient } from './extws-client.js';
import type { World } from '../src/world/schema.js';

/*
 * The wallet on the realtime feed: the `auth` frame's counters carry the balance, every change
 * of it reaches the user's connections as `wallet.balance`, and a seller hears of a sale.
 */

const ADMIN_KEY = 'admin-key-of-the-market-realtime-test';
const world: World = {
  ...catalogWorld,
  users: [user(1), user(2)],
  items: [{ item_id: 10, user_id: 1, item_proto_id: 101, ts_owned: 1000 }],
};

let server: TestServer;
let base: string;
const tokens = new Map<number, string>();

before(async () => {
  server = await startTestServer({ world, config: { adminKey: ADMIN_KEY } });
  base = await listen(server);
  for (const id of [1, 2]) tokens.set(id, await tokenFor(server, id));
  await callOk(server, 'admin.grantMoney', { user_id: 2, amount: 20, reason: 'test' }, { headers: { 'x-admin-key': ADMIN_KEY } });
});
after(async () => {
  await server.close();
});

const eventOf = async (client: ExtwsClient, type: string) => {
  const frame = await client.next((f) => f.event === 'events' && f.data.events.some((e: any) => e.type === type));
  const { id, ...event } = frame.data.events.find((e: any) => e.type === type);
  assert.equal(typeof id, 'number');
  return event;
};

test('the auth frame shows the balance; a sale tells the seller and both balances at once', async () => {
  const seller = await ExtwsClient.connect(base, { access_token: tokens.get(1), subs: '' });
  const buyer = await ExtwsClient.connect(base, { access_token: tokens.get(2), subs: '' });
  assert.equal((await buyer.next((f) => f.event === 'auth')).data.counters.balance, 20);
  assert.equal((await seller.next((f) => f.event === 'auth')).data.counters.balance, 0);

  await callOk(server, 'market.sell', { thing_id: 10, price: 10 }, { token: tokens.get(1) });
  await callOk(server, 'market.buy', { thing_id: 10, price: 1000 }, { token: tokens.get(2) });
  assert.deepEqual(await eventOf(seller, 'market.sold'), { type: 'market.sold', thing_id: 10, thing_prototype_id: 101, price: 10 });
  assert.deepEqual(await eventOf(seller, 'wallet.balance'), { type: 'wallet.balance', balance: 9 });
  assert.deepEqual(await eventOf(buyer, 'wallet.balance'), { type: 'wallet.balance', balance: 10 });
  assert.deepEqual(
    buyer.events().map((e) => e.type),
    ['wallet.balance'],
    'the buyer hears only of its balance',
  );
  seller.close();
  buyer.close();
});
