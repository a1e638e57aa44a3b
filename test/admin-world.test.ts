import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ok } from './helpers.js';
import {
  admin,
  adminCall,
  fails,
  PASSWORD,
  passwordHashOnce,
  publicUser,
  signIn,
  startAdminServer,
  withAdminServer,
} from './admin-support.js';
import { WORLD_CHANGED } from '../src/infra/channels.js';

test('admin.exportWorld answers the world in the file format', () =>
  withAdminServer(async (server) => {
    await admin(server, 'grantItems', { user_id: 1, item_proto_id: 100, copies: 2 });
    const { world } = await admin(server, 'exportWorld');
    assert.deepEqual(
      world.users.map((u: any) => u.user_id),
      [1, 2, 3],
    );
    assert.deepEqual(
      world.item_protos.map((p: any) => p.item_proto_id),
      [100, 101, 200],
    );
    assert.equal(world.items.length, 2);
    assert.equal(world.users[0].password_hash, await passwordHashOnce());
  }));

test('admin.importWorld merges a world that public methods show at once and announces world.changed', () =>
  withAdminServer(async (server) => {
    const announced: unknown[] = [];
    const stop = server.services.bus.subscribe(WORLD_CHANGED, (m) => announced.push(m));
    try {
      const world = {
        item_protos: [{ item_proto_id: 500, type: 0, title: 'Imported', quality_id: 1 }],
        users: [{ user_id: 50, nick: 'Imported user', email: 'imported@example.com', password_hash: await passwordHashOnce() }],
        items: [{ user_id: 50, item_proto_id: 500, copies: 2 }],
        friends: [[50, 1]],
      };
      const summary = await admin(server, 'importWorld', { world: JSON.stringify(world) });
      assert.equal(summary.mode, 'merge');
      assert.equal(summary.users, 1);
      assert.equal(summary.items, 2);
      assert.equal(announced.length, 1);
    } finally {
      stop();
    }
    assert.equal((await publicUser(server, 50)).nick, 'Imported user');
    assert.equal((await publicUser(server, 1)).nick, 'Alice', 'merge keeps what the file does not mention');
    const token = await signIn(server, 'imported@example.com');
    const inventory = ok(await server.call('inventory.get', { add_legacy: 0 }, { token, http: 'GET' }));
    assert.equal(inventory.count, 2);
    const protos = ok(await server.call('data.getItemProtos', { item_proto_ids: '500' }, { http: 'GET' }));
    assert.equal(protos.item_protos[0].title, 'Imported');
    const friends = ok(await server.call('friends.get', { user_id: 1 }, { http: 'GET' }));
    assert.deepEqual(
      friends.friends.map((f: any) => f.user_id),
      [50],
    );
  }));

test('admin.importWorld with replace makes the world exactly the file, ends sessions and keeps the audit log', () =>
  withAdminServer(async (server) => {
    const token = await signIn(server, 'alice@example.com');
    await admin(server, 'getUser', { user_id: 1 });
    const world = { users: [{ user_id: 7, nick: 'Only one', email: 'only@example.com', password_hash: await passwordHashOnce() }] };
    const summary = await admin(server, 'importWorld', { world: JSON.stringify(world), mode: 'replace' });
    assert.equal(summary.mode, 'replace');
    assert.equal((await publicUser(server, 1)).inactive, 'not_exists');
    assert.equal((await publicUser(server, 7)).nick, 'Only one');
    assert.equal((await server.call('users.get', {}, { token, http: 'GET' })).body.code, 1, 'the old session ended');
    await signIn(server, 'only@example.com', PASSWORD);
    const log = await admin(server, 'auditLog');
    assert.deepEqual(
      log.entries.map((e: any) => e.action),
      ['admin.importWorld', 'admin.getUser'],
    );
  }));

test('a wrong world answers 2 and changes nothing', () =>
  withAdminServer(async (server) => {
    const before = await admin(server, 'exportWorld');
    fails(await adminCall(server, 'importWorld', { world: '{not json' }), 2);
    fails(await adminCall(server, 'importWorld', { world: '[]' }), 2);
    const unknownUser = fails(
      await adminCall(server, 'importWorld', {
        world: JSON.stringify({ users: [{ user_id: 9, nick: 'Nine' }], items: [{ user_id: 404, item_proto_id: 100 }] }),
      }),
      2,
    );
    assert.match(unknownUser.description!, /items\[0\]\.user_id/);
    fails(await adminCall(server, 'importWorld', { world: JSON.stringify({ users: [{ user_id: 9 }] }), mode: 'replace' }), 2);
    fails(await adminCall(server, 'importWorld', { world: '{}', mode: 'overwrite' }), 2);
    const after = await admin(server, 'exportWorld');
    assert.deepEqual(after, before);
  }));

test('a world above the body limit answers 2 with HTTP 413, and a raised limit takes it', async () => {
  const big = JSON.stringify({
    collections: Array.from({ length: 3000 }, (_, i) => ({ collection_id: i + 1, title: `Collection number ${i + 1}` })),
  });
  assert.ok(big.length > 64 * 1024);
  const small = await startAdminServer();
  try {
    const answer = await adminCall(small, 'importWorld', { world: big });
    assert.equal(answer.status, 413);
    fails(answer, 2);
  } finally {
    await small.close();
  }
  const large = await startAdminServer({ config: { bodyLimit: 1024 * 1024 } });
  try {
    const summary = await admin(large, 'importWorld', { world: big });
    assert.equal(summary.mode, 'merge');
    const count = await large.db.kysely
      .selectFrom('collections')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 3000);
  } finally {
    await large.close();
  }
});
