import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ok, type TestServer } from './helpers.js';
import { admin, adminCall, fails, publicUser, signIn, withAdminServer } from './admin-support.js';

async function friendIds(server: TestServer, userId: number): Promise<number[]> {
  const data = ok(await server.call('friends.get', { user_id: userId }, { http: 'GET' }));
  return data.friends.map((f: any) => f.user_id).sort();
}

test('admin.makeFriends and admin.endFriendship show in friends.get and users.get at once', () =>
  withAdminServer(async (server) => {
    const alice = await signIn(server, 'alice@example.com');
    const made = await admin(server, 'makeFriends', { user_id: 1, other_user_id: 'bob' });
    assert.deepEqual(made, { user_id: 1, other_user_id: 2, friendship: 1 });
    await admin(server, 'makeFriends', { user_id: 3, other_user_id: 1 });
    assert.deepEqual(await friendIds(server, 1), [2, 3]);
    assert.deepEqual(await friendIds(server, 2), [1]);
    assert.equal((await publicUser(server, 2, alice)).friendship, 1);

    const ended = await admin(server, 'endFriendship', { user_id: 2, other_user_id: 1 });
    assert.equal(ended.friendship, 0);
    assert.deepEqual(await friendIds(server, 1), [3]);
    assert.deepEqual(await friendIds(server, 2), []);
    assert.equal((await publicUser(server, 2, alice)).friendship, 0);
  }));

test('admin.addFriendRequest creates a request the receiver sees and can accept', () =>
  withAdminServer(async (server) => {
    const alice = await signIn(server, 'alice@example.com');
    const bob = await signIn(server, 'bob@example.com');
    assert.equal((await admin(server, 'addFriendRequest', { user_id: 1, other_user_id: 2 })).friendship, 2);
    assert.equal((await publicUser(server, 2, alice)).friendship, 2);
    assert.equal((await publicUser(server, 1, bob)).friendship, 3);
    ok(await server.call('friends.add', { user_id: 1 }, { token: bob }));
    assert.deepEqual(await friendIds(server, 1), [2]);

    // A request the other way round while one is pending makes them friends.
    await admin(server, 'addFriendRequest', { user_id: 3, other_user_id: 1 });
    assert.equal((await admin(server, 'addFriendRequest', { user_id: 1, other_user_id: 3 })).friendship, 1);
    // Cancelling a pending request.
    await admin(server, 'addFriendRequest', { user_id: 2, other_user_id: 3 });
    assert.equal((await admin(server, 'endFriendship', { user_id: 3, other_user_id: 2 })).friendship, 0);
    assert.equal((await publicUser(server, 3, bob)).friendship, 0);
  }));

test('admin.block and admin.unblock change friends.add and the friendship value at once', () =>
  withAdminServer(async (server) => {
    const alice = await signIn(server, 'alice@example.com');
    const bob = await signIn(server, 'bob@example.com');
    await admin(server, 'makeFriends', { user_id: 1, other_user_id: 2 });
    assert.equal((await admin(server, 'block', { user_id: 'bob', other_user_id: 'alice' })).friendship, 4);
    assert.deepEqual(await friendIds(server, 1), [], 'a block ends the friendship');
    assert.equal((await publicUser(server, 2, alice)).friendship, 5);
    fails(await server.call('friends.add', { user_id: 2 }, { token: alice }), 107);
    fails(await adminCall(server, 'addFriendRequest', { user_id: 1, other_user_id: 2 }), 107);
    fails(await adminCall(server, 'addFriendRequest', { user_id: 2, other_user_id: 1 }), 2);

    assert.equal((await admin(server, 'block', { user_id: 1, other_user_id: 2 })).friendship, 6);
    assert.equal((await admin(server, 'unblock', { user_id: 2, other_user_id: 1 })).friendship, 5, 'alice still blocks bob');
    assert.equal((await publicUser(server, 1, bob)).friendship, 5);
    assert.equal((await admin(server, 'unblock', { user_id: 1, other_user_id: 2 })).friendship, 0);
    ok(await server.call('friends.add', { user_id: 2 }, { token: alice }));
    assert.equal((await publicUser(server, 2, alice)).friendship, 2);
  }));

test('social admin methods refuse unknown users and a user paired with themselves', () =>
  withAdminServer(async (server) => {
    for (const name of ['makeFriends', 'endFriendship', 'addFriendRequest', 'block', 'unblock']) {
      fails(await adminCall(server, name, { user_id: 1, other_user_id: 404 }), 101);
      fails(await adminCall(server, name, { user_id: 'nobody', other_user_id: 1 }), 101);
      fails(await adminCall(server, name, { user_id: 1, other_user_id: 'alice' }), 2);
      fails(await adminCall(server, name, { user_id: 1 }), 2);
    }
  }));

test('concurrent admin.makeFriends of one pair leaves one friendship', () =>
  withAdminServer(async (server) => {
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        adminCall(server, 'makeFriends', i % 2 ? { user_id: 1, other_user_id: 2 } : { user_id: 2, other_user_id: 1 }),
      ),
    );
    for (const answer of answers) ok(answer);
    const rows = await server.db.kysely.selectFrom('friendships').selectAll().execute();
    assert.equal(rows.length, 2);
    assert.deepEqual(await friendIds(server, 1), [2]);
  }));
