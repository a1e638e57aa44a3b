import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RelationCache, type ViewerRelations } from '../src/friends/relation-cache.js';
import { heard, ok, startTestServer, type StartOptions, type TestServer } from './helpers.js';
import { idsOf, sessionFor } from './social-fixtures.js';
import { missing } from './components.js';
import { FRIENDS_CHANGED, USERS_CHANGED } from '../src/infra/channels.js';

const relations = (friendId: number): ViewerRelations => ({
  kinds: new Map([[friendId, 1]]),
  blocked: new Set(),
  blockedBy: new Set(),
  friendsByAge: [friendId],
});

test('a load of relations that started before a change is not kept', () => {
  const cache = new RelationCache({ now: () => 0, usable: () => true });
  const before = cache.startFill();
  cache.invalidate([1]);
  cache.store(before, 1, relations(2));
  assert.equal(cache.get(1), undefined);
  const after = cache.startFill();
  cache.store(after, 1, relations(3));
  assert.deepEqual(cache.get(1), relations(3));
  // A change of anyone's relations voids every load in progress, not only that viewer's.
  const pending = cache.startFill();
  cache.invalidate([7]);
  cache.store(pending, 2, relations(1));
  assert.equal(cache.get(2), undefined);
  assert.deepEqual(cache.get(1), relations(3));
  cache.invalidate([1]);
  assert.equal(cache.get(1), undefined);
});

test('cached relations expire after 60 seconds and are not used while Redis is unreachable', () => {
  let now = 0;
  let connected = true;
  const cache = new RelationCache({ now: () => now, usable: () => connected });
  cache.store(cache.startFill(), 1, 'too_many');
  now = 59;
  assert.equal(cache.get(1), 'too_many');
  connected = false;
  assert.equal(cache.get(1), undefined);
  cache.store(cache.startFill(), 2, relations(1));
  connected = true;
  assert.equal(cache.get(2), undefined, 'nothing is stored while unreachable');
  now = 60;
  assert.equal(cache.get(1), undefined);
});

test('the cache holds a bounded number of relations in all: the viewers stored longest ago are forgotten first', () => {
  const cache = new RelationCache({ now: () => 0, usable: () => true });
  const share = Math.floor(RelationCache.maxTotalRelations * 0.4);
  const many = (friend: number): ViewerRelations => ({
    kinds: new Map(),
    blocked: new Set(),
    blockedBy: new Set(),
    friendsByAge: new Array<number>(share).fill(friend),
  });
  cache.store(cache.startFill(), 1, many(11));
  cache.store(cache.startFill(), 2, many(12));
  assert.ok(cache.get(1));
  cache.store(cache.startFill(), 3, many(13));
  assert.equal(cache.get(1), undefined);
  assert.ok(cache.get(2));
  assert.ok(cache.get(3));
  // A forgotten viewer gives its share back.
  cache.invalidate([2]);
  cache.store(cache.startFill(), 4, many(14));
  assert.ok(cache.get(3));
  assert.ok(cache.get(4));
});

const ADMIN_KEY = 'friends-cache-test-admin-key';
const world = {
  users: [
    { user_id: 1, nick: 'Alice' },
    { user_id: 2, nick: 'Bob' },
    { user_id: 3, nick: 'Carol' },
  ],
  friends: [
    { user_id: 1, friend_id: 2, since: 1_700_000_000 },
    { user_id: 1, friend_id: 3, since: 1_700_000_100 },
  ],
};

function start(options: StartOptions = {}): Promise<TestServer> {
  return startTestServer({ world, ...options, config: { adminKey: ADMIN_KEY, ...options.config } });
}

async function admin(server: TestServer, name: string, params: Record<string, unknown>): Promise<void> {
  ok(await server.call(`admin.${name}`, params, { headers: { 'x-admin-key': ADMIN_KEY } }));
}

async function friendsOf(server: TestServer, userId: number): Promise<{ count: number; ids: (number | undefined)[] }> {
  const data = ok(await server.call('friends.get', { user_id: userId }, { http: 'GET' }));
  return { count: data.count, ids: idsOf(data.friends) };
}

test('friends.get shows bans, unbans and changes to the list made after it was read, at once', async () => {
  const server = await start();
  try {
    assert.deepEqual(await friendsOf(server, 1), { count: 2, ids: [3, 2] });
    await admin(server, 'banUser', { user_id: 3 });
    assert.deepEqual(await friendsOf(server, 1), { count: 1, ids: [2] });
    await admin(server, 'unbanUser', { user_id: 3 });
    assert.deepEqual(await friendsOf(server, 1), { count: 2, ids: [3, 2] });
    ok(await server.call('friends.delete', { user_id: 1 }, { token: await sessionFor(server, 2) }));
    assert.deepEqual(await friendsOf(server, 1), { count: 1, ids: [3] });
    await admin(server, 'importWorld', { world: JSON.stringify({ users: [{ user_id: 4, nick: 'Dave' }], friends: [[1, 4]] }) });
    assert.deepEqual((await friendsOf(server, 1)).count, 2);
  } finally {
    await server.close();
  }
});

test(
  'with Redis, a ban or a relation changed on another process shows in friends.get once announced',
  { skip: missing.redis },
  async () => {
    const first = await start({ redis: true });
    try {
      const second = await start({ redis: true, location: first.location, world: undefined });
      try {
        assert.deepEqual(await friendsOf(second, 1), { count: 2, ids: [3, 2] });
        let changed = heard(second, USERS_CHANGED);
        await admin(first, 'banUser', { user_id: 2 });
        await changed;
        assert.deepEqual(await friendsOf(second, 1), { count: 1, ids: [3] });

        changed = heard(second, FRIENDS_CHANGED);
        ok(await first.call('friends.delete', { user_id: 3 }, { token: await sessionFor(first, 1) }));
        await changed;
        assert.deepEqual(await friendsOf(second, 1), { count: 0, ids: [] });
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
    }
  },
);
