import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { BUS_LEASE_MS } from '../src/infra/bus.js';
import { REDIS_URL, busCurrent, heard, ok, type TestServer } from './helpers.js';
import { admin, fails, publicUser, signIn, signInAnswer, smallWorld, startAdminServer } from './admin-support.js';
import { missing } from './components.js';
import { CATALOG_CHANGED, INVENTORY_CHANGED, SESSIONS_REVOKED, USERS_CHANGED } from '../src/infra/channels.js';

/** Two server processes on one database, joined by Redis: the admin API is called on the first, the public API on the second. */
async function withTwoServers(run: (first: TestServer, second: TestServer) => Promise<void>): Promise<void> {
  const first = await startAdminServer({ world: await smallWorld(), redis: true });
  try {
    const second = await startAdminServer({ location: first.location, redis: true });
    try {
      await run(first, second);
    } finally {
      await second.close();
    }
  } finally {
    await first.close();
  }
}

test("a ban on one process stops the user's token on another at once", { skip: missing.redis }, () =>
  withTwoServers(async (first, second) => {
    const token = await signIn(second, 'bob@example.com');
    ok(await second.call('users.get', {}, { token, http: 'GET' }));
    const revoked = heard(second, SESSIONS_REVOKED, (m) => m?.userId === 2);
    await admin(first, 'banUser', { user_id: 2 });
    await revoked;
    fails(await second.call('users.get', {}, { token, http: 'GET' }), 1);
    assert.equal((await signInAnswer(second, 'bob@example.com')).code, 412);
    assert.equal((await publicUser(second, 2)).inactive, 'global_ban');

    await admin(first, 'unbanUser', { user_id: 2 });
    const fresh = await signIn(second, 'bob@example.com');
    const killed = heard(second, SESSIONS_REVOKED, (m) => m?.userId === 2);
    await admin(first, 'killSessions', { user_id: 2 });
    await killed;
    fails(await second.call('users.get', {}, { token: fresh, http: 'GET' }), 1);
  }),
);

test('a token held in memory on another process stops working there before the revoking call answers', { skip: missing.redis }, () =>
  withTwoServers(async (first, second) => {
    const token = await signIn(second, 'bob@example.com');
    await busCurrent(second.services.bus);
    ok(await second.call('users.get', {}, { token, http: 'GET' }));
    // Revoked behind the servers' backs, without an announcement: the second process still
    // accepts the token, so it answers from memory.
    await second.db.kysely.updateTable('sessions').set({ revoked_at: 1 }).where('user_id', '=', 2).execute();
    ok(await second.call('users.get', {}, { token, http: 'GET' }));

    // No waiting for the notice: the revoking call answers once every process has confirmed it.
    await admin(first, 'killSessions', { user_id: 2 });
    fails(await second.call('users.get', {}, { token, http: 'GET' }), 1);
  }),
);

test('a process that never confirms a revocation holds the revoking call for one lease at most', { skip: missing.redis }, () =>
  withTwoServers(async (first, second) => {
    // A subscriber that receives revocation notices and never confirms them, as a process
    // cut off without knowing it yet would.
    const silent = new Redis(REDIS_URL);
    try {
      await silent.subscribe(`${first.location.redisPrefix}bus:auth.revoked`);
      const token = await signIn(second, 'bob@example.com');
      const started = performance.now();
      await admin(first, 'killSessions', { user_id: 2 });
      assert.ok(performance.now() - started >= BUS_LEASE_MS, "the call waited for the silent subscriber's lease to run out");
      fails(await second.call('users.get', {}, { token, http: 'GET' }), 1);
    } finally {
      silent.disconnect();
    }
  }),
);

test('chat status and mutes set on one process apply on another at once', { skip: missing.redis }, () =>
  withTwoServers(async (first, second) => {
    const token = await signIn(second, 'alice@example.com');
    ok(await second.call('gchat.send', { message: 'before' }, { token }));

    await admin(first, 'setChatStatus', { closed: 1 });
    assert.deepEqual(ok(await second.call('gchat.get', {}, { http: 'GET' })).status, { closed: true, slowmode: false, emoteonly: false });
    fails(await second.call('gchat.send', { message: 'closed' }, { token }), 1203);

    await admin(first, 'setChatStatus', { closed: 0 });
    assert.equal(ok(await second.call('gchat.get', {}, { http: 'GET' })).status.closed, false);
    ok(await second.call('gchat.send', { message: 'open again' }, { token }));

    const changed = heard(second, USERS_CHANGED, (m) => m?.user_ids?.includes(1));
    await admin(first, 'muteUser', { user_id: 1, duration: 300 });
    await changed;
    fails(await second.call('gchat.send', { message: 'muted' }, { token }), 104);
    assert.equal((await publicUser(second, 1)).muted, 1);
  }),
);

test('profile and catalogue changes on one process show on another', { skip: missing.redis }, () =>
  withTwoServers(async (first, second) => {
    assert.equal((await publicUser(second, 3)).nick, 'Carol');
    const userChanged = heard(second, USERS_CHANGED, (m) => m?.user_ids?.includes(3));
    await admin(first, 'updateUser', { user_id: 3, nick: 'Caroline' });
    await userChanged;
    const seen = await publicUser(second, 3);
    assert.equal(seen.nick, 'Caroline');
    assert.deepEqual(seen.nicks_old, ['Carol']);

    ok(await second.call('data.getItemProtos', { item_proto_ids: '100' }, { http: 'GET' }));
    const catalogChanged = heard(second, CATALOG_CHANGED);
    await admin(first, 'upsertItemProto', {
      item_proto: JSON.stringify({ item_proto_id: 100, type: 0, quality_id: 1, title: 'Renamed everywhere' }),
    });
    await catalogChanged;
    const protos = ok(await second.call('data.getItemProtos', { item_proto_ids: '100' }, { http: 'GET' }));
    assert.equal(protos.item_protos[0].title, 'Renamed everywhere');
  }),
);

test('an inventory read on one process follows grants, revocations and prototype changes made on another', { skip: missing.redis }, () =>
  withTwoServers(async (first, second) => {
    const items = async () => ok(await second.call('inventory.get', { user_id: 1, add_legacy: 0 }, { http: 'GET' }));
    assert.deepEqual(await items(), { count: 0, items: [], collections: [] });

    let changed = heard(second, INVENTORY_CHANGED, (m) => m?.user_ids?.includes(1));
    const granted = await admin(first, 'grantItems', { user_id: 1, item_proto_id: 100, copies: 2 });
    await changed;
    const afterGrant = await items();
    assert.equal(afterGrant.count, 2);
    assert.deepEqual(afterGrant.items.map((i: any) => i.item_id).sort(), [...granted.item_ids].sort());
    assert.equal(afterGrant.items[0].title, 'Old Street');

    changed = heard(second, INVENTORY_CHANGED, (m) => m?.user_ids?.includes(1));
    await admin(first, 'revokeItem', { item_id: granted.item_ids[0] });
    await changed;
    const afterRevoke = await items();
    assert.equal(afterRevoke.count, 1);
    assert.deepEqual(
      afterRevoke.items.map((i: any) => i.item_id),
      [granted.item_ids[1]],
    );

    const catalogChanged = heard(second, CATALOG_CHANGED);
    await admin(first, 'upsertItemProto', {
      item_proto: JSON.stringify({ item_proto_id: 100, type: 0, quality_id: 1, title: 'Renamed street' }),
    });
    await catalogChanged;
    assert.equal((await items()).items[0].title, 'Renamed street');
  }),
);
