import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ok } from './helpers.js';
import { admin, adminCall, fails, passwordHashOnce, signIn, smallWorld, startAdminServer, withAdminServer } from './admin-support.js';

const found = (data: { count: number; users: { user_id: number }[] }) => [data.count, data.users.map((u) => u.user_id)];

test('admin.searchUsers finds accounts by id, e-mail, the start of a nick or domain, blocked ones too, page by page', async () => {
  const world = await smallWorld();
  const password_hash = await passwordHashOnce();
  const server = await startAdminServer({
    world: {
      ...world,
      users: [
        ...world.users!,
        { user_id: 4, email: 'Bobby@Example.com', password_hash, nick: 'Bobby', domain: 'bobster' },
        { user_id: 5, email: 'dora@example.com', password_hash, nick: 'Boris', global_ban: 1 },
        { user_id: 12, nick: 'Twelve' },
        { user_id: 13, nick: 'Zed', domain: 'bo-domain' },
      ],
    },
  });
  try {
    // Nick or domain: Bob (bob), Bobby (bobster), Boris (blocked), Zed (bo-domain); by nick.
    assert.deepEqual(found(await admin(server, 'searchUsers', { query: 'bo' })), [4, [2, 4, 5, 13]]);
    assert.deepEqual(found(await admin(server, 'searchUsers', { query: '  BO  ', offset: 2, count: 2 })), [4, [5, 13]]);
    assert.deepEqual(found(await admin(server, 'searchUsers', { query: 'bob' })), [2, [2, 4]]);
    assert.deepEqual(found(await admin(server, 'searchUsers', { query: 'bobs' })), [1, [4]]);
    // An id; one digit is too short to be the start of a nick.
    assert.deepEqual(found(await admin(server, 'searchUsers', { query: '12' })), [1, [12]]);
    assert.deepEqual(found(await admin(server, 'searchUsers', { query: '1' })), [1, [1]]);
    // An e-mail address, as sign-in compares it.
    assert.deepEqual(found(await admin(server, 'searchUsers', { query: 'BOBBY@example.COM' })), [1, [4]]);
    assert.deepEqual(found(await admin(server, 'searchUsers', { query: 'bobby@example.org' })), [0, []]);
    assert.deepEqual(found(await admin(server, 'searchUsers', { query: 'nobody' })), [0, []]);
    // The accounts come in the form admin.getUser answers.
    const [boris] = (await admin(server, 'searchUsers', { query: 'boris' })).users;
    assert.deepEqual(boris, (await admin(server, 'getUser', { user_id: 5 })).user);
    assert.equal(boris.global_ban, 1);
    assert.equal(boris.email, 'dora@example.com');

    // Bounded input.
    assert.equal(fails(await adminCall(server, 'searchUsers', { query: '   ' }), 2).description, 'parameter query: must not be empty');
    assert.equal(
      fails(await adminCall(server, 'searchUsers', { query: 'b' }), 2).description,
      'parameter query: must be an id, an e-mail address or at least 2 characters of a nick or domain',
    );
    fails(await adminCall(server, 'searchUsers', { query: 'x'.repeat(255) }), 2);
    fails(await adminCall(server, 'searchUsers', { query: 'bo', count: 51 }), 6);
    fails(await adminCall(server, 'searchUsers', {}), 2);
    // Without the key, nothing.
    fails(await adminCall(server, 'searchUsers', { query: 'bo' }, { key: null }), 1);

    const entries = (await admin(server, 'auditLog', { action: 'admin.searchUsers', count: 100 })).entries;
    assert.equal(entries.length, 15, 'every authorised call, refused ones too');
    assert.deepEqual(entries.at(-1).params, { query: 'bo' });
  } finally {
    await server.close();
  }
});

