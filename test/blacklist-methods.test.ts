import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ok, startTestServer, type TestServer } from './helpers.js';
import { fails, idsOf, sessionFor } from './social-fixtures.js';
import type { World } from '../src/world/schema.js';

const NOW = Date.UTC(2026, 0, 1) / 1000;

// User 1 has blocked 10..64 over time (64 newest); 5 has blocked 1 back as well as being
// blocked; 2 is a friend of 1, 3 asked 1, 1 asked 4. 70 is globally blocked, 80 a bot.
const world: World = {
  users: [
    ...Array.from({ length: 5 }, (_, i) => ({ user_id: i + 1, nick: `user${i + 1}` })),
    ...Array.from({ length: 55 }, (_, i) => ({ user_id: i + 10, nick: `blocked${i + 10}` })),
    { user_id: 70, nick: 'banned', global_ban: 1 },
    { user_id: 80, nick: 'bot', bot_owner: 1 },
  ],
  friends: [[1, 2]],
  friend_requests: [
    { from: 3, to: 1 },
    { from: 1, to: 4 },
  ],
  blocks: Array.from({ length: 55 }, (_, i) => ({ user_id: 1, blocked_user_id: i + 10, ts: NOW - 1000 + i })),
};

let server: TestServer;
const tokens = new Map<number, string>();
before(async () => {
  server = await startTestServer({ world });
  for (const id of [1, 2, 3, 4, 5]) tokens.set(id, await sessionFor(server, id));
});
after(async () => {
  await server.close();
});

const call = (method: string, by: number, params: Record<string, unknown> = {}) => server.call(method, params, { token: tokens.get(by) });
const relation = async (viewer: number, other: number) =>
  ok(await server.call('users.get', { user_id: other }, { token: tokens.get(viewer), http: 'GET' }))[0].friendship;

test('blocking ends a friendship and requests in either direction', async () => {
  for (const other of [2, 3, 4]) {
    ok(await call('blacklist.add', 1, { user_id: other }));
    assert.equal(await relation(1, other), 4);
    assert.equal(await relation(other, 1), 5);
  }
  const rows = await server.db.kysely.selectFrom('friendships').selectAll().execute();
  assert.deepEqual(rows, []);
  assert.deepEqual(await server.db.kysely.selectFrom('friend_requests').selectAll().execute(), []);
  assert.equal(ok(await call('friends.get', 2, {})).count, 0);
  assert.equal(ok(await call('friends.getRequests', 1, {})).count, 0);
});

test('the block list: newest first, friendship 4 or 6, short and full forms', async () => {
  ok(await call('blacklist.add', 1, { user_id: 5 }));
  ok(await call('blacklist.add', 5, { user_id: 1 }));
  const data = ok(await call('blacklist.get', 1, { count: 5 }));
  assert.equal(data.count, 59);
  assert.deepEqual(idsOf(data.users), [5, 4, 3, 2, 64]);
  assert.deepEqual(
    data.users.map((u: { friendship: number }) => u.friendship),
    [6, 4, 4, 4, 4],
  );
  // User 5 is online: they just made a request.
  assert.deepEqual(data.users[0], {
    user_id: 5,
    nick: 'user5',
    gender: 0,
    avatar: '',
    online: 1,
    nicks_old: [],
    games: 0,
    games_wins: 0,
    xp: 0,
    xp_level: 0,
    friendship: 6,
  });
  const short = ok(await call('blacklist.get', 1, { count: 2, type: 'short' }));
  assert.deepEqual(short, {
    count: 59,
    users: [
      { user_id: 5, nick: 'user5', gender: 0, avatar: '', online: 1, friendship: 6 },
      { user_id: 4, nick: 'user4', gender: 0, avatar: '', online: 1, friendship: 4 },
    ],
  });
  assert.deepEqual(idsOf(ok(await call('blacklist.get', 5, {})).users), [1]);
});

test('paging: default 20, count 0, 50, 51, offsets at and past the end', async () => {
  const newestFirst = [5, 4, 3, 2, ...Array.from({ length: 55 }, (_, i) => 64 - i)];
  assert.deepEqual(idsOf(ok(await call('blacklist.get', 1)).users), newestFirst.slice(0, 20));
  assert.deepEqual(ok(await call('blacklist.get', 1, { count: 0 })), { count: 59, users: [] });
  assert.equal(ok(await call('blacklist.get', 1, { count: 50 })).users.length, 50);
  fails(await call('blacklist.get', 1, { count: 51 }), 6);
  assert.deepEqual(idsOf(ok(await call('blacklist.get', 1, { offset: 50 })).users), newestFirst.slice(50));
  assert.deepEqual(ok(await call('blacklist.get', 1, { offset: 59 })), { count: 59, users: [] });
});

test("unblocking: the other side's block stays; not blocked: success; blacklist.delete is the same as blacklist.remove", async () => {
  ok(await call('blacklist.remove', 1, { user_id: 5 }));
  assert.equal(await relation(1, 5), 5);
  fails(await call('friends.add', 1, { user_id: 5 }), 107);
  ok(await call('blacklist.remove', 5, { user_id: 1 }));
  assert.equal(await relation(1, 5), 0);
  ok(await call('blacklist.remove', 5, { user_id: 1 }));
  ok(await call('blacklist.delete', 5, { user_id: 1 }));
  ok(await call('friends.add', 1, { user_id: 5 }));
  assert.equal(await relation(5, 1), 3);
  ok(await call('blacklist.add', 2, { user_id: 1 }));
  ok(await call('blacklist.add', 2, { user_id: 1 }));
  assert.equal(ok(await call('blacklist.get', 2)).count, 1);
  ok(await call('blacklist.delete', 2, { user_id: 1 }));
  assert.equal(ok(await call('blacklist.get', 2)).count, 0);
  assert.equal(await relation(2, 1), 5, "1's own block on 2 stays");
});

test('unknown user 101, oneself 2, globally blocked users may be blocked, bots 4, no token 1', async () => {
  fails(await call('blacklist.add', 1, { user_id: 999 }), 101);
  for (const name of ['blacklist.remove', 'blacklist.delete']) {
    fails(await call(name, 1, { user_id: 999 }), 101);
    fails(await call(name, 1, { user_id: 1 }), 2);
    fails(await call(name, 1, {}), 2);
  }
  fails(await call('blacklist.add', 1, { user_id: 1 }), 2);
  fails(await call('blacklist.add', 1, {}), 2);
  fails(await call('blacklist.get', 1, { offset: -1 }), 2);
  ok(await call('blacklist.add', 3, { user_id: 70 }));
  assert.equal(ok(await call('blacklist.get', 3)).count, 0, 'globally blocked accounts are left out of lists');
  ok(await call('blacklist.delete', 3, { user_id: 70 }));
  const bot = await sessionFor(server, 80, { bot: true });
  fails(await server.call('blacklist.add', { user_id: 2 }, { token: bot }), 4);
  fails(await server.call('blacklist.get', {}, { token: bot }), 4);
  fails(await server.call('blacklist.remove', { user_id: 2 }, { token: bot }), 4);
  fails(await server.call('blacklist.add', { user_id: 2 }), 1);
  fails(await server.call('blacklist.get', {}), 1);
  fails(await server.call('blacklist.remove', { user_id: 2 }), 1);
});
