import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ok, startTestServer, type TestServer } from './helpers.js';
import { fails, idsOf, sessionFor } from './social-fixtures.js';
import type { World } from '../src/world/schema.js';

const NOW = Date.UTC(2026, 0, 1) / 1000;

// User 1 has 57 friends: 2..56 befriended one after another (56 newest), then 57 and 58 at the
// same moment, most recently; 59 is a friend but globally blocked. User 70's friends: 71 always
// online, 72 and 73 offline until a test makes 72 active.
const world: World = {
  users: [
    { user_id: 1, nick: 'Popular', domain: 'popular' },
    ...Array.from({ length: 57 }, (_, i) => ({ user_id: i + 2, nick: `friend${i + 2}` })),
    { user_id: 59, nick: 'banned', global_ban: 1 },
    { user_id: 60, nick: 'Lonely' },
    { user_id: 70, nick: 'Small', vip: 1 },
    { user_id: 71, nick: 'Always', online: 1, domain: 'always' },
    { user_id: 72, nick: 'Active' },
    { user_id: 73, nick: 'Away', approved: 1 },
  ],
  friends: [
    ...Array.from({ length: 55 }, (_, i) => ({ user_id: 1, friend_id: i + 2, since: NOW - 1000 + i })),
    { user_id: 1, friend_id: 57, since: NOW },
    { user_id: 58, friend_id: 1, since: NOW },
    { user_id: 1, friend_id: 59, since: NOW },
    { user_id: 70, friend_id: 71, since: NOW - 30 },
    { user_id: 70, friend_id: 72, since: NOW - 20 },
    { user_id: 73, friend_id: 70, since: NOW - 10 },
  ],
};

let server: TestServer;
before(async () => {
  server = await startTestServer({ world });
});
after(async () => {
  await server.close();
});

const friendsOf = (params: Record<string, unknown>, token?: string) => server.call('friends.get', params, { http: 'GET', token });
const newestFirst = [58, 57, ...Array.from({ length: 55 }, (_, i) => 56 - i)];

test('friends come newest friendship first; globally blocked accounts are left out', async () => {
  const data = ok(await friendsOf({ user_id: 1, count: 50 }));
  assert.equal(data.count, 57);
  assert.deepEqual(idsOf(data.friends), newestFirst.slice(0, 50));
  assert.equal('user' in data, false);
});

test('paging: default 20, count 0, count 50, count 51, offsets at and past the end', async () => {
  assert.deepEqual(idsOf(ok(await friendsOf({ user_id: 1 })).friends), newestFirst.slice(0, 20));
  const none = ok(await friendsOf({ user_id: 1, count: 0 }));
  assert.deepEqual(none, { count: 57, friends: [] });
  assert.equal(ok(await friendsOf({ user_id: 1, count: 50 })).friends.length, 50);
  fails(await friendsOf({ user_id: 1, count: 51 }), 6);
  assert.deepEqual(idsOf(ok(await friendsOf({ user_id: 1, offset: 50, count: 20 })).friends), newestFirst.slice(50));
  assert.deepEqual(idsOf(ok(await friendsOf({ user_id: 1, offset: 56, count: 5 })).friends), [2]);
  assert.deepEqual(ok(await friendsOf({ user_id: 1, offset: 57 })), { count: 57, friends: [] });
  assert.deepEqual(ok(await friendsOf({ user_id: 1, offset: 1000 })), { count: 57, friends: [] });
  fails(await friendsOf({ user_id: 1, offset: -1 }), 2);
  fails(await friendsOf({ user_id: 1, count: 'many' }), 2);
  const all: number[] = [];
  for (let offset = 0; offset < 57; offset += 20) all.push(...(idsOf(ok(await friendsOf({ user_id: 1, offset })).friends) as number[]));
  assert.deepEqual(all, newestFirst);
});

