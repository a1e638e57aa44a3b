import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ok, type TestServer } from './helpers.js';
import { admin, adminCall, fails, signIn, withAdminServer } from './admin-support.js';
import { CATALOG_CHANGED } from '../src/infra/channels.js';

async function publicProto(server: TestServer, id: number): Promise<any> {
  const data = ok(await server.call('data.getItemProtos', { item_proto_ids: String(id) }, { http: 'GET' }));
  return { proto: data.item_protos.find((p: any) => p.item_proto_id === id), collections: data.collections ?? [] };
}

async function inventoryItemIds(server: TestServer, token: string): Promise<number[]> {
  const data = ok(await server.call('inventory.get', { add_legacy: 0, include_stock: 1 }, { token, http: 'GET' }));
  return data.items.map((i: any) => i.item_id);
}

test('admin.upsertCollection and admin.upsertItemProto create catalogue entries data.getItemProtos shows at once', () =>
  withAdminServer(async (server) => {
    const changes: unknown[] = [];
    const stop = server.services.bus.subscribe(CATALOG_CHANGED, (m) => changes.push(m));
    try {
      assert.deepEqual(await admin(server, 'upsertCollection', { collection_id: 20, title: 'Modern' }), {
        collection_id: 20,
        title: 'Modern',
      });
      const created = await admin(server, 'upsertItemProto', {
        item_proto: JSON.stringify({
          item_proto_id: 300,
          type: 0,
          title: 'Harbour',
          description: 'By the sea',
          quality_id: 2,
          collection_id: 20,
          monopoly_id: 3,
          prices: { buy: 50, quick_sell: 5 },
          image: '/i/300.png',
        }),
      });
      assert.equal(created.item_proto.title, 'Harbour');
      assert.equal(changes.length, 2);
    } finally {
      stop();
    }
    const { proto, collections } = await publicProto(server, 300);
    assert.equal(proto.title, 'Harbour');
    assert.equal(proto.quality_id, 2);
    assert.equal(proto.collection_id, 20);
    assert.deepEqual(proto.prices, { buy: 50, quick_sell: 5 });
    assert.deepEqual(
      collections.map((c: any) => [c.collection_id, c.title]),
      [[20, 'Modern']],
    );

    await admin(server, 'upsertCollection', { collection_id: 20, title: 'Modern Times' });
    assert.equal((await publicProto(server, 300)).collections[0].title, 'Modern Times');
  }));

test('admin.upsertItemProto replaces a stored prototype with the entry', () =>
  withAdminServer(async (server) => {
    const updated = await admin(server, 'upsertItemProto', {
      item_proto: JSON.stringify({ item_proto_id: 100, type: 0, quality_id: 1, title: 'Old Street (renamed)', collection_id: 10 }),
    });
    assert.deepEqual(updated.item_proto, {
      item_proto_id: 100,
      type: 0,
      quality_id: 1,
      title: 'Old Street (renamed)',
      description: '',
      collection_id: 10,
      can_craft: 1,
      craft_result: 1,
    });
    const { proto } = await publicProto(server, 100);
    assert.equal(proto.title, 'Old Street (renamed)');
    assert.equal(proto.collection_id, 10);
    assert.equal(proto.monopoly_id, undefined, 'fields the entry leaves out take their defaults');
    assert.equal(proto.image ?? '', '');
  }));

test('admin.upsertItemProto checks the entry like a world import and changes nothing when it is wrong', () =>
  withAdminServer(async (server) => {
    const wrong: [entry: string, description: string][] = [
      ['not json', 'parameter item_proto: is not valid JSON'],
      ['[1,2]', 'parameter item_proto: must be a JSON object'],
      [JSON.stringify({ type: 0, title: 'No id' }), 'parameter item_proto: needs item_proto_id, a positive integer'],
      [
        JSON.stringify({ item_proto_id: 400, title: 'No type' }),
        'parameter item_proto: type: Expected required property; parameter item_proto: type: Expected integer',
      ],
      [
        JSON.stringify({ item_proto_id: 400, type: 0, title: 'Unknown collection', collection_id: 999 }),
        'parameter item_proto: collection_id: unknown collection 999',
      ],
      [
        JSON.stringify({ item_proto_id: 400, type: 0, title: 'Unknown field', colour: 'red' }),
        'parameter item_proto: colour: Unexpected property',
      ],
      [
        JSON.stringify({ item_proto_id: 400, type: 2, title: 'Unknown drop', drop: [{ item_proto_id: 999 }] }),
        'parameter item_proto: drop[0].item_proto_id: unknown item_proto_id 999',
      ],
    ];
    for (const [item_proto, description] of wrong)
      assert.equal(fails(await adminCall(server, 'upsertItemProto', { item_proto }), 2).description, description);
    const row = await server.db.kysely
      .selectFrom('item_protos')
      .select('item_proto_id')
      .where('item_proto_id', '=', 400)
      .executeTakeFirst();
    assert.equal(row, undefined);

    // Items carry their prototype's type and class: once granted, those stay.
    const entry = { item_proto_id: 101, type: 0, title: 'New Street', quality_id: 2 };
    await admin(server, 'upsertItemProto', { item_proto: JSON.stringify(entry) });
    await admin(server, 'grantItems', { user_id: 1, item_proto_id: 101 });
    fails(await adminCall(server, 'upsertItemProto', { item_proto: JSON.stringify({ ...entry, quality_id: 3 }) }), 2);
    fails(await adminCall(server, 'upsertItemProto', { item_proto: JSON.stringify({ ...entry, type: 1 }) }), 2);
    fails(
      await adminCall(server, 'upsertItemProto', { item_proto: JSON.stringify({ item_proto_id: 101, type: 0, title: 'Stock now' }) }),
      2,
    );
    await admin(server, 'upsertItemProto', { item_proto: JSON.stringify({ ...entry, title: 'Same class, new title' }) });
    const stored = await server.db.kysely
      .selectFrom('item_protos')
      .select(['quality_id', 'title'])
      .where('item_proto_id', '=', 101)
      .executeTakeFirstOrThrow();
    assert.deepEqual(stored, { quality_id: 2, title: 'Same class, new title' });
    fails(await adminCall(server, 'upsertCollection', { collection_id: 0, title: 'Zero' }), 2);
  }));

