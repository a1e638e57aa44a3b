import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { grantItems } from '../src/inventory/grants.js';

const SIZE = 10_000;

describe('an inventory of 10,000 items', () => {
  let server: TestServer;
  let token: string;
  let cards: number[];
  let stock: number[];
  let special: number[];
  before(async () => {
    server = await startTestServer({ world: { ...catalogWorld, users: [user(1), user(2)] } });
    token = await tokenFor(server, 1);
    special = await grantItems(server.services, { userId: 1, itemProtoId: 301, copies: 5 });
    server.clock.advance(1);
    stock = await grantItems(server.services, { userId: 1, itemProtoId: 801, copies: 995 });
    server.clock.advance(1);
    cards = await grantItems(server.services, { userId: 1, itemProtoId: 101, copies: SIZE - 1000 });
  });
  after(() => server.close());

  const newestFirst = (ids: number[]) => [...ids].sort((a, b) => b - a);

  test('answers in full without count', async () => {
    const data = await callOk(server, 'inventory.get', { include_stock: 1 }, { token, http: 'GET' });
    assert.equal(data.count, SIZE);
    assert.equal(data.things.length, SIZE);
    assert.deepEqual(
      data.things.map((t: any) => t.item_id),
      [...newestFirst(cards), ...newestFirst(stock), ...newestFirst(special)],
    );
    const others = await callOk(server, 'inventory.get', { user_id: 1, add_legacy: 0 }, { http: 'GET' });
    assert.equal(others.count, SIZE - stock.length);
    assert.equal(others.items.length, SIZE - stock.length);
  });

  test('count = 20 answers the first twenty and the whole count', async () => {
    const byTime = await callOk(server, 'inventory.get', { count: 20, include_stock: 1 }, { token, http: 'GET' });
    assert.equal(byTime.count, SIZE);
    assert.deepEqual(
      byTime.things.map((t: any) => t.item_id),
      newestFirst(cards).slice(0, 20),
    );
    const byQuality = await callOk(server, 'inventory.get', { count: 20, order: 'quality' }, { token, http: 'GET' });
    assert.equal(byQuality.count, SIZE - stock.length);
    assert.deepEqual(
      byQuality.things.map((t: any) => t.item_id),
      [...newestFirst(special), ...newestFirst(cards).slice(0, 15)],
    );
    const stockLast = await callOk(server, 'inventory.get', { count: 20, order: 'quality', include_stock: 1, shrink: 1 }, { token, http: 'GET' });
    assert.equal(stockLast.count, SIZE);
    assert.deepEqual(
      stockLast.things.map((t: any) => t.item_ids.length),
      [5, 15],
    );
  });

  test('shrink = 1 collapses the whole inventory into one entry per prototype', async () => {
    const data = await callOk(server, 'inventory.get', { include_stock: 1, shrink: 1, add_legacy: 0 }, { token, http: 'GET' });
    assert.equal(data.count, SIZE);
    assert.deepEqual(
      data.items.map((i: any) => [i.item_proto_id, i.item_ids.length]),
      [
        [101, cards.length],
        [801, stock.length],
        [301, special.length],
      ],
    );
    assert.deepEqual(data.items[0].item_ids, newestFirst(cards));
  });
});
