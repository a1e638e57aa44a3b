import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ok, startTestServer, type TestServer } from './helpers.js';
import { fails, idsOf, sessionFor } from './social-fixtures.js';
import type { World } from '../src/world/schema.js';

// 1..8 people, 9 a bot of 1, 10 globally blocked.
const world: World = {
  users: [
    ...Array.from({ length: 8 }, (_, i) => ({ user_id: i + 1, nick: `user${i + 1}`, domain: `user${i + 1}` })),
    { user_id: 9, nick: 'bot', bot_owner: 1 },
    { user_id: 10, nick: 'banned', global_ban: 1 },
  ],
};

let server: TestServer;
const tokens = new Map<number, string>();
before(async () => {
  server = await startTestServer({ world });
  for (let id = 1; id <= 8; id++) tokens.set(id, await sessionFor(server, id));
  tokens.set(9, await sessionFor(server, 9, { bot: true }));
});
after(async () => {
  await server.close();
});

const add = (by: number, userId: unknown) => server.call('friends.add', { user_id: userId }, { token: tokens.get(by) });
const relation = async (viewer: number, other: number) =>
  ok(await server.call('users.get', { user_id: other }, { token: tokens.get(viewer), http: 'GET' }))[0].friendship;

test('a request, then the other side accepting, makes friends', async () => {
  assert.deepEqual((await add(1, 2)).body, { code: 0 });
  assert.equal(await relation(1, 2), 2);
  assert.equal(await relation(2, 1), 3);
  const requests = ok(await server.call('friends.getRequests', {}, { token: tokens.get(2) }));
  assert.deepEqual(idsOf(requests.requests), [1]);

  ok(await add(2, 1));
  assert.equal(await relation(1, 2), 1);
  assert.equal(await relation(2, 1), 1);
  assert.equal(ok(await server.call('friends.getRequests', {}, { token: tokens.get(2) })).count, 0);
  assert.deepEqual(idsOf(ok(await server.call('friends.get', { user_id: 1 })).friends), [2]);
  assert.deepEqual(idsOf(ok(await server.call('friends.get', { user_id: 2 })).friends), [1]);
});

test('already friends or already requested: success, nothing changes', async () => {
  ok(await add(3, 4));
  const [before] = await server.db.kysely.selectFrom('friend_requests').selectAll().where('from_user_id', '=', 3).execute();
  server.clock.advance(10);
  ok(await add(3, 4));
  const after = await server.db.kysely.selectFrom('friend_requests').selectAll().where('from_user_id', '=', 3).execute();
  assert.deepEqual(after, [before]);

  ok(await add(1, 2));
  ok(await add(2, 1));
  assert.equal(await relation(1, 2), 1);
  const friendships = () =>
    server.db.kysely
      .selectFrom('friendships')
      .select(['user_id', 'friend_id', 'since'])
      .where('user_id', 'in', [1, 2])
      .orderBy('user_id')
      .execute();
  const rows = await friendships();
  assert.equal(rows.length, 2);
  server.clock.advance(10);
  ok(await add(1, 2));
  ok(await add(2, 1));
  assert.deepEqual(await friendships(), rows);
  assert.equal((await server.db.kysely.selectFrom('friend_requests').selectAll().where('from_user_id', 'in', [1, 2]).execute()).length, 0);
});

test('a domain names the user too', async () => {
  ok(await add(5, 'user6'));
  assert.equal(await relation(5, 6), 2);
  ok(await server.call('friends.delete', { user_id: 'user6' }, { token: tokens.get(5) }));
  assert.equal(await relation(5, 6), 0);
});

test('unknown or globally blocked user 101, oneself 2, bad ids 2, no token 1', async () => {
  fails(await add(1, 999), 101);
  fails(await add(1, 'nobody'), 101);
  fails(await add(1, 10), 101);
  fails(await add(1, 1), 2);
  fails(await add(1, 'user1'), 2);
  fails(await add(1, 0), 2);
  fails(await add(1, -5), 2);
  fails(await server.call('friends.add', {}, { token: tokens.get(1) }), 2);
  fails(await server.call('friends.add', { user_id: 2 }), 1);
});

test('bots may send friend requests', async () => {
  ok(await add(9, 7));
  assert.equal(await relation(7, 9), 3);
});

test('blocks: the blocked user gets 107, the blocker 4 until they unblock', async () => {
  ok(await server.call('blacklist.add', { user_id: 5 }, { token: tokens.get(6) }));
  fails(await add(5, 6), 107);
  fails(await add(6, 5), 4);
  ok(await server.call('blacklist.add', { user_id: 6 }, { token: tokens.get(5) }));
  fails(await add(5, 6), 107);
  fails(await add(6, 5), 107);
  ok(await server.call('blacklist.delete', { user_id: 5 }, { token: tokens.get(6) }));
  fails(await add(5, 6), 4);
  fails(await add(6, 5), 107);
  assert.equal(await relation(6, 5), 5);
  ok(await server.call('blacklist.delete', { user_id: 6 }, { token: tokens.get(5) }));
  ok(await add(5, 6));
  assert.equal(await relation(6, 5), 3);
});

test('friends.delete removes a friend, declines or withdraws a request; no relation or a banned user: success', async () => {
  const del = (by: number, userId: unknown) => server.call('friends.delete', { user_id: userId }, { token: tokens.get(by) });
  ok(await add(7, 8));
  ok(await del(7, 8));
  assert.equal(await relation(8, 7), 0);
  ok(await add(7, 8));
  ok(await del(8, 7));
  assert.equal(await relation(7, 8), 0);
  ok(await add(7, 8));
  ok(await add(8, 7));
  ok(await del(8, 7));
  assert.equal(await relation(7, 8), 0);
  const rows = await server.db.kysely.selectFrom('friendships').selectAll().where('user_id', 'in', [7, 8]).execute();
  assert.deepEqual(rows, []);
  ok(await del(7, 8));
  ok(await del(7, 10));
  fails(await del(7, 999), 101);
  fails(await del(7, 7), 2);
  fails(await server.call('friends.delete', { user_id: 8 }), 1);
  ok(await del(9, 7));
});