test('short and full forms, and add_user', async () => {
  const short = ok(await friendsOf({ user_id: 70, type: 'short', add_user: 1 }));
  assert.deepEqual(short, {
    count: 3,
    friends: [
      { user_id: 73, approved: 1, nick: 'Away', gender: 0, avatar: '' },
      { user_id: 72, nick: 'Active', gender: 0, avatar: '' },
      { user_id: 71, domain: 'always', nick: 'Always', gender: 0, avatar: '', online: 1 },
    ],
    user: { user_id: 70, nick: 'Small', gender: 0, avatar: '', vip: 1 },
  });
  const full = ok(await friendsOf({ user_id: 'always', add_user: 1 }));
  assert.deepEqual(full, {
    count: 1,
    friends: [{ user_id: 70, nick: 'Small', gender: 0, avatar: '', vip: 1, nicks_old: [], games: 0, games_wins: 0, xp: 0, xp_level: 0 }],
    user: {
      user_id: 71,
      domain: 'always',
      nick: 'Always',
      gender: 0,
      avatar: '',
      online: 1,
      nicks_old: [],
      games: 0,
      games_wins: 0,
      xp: 0,
      xp_level: 0,
    },
  });
});

test('a signed-in caller sees their relation to every listed user but themselves', async () => {
  const token = await sessionFor(server, 71);
  const data = ok(await friendsOf({ user_id: 70, add_user: 1 }, token));
  assert.deepEqual(
    data.friends.map((u: { user_id: number; friendship?: number }) => [u.user_id, u.friendship]),
    [
      [73, 0],
      [72, 0],
      [71, undefined],
    ],
  );
  assert.equal(data.user.friendship, 1);
  const mine = ok(await friendsOf({ add_user: 1 }, token));
  assert.deepEqual(idsOf(mine.friends), [70]);
  assert.equal(mine.friends[0].friendship, 1);
  assert.equal(mine.user.user_id, 71);
  assert.equal('friendship' in mine.user, false);
  const short = ok(await friendsOf({ user_id: 70, type: 'short', add_user: 1 }, token));
  const listed: object[] = [...short.friends, short.user];
  assert.ok(
    listed.every((u) => !('friendship' in u)),
    'the short form has no friendship',
  );
});

test('online=1 lists and counts only friends online', async () => {
  let data = ok(await friendsOf({ user_id: 70, online: 1 }));
  assert.deepEqual([data.count, idsOf(data.friends)], [1, [71]]);
  const token = await sessionFor(server, 72);
  ok(await server.call('users.get', {}, { token }));
  data = ok(await friendsOf({ user_id: 70, online: 1, type: 'short' }));
  assert.deepEqual([data.count, idsOf(data.friends)], [2, [72, 71]]);
  assert.deepEqual(ok(await friendsOf({ user_id: 70, online: 1, offset: 1 })).friends.length, 1);
  assert.deepEqual(ok(await friendsOf({ user_id: 70, online: 1, count: 0 })), { count: 2, friends: [] });
  assert.equal(ok(await friendsOf({ user_id: 70, online: 0 })).count, 3);
  server.clock.advance(300);
  data = ok(await friendsOf({ user_id: 70, online: 1 }));
  assert.deepEqual([data.count, idsOf(data.friends)], [1, [71]]);
});

test('someone without friends has an empty list', async () => {
  assert.deepEqual(ok(await friendsOf({ user_id: 60, add_user: 1, type: 'short' })), {
    count: 0,
    friends: [],
    user: { user_id: 60, nick: 'Lonely', gender: 0, avatar: '' },
  });
});

test('unknown or globally blocked user 101; no user_id and no token 1; POST works too', async () => {
  fails(await friendsOf({ user_id: 999 }), 101);
  fails(await friendsOf({ user_id: 'nobody' }), 101);
  fails(await friendsOf({ user_id: 59 }), 101);
  fails(await friendsOf({ user_id: 0 }), 2);
  fails(await friendsOf({}), 1);
  fails(await friendsOf({ user_id: 1 }, 'not-a-valid-token-at-all'), 1);
  assert.equal(ok(await server.call('friends.get', { user_id: 'popular', count: 5 })).friends.length, 5);
  assert.equal(ok(await server.call('friends.get', { user_id: 1, count: '5' }, { form: true })).friends.length, 5);
});