test('admin.grantItems gives copies that inventory.get lists at once, with the trade lock', () =>
  withAdminServer(async (server) => {
    const token = await signIn(server, 'bob@example.com');
    const granted = await admin(server, 'grantItems', { user_id: 'bob', item_proto_id: 100, copies: 3, ts_can_trade: -1 });
    assert.equal(granted.user_id, 2);
    assert.equal(granted.item_ids.length, 3);
    assert.deepEqual((await inventoryItemIds(server, token)).sort(), [...granted.item_ids].sort());
    const data = ok(await server.call('inventory.get', { add_legacy: 0 }, { token, http: 'GET' }));
    assert.equal(data.count, 3);
    assert.ok(data.items.every((i: any) => i.item_proto_id === 100));
    const rows = await server.db.kysely.selectFrom('items').select('ts_can_trade').where('user_id', '=', 2).execute();
    assert.ok(rows.every((r) => r.ts_can_trade === -1));

    fails(await adminCall(server, 'grantItems', { user_id: 404, item_proto_id: 100 }), 101);
    fails(await adminCall(server, 'grantItems', { user_id: 2, item_proto_id: 999 }), 2);
    fails(await adminCall(server, 'grantItems', { user_id: 2, item_proto_id: 100, copies: 0 }), 2);
    fails(await adminCall(server, 'grantItems', { user_id: 2, item_proto_id: 100, copies: 1001 }), 2);
  }));

test('admin.revokeItem takes an item out of the inventory and keeps it in history', () =>
  withAdminServer(async (server) => {
    const token = await signIn(server, 'alice@example.com');
    const { item_ids } = await admin(server, 'grantItems', { user_id: 1, item_proto_id: 101, copies: 2 });
    assert.deepEqual(await admin(server, 'revokeItem', { item_id: item_ids[0], reason: 'granted by mistake' }), { item_id: item_ids[0] });
    assert.deepEqual(await inventoryItemIds(server, token), [item_ids[1]]);
    const row = await server.db.kysely.selectFrom('items').select('state').where('item_id', '=', item_ids[0]).executeTakeFirstOrThrow();
    assert.equal(row.state, 'revoked');
    const revocation = await server.db.kysely
      .selectFrom('revocations')
      .selectAll()
      .where('item_id', '=', item_ids[0])
      .executeTakeFirstOrThrow();
    assert.equal(revocation.reason, 'granted by mistake');
    assert.equal(revocation.user_id, 1);

    fails(await adminCall(server, 'revokeItem', { item_id: item_ids[0] }), 2);
    fails(await adminCall(server, 'revokeItem', { item_id: 999999 }), 2);
  }));

test('concurrent revocations of one item: exactly one succeeds', () =>
  withAdminServer(async (server) => {
    const { item_ids } = await admin(server, 'grantItems', { user_id: 3, item_proto_id: 100 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => adminCall(server, 'revokeItem', { item_id: item_ids[0] })));
    assert.equal(answers.filter((a) => a.body.code === 0).length, 1);
    assert.equal(answers.filter((a) => a.body.code === 2).length, 7);
    const revocations = await server.db.kysely.selectFrom('revocations').select('item_id').where('item_id', '=', item_ids[0]).execute();
    assert.equal(revocations.length, 1);
    // Each call has exactly one entry, with the code it answered.
    const entries = await server.db.kysely.selectFrom('audit_log').select('result_code').where('action', '=', 'admin.revokeItem').execute();
    assert.deepEqual(entries.map((e) => e.result_code).sort(), [0, 2, 2, 2, 2, 2, 2, 2]);
  }));

test('catalogue answers asked again are the same bytes, and follow every change to the catalogue', () =>
  withAdminServer(async (server) => {
    const search = () => server.call('data.searchItemProtos', { type: 0, count: 10 }, { http: 'GET' });
    const first = await search();
    const again = await search();
    assert.deepEqual(again.body, first.body);
    assert.deepEqual(
      ok(first).item_protos.map((p: any) => p.item_proto_id),
      [100, 101],
    );
    await admin(server, 'upsertItemProto', {
      item_proto: JSON.stringify({ item_proto_id: 102, type: 0, quality_id: 1, title: 'Third Street' }),
    });
    assert.deepEqual(
      ok(await search()).item_protos.map((p: any) => p.item_proto_id),
      [100, 101, 102],
    );
    await admin(server, 'upsertItemProto', {
      item_proto: JSON.stringify({ item_proto_id: 101, type: 0, quality_id: 1, title: 'Renamed Street' }),
    });
    assert.equal(ok(await search()).item_protos[1].title, 'Renamed Street');
    assert.equal((await publicProto(server, 101)).proto.title, 'Renamed Street');
  }));