test('admin.auditLog filters by what a call acted on, alone or with the method', () =>
  withAdminServer(async (server) => {
    await admin(server, 'banUser', { user_id: 2 });
    await admin(server, 'unbanUser', { user_id: 'bob' });
    await admin(server, 'muteUser', { user_id: 3, duration: 60 });
    await admin(server, 'grantItems', { user_id: '2', item_proto_id: 100, copies: 1 });
    const [item] = ok(await server.call('inventory.get', { user_id: 2, add_legacy: 0 })).items;
    await admin(server, 'revokeItem', { item_id: item.item_id, reason: 'by mistake' });
    await admin(server, 'getChatStatus');
    fails(await adminCall(server, 'banUser', { user_id: 99 }), 101);

    const page = async (params: Record<string, unknown>) => {
      const data = await admin(server, 'auditLog', params);
      return [data.count, data.entries.map((e: { action: string; target?: string; result_code: number }) => [e.action, e.target ?? null])];
    };
    // Bob by id, whether the call named him by id, by domain (not a plain id: its own target) or by id as text.
    assert.deepEqual(await page({ target: 'user:2' }), [
      2,
      [
        ['admin.grantItems', 'user:2'],
        ['admin.banUser', 'user:2'],
      ],
    ]);
    assert.deepEqual(await page({ target: 'user:bob' }), [1, [['admin.unbanUser', 'user:bob']]]);
    assert.deepEqual(await page({ target: `item:${item.item_id}` }), [1, [['admin.revokeItem', `item:${item.item_id}`]]]);
    // A failed call is found by its target too.
    assert.deepEqual(await page({ target: 'user:99' }), [1, [['admin.banUser', 'user:99']]]);
    assert.deepEqual(await page({ target: 'user:2', action: 'admin.banUser' }), [1, [['admin.banUser', 'user:2']]]);
    assert.deepEqual(await page({ target: 'user:3', action: 'admin.banUser' }), [0, []]);
    assert.deepEqual(await page({ target: 'user:2', offset: 1, count: 1 }), [2, [['admin.banUser', 'user:2']]]);
    // A call that names nothing has no target.
    const status = (await admin(server, 'auditLog', { action: 'admin.getChatStatus' })).entries[0];
    assert.equal('target' in status, false);

    assert.equal(
      fails(await adminCall(server, 'auditLog', { target: 'bob' }), 2).description,
      'parameter target: must be <kind>:<id>, e.g. user:2 or item:17',
    );
    fails(await adminCall(server, 'auditLog', { target: `user:${'9'.repeat(120)}` }), 2);
  }));

test('admin.getChatStatus reads the modes admin.setChatStatus set, the interval included', () =>
  withAdminServer(async (server) => {
    assert.deepEqual(await admin(server, 'getChatStatus'), {
      status: { closed: false, slowmode: false, emoteonly: false },
      slowmode_interval: 10,
    });
    await admin(server, 'setChatStatus', { slowmode: 1, emoteonly: 1, slowmode_interval: 45 });
    assert.deepEqual(await admin(server, 'getChatStatus'), {
      status: { closed: false, slowmode: true, emoteonly: true },
      slowmode_interval: 45,
    });
    await admin(server, 'setChatStatus', { closed: 1, emoteonly: 0 });
    assert.deepEqual(await admin(server, 'getChatStatus'), {
      status: { closed: true, slowmode: true, emoteonly: false },
      slowmode_interval: 45,
    });
    // Players see the same flags.
    const token = await signIn(server, 'alice@example.com');
    assert.deepEqual(ok(await server.call('gchat.get', {}, { token, http: 'GET' })).status, {
      closed: true,
      slowmode: true,
      emoteonly: false,
    });
    fails(await adminCall(server, 'getChatStatus', {}, { key: 'not the key' }), 1);
    const entries = (await admin(server, 'auditLog', { action: 'admin.getChatStatus' })).entries;
    assert.deepEqual(
      entries.map((e: { result_code: number }) => e.result_code),
      [0, 0, 0],
    );
  }));
