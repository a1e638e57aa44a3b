import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callFails, callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { grantItems, revokeItem } from '../src/inventory/grants.js';
import { announceInventoriesChanged } from '../src/inventory/answer-cache.js';
import { ApiError } from '../src/api/errors.js';
import type { World } from '../src/world/schema.js';

const world: World = {
  ...catalogWorld,
  users: [user(1), user(2)],
  items: [{ item_id: 10, user_id: 1, item_proto_id: 850, ts_owned: 5, equip: { game: 'classic', slot: 'joke' } }],
};

describe('grants and revocations', () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startTestServer({ world });
    token = await tokenFor(server, 1);
  });
  after(() => server.close());

  const inventory = (params: Record<string, unknown> = {}) =>
    callOk(server, 'inventory.get', { add_legacy: 0, ...params }, { token, http: 'GET' });

  test('grantItems adds copies received now, with the given trade lock', async () => {
    server.clock.advance(10);
    const now = Math.floor(server.clock.now() / 1000);
    const ids = await grantItems(server.services, { userId: 1, itemProtoId: 201, copies: 3, tsCanTrade: now + 50 });
    assert.equal(ids.length, 3);
    assert.deepEqual(
      [...ids].sort((a, b) => a - b),
      ids,
    );
    const data = await inventory();
    assert.deepEqual(
      data.items.map((i: any) => i.item_id),
      [...ids].reverse().concat(10),
    );
    for (const item of data.items.slice(0, 3)) {
      assert.equal(item.ts_owned, now);
      assert.equal(item.ts_can_trade, now + 50);
      assert.equal(item.item_proto_id, 201);
    }
    const open = await grantItems(server.services, { userId: 2, itemProtoId: 801, copies: 1 });
    const other = await server.db.kysely.selectFrom('items').selectAll().where('item_id', '=', open[0]).executeTakeFirstOrThrow();
    assert.deepEqual([other.user_id, other.type, other.quality_id, other.ts_can_trade, other.state], [2, 0, 0, 0, 'owned']);
  });

  test('grantItems refuses an unknown prototype, an unknown user and no copies', async () => {
    await assert.rejects(
      grantItems(server.services, { userId: 1, itemProtoId: 9999, copies: 1 }),
      (e: unknown) => e instanceof ApiError && e.code === 2,
    );
    await assert.rejects(
      grantItems(server.services, { userId: 999, itemProtoId: 101, copies: 1 }),
      (e: unknown) => e instanceof ApiError && e.code === 101,
    );
    await assert.rejects(
      grantItems(server.services, { userId: 1, itemProtoId: 101, copies: 0 }),
      (e: unknown) => e instanceof ApiError && e.code === 2,
    );
  });

  test('revokeItem takes an equipped item away, records why, and unequips it', async () => {
    const before = await inventory({ add_equipped: 'array' });
    assert.deepEqual(before.item_ids_equipped, [10]);
    await revokeItem(server.services, 10, 'chargeback');
    const after = await inventory({ add_equipped: 'array' });
    assert.ok(!after.items.some((i: any) => i.item_id === 10));
    assert.deepEqual(after.item_ids_equipped, []);
    assert.equal(after.count, before.count - 1);
    const row = await server.db.kysely.selectFrom('items').selectAll().where('item_id', '=', 10).executeTakeFirstOrThrow();
    assert.equal(row.state, 'revoked');
    assert.equal(row.ended_at, Math.floor(server.clock.now() / 1000));
    const revocations = await server.db.kysely.selectFrom('revocations').selectAll().execute();
    assert.equal(revocations.length, 1);
    assert.deepEqual([revocations[0].item_id, revocations[0].user_id, revocations[0].reason], [10, 1, 'chargeback']);
    assert.equal((await server.db.kysely.selectFrom('equipped').selectAll().execute()).length, 0);
    // Only an owned item can be revoked.
    await assert.rejects(revokeItem(server.services, 10, 'again'), {
      code: 2,
      description: 'parameter item_id: item 10 does not exist or is no longer owned',
    });
    await assert.rejects(revokeItem(server.services, 424242, null), {
      code: 2,
      description: 'parameter item_id: item 424242 does not exist or is no longer owned',
    });
    assert.equal((await server.db.kysely.selectFrom('revocations').selectAll().execute()).length, 1);
  });

  test('the total follows every write to items, whoever makes it', async () => {
    const total = async (userId: number, includeStock: 0 | 1) => {
      const t = await tokenFor(server, userId);
      return (await callOk(server, 'inventory.get', { count: 0, include_stock: includeStock }, { token: t, http: 'GET' })).count;
    };
    const counted = async (userId: number, includeStock: boolean) => {
      let query = server.db.kysely.selectFrom('items').select('item_id').where('user_id', '=', userId).where('state', '=', 'owned');
      if (!includeStock) query = query.where('quality_id', '>', 0);
      return (await query.execute()).length;
    };
    const check = async () => {
      // Writes made here behind the server's back are announced, as every writer of items must.
      await announceInventoriesChanged(server.services, [1, 2]);
      for (const userId of [1, 2])
        for (const stock of [0, 1] as const)
          assert.equal(await total(userId, stock), await counted(userId, stock === 1), `user ${userId}, include_stock ${stock}`);
    };
    await check();
    const k = server.db.kysely;
    const [a, b] = await grantItems(server.services, { userId: 2, itemProtoId: 801, copies: 2 });
    await check();
    await k.updateTable('items').set({ user_id: 1 }).where('item_id', '=', a).execute();
    await check();
    await k.updateTable('items').set({ quality_id: 2 }).where('item_id', '=', b).execute();
    await check();
    await k.updateTable('items').set({ state: 'consumed' }).where('item_id', '=', b).execute();
    await check();
    await k.updateTable('items').set({ state: 'owned', quality_id: 0 }).where('item_id', '=', b).execute();
    await check();
    await k.updateTable('items').set({ ts_can_trade: 5 }).where('user_id', '=', 1).execute();
    await check();
    await k.deleteFrom('items').where('item_id', 'in', [a, b]).execute();
    await check();
  });

  test('a revoked item cannot be crafted', async () => {
    const ids = await grantItems(server.services, { userId: 1, itemProtoId: 101, copies: 10 });
    await revokeItem(server.services, ids[3], null);
    await callFails(server, 'inventory.craft', { item_ids: ids.join(',') }, 603, { token });
    const owned = await server.db.kysely
      .selectFrom('items')
      .select('item_id')
      .where('item_id', 'in', ids)
      .where('state', '=', 'owned')
      .execute();
    assert.equal(owned.length, 9);
  });
});
