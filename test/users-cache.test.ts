import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DB_KIND, heard, ok, startTestServer, type StartOptions, type TestServer } from './helpers.js';
import { ProfileCache } from '../src/users/profile-cache.js';
import { Profile, type ProfileRow } from '../src/users/profiles.js';
import { sessionFor } from './social-fixtures.js';
import { missing } from './components.js';
import { FRIENDS_CHANGED, USERS_CHANGED, WORLD_CHANGED } from '../src/infra/channels.js';

const ADMIN_KEY = 'users-cache-test-admin-key';
const world = {
  users: [
    { user_id: 1, nick: 'Alice', domain: 'alice' },
    { user_id: 2, nick: 'Bob', domain: 'bob' },
  ],
};

function start(options: StartOptions = {}): Promise<TestServer> {
  return startTestServer({ world, ...options, config: { adminKey: ADMIN_KEY, ...options.config } });
}

async function admin(server: TestServer, name: string, params: Record<string, unknown>): Promise<void> {
  ok(await server.call(`admin.${name}`, params, { headers: { 'x-admin-key': ADMIN_KEY } }));
}

async function profile(server: TestServer, key: number | string): Promise<any> {
  return ok(await server.call('users.get', { user_id: key }, { http: 'GET' }))[0];
}

test('profiles are cached where every change is heard: SQLite, or any database with Redis', { skip: missing.redis }, async () => {
  const server = await start();
  try {
    await profile(server, 1);
    const cache = server.services.users.profiles;
    if (DB_KIND === 'sqlite') assert.equal(cache?.size, 1);
    else assert.equal(cache, undefined);
  } finally {
    await server.close();
  }
  const clustered = await start({ redis: true });
  try {
    await profile(clustered, 1);
    assert.equal(clustered.services.users.profiles?.size, 1);
  } finally {
    await clustered.close();
  }
});

test('changes made through the admin API show at once: nick, domain, ban, mute, world import', async () => {
  const server = await start();
  try {
    assert.equal((await profile(server, 2)).nick, 'Bob');
    assert.equal((await profile(server, 'bob')).user_id, 2);

    await admin(server, 'updateUser', { user_id: 2, nick: 'Robert', domain: 'robert' });
    const renamed = await profile(server, 2);
    assert.equal(renamed.nick, 'Robert');
    assert.deepEqual(renamed.nicks_old, ['Bob']);
    assert.equal((await profile(server, 'robert')).user_id, 2);
    assert.equal((await profile(server, 'bob')).inactive, 'not_exists');

    await admin(server, 'banUser', { user_id: 2 });
    assert.equal((await profile(server, 2)).inactive, 'global_ban');
    await admin(server, 'unbanUser', { user_id: 2 });
    assert.equal((await profile(server, 2)).nick, 'Robert');

    await admin(server, 'muteUser', { user_id: 2, duration: 600 });
    assert.equal((await profile(server, 2)).muted, 1);

    await admin(server, 'importWorld', { world: JSON.stringify({ users: [{ user_id: 2, nick: 'Imported' }] }) });
    assert.equal((await profile(server, 2)).nick, 'Imported');

    assert.equal((await profile(server, 77)).inactive, 'not_exists');
    await admin(server, 'createUser', {
      nick: 'Newcomer',
      domain: 'newcomer',
      email: 'newcomer@example.com',
      password: 'correct horse battery',
    });
    assert.equal((await profile(server, 'newcomer')).nick, 'Newcomer');
  } finally {
    await server.close();
  }
});

test('with Redis, a change made by another process shows once it is announced', { skip: missing.redis }, async () => {
  const first = await start({ redis: true });
  try {
    const second = await start({ redis: true, location: first.location, world: undefined });
    try {
      assert.equal((await profile(second, 1)).nick, 'Alice');
      let changed = heard(second, USERS_CHANGED);
      await admin(first, 'updateUser', { user_id: 1, nick: 'Alicia' });
      await changed;
      assert.equal((await profile(second, 1)).nick, 'Alicia');

      changed = heard(second, USERS_CHANGED);
      await admin(first, 'banUser', { user_id: 1 });
      await changed;
      assert.equal((await profile(second, 1)).inactive, 'global_ban');

      const reloaded = heard(second, WORLD_CHANGED);
      await admin(first, 'importWorld', { world: JSON.stringify({ users: [{ user_id: 1, nick: 'Again' }] }) });
      await reloaded;
      // A merged entry replaces the stored account, ban included.
      assert.equal((await profile(second, 1)).nick, 'Again');
    } finally {
      await second.close();
    }
  } finally {
    await first.close();
  }
});

function profileWith(fields: Partial<ProfileRow> & Pick<ProfileRow, 'user_id'>): Profile {
  return new Profile({
    domain: null,
    approved: 0,
    nick: '',
    nicks_old: '[]',
    gender: 0,
    avatar: '',
    avatar_key: null,
    profile_cover: null,
    rank: null,
    games: 0,
    games_wins: 0,
    xp: 0,
    xp_level: 0,
    vip: 0,
    moderator: 0,
    superadmin: 0,
    global_ban: 0,
    muted_until: null,
    bot_owner_id: null,
    always_online: 0,
    last_seen: 0,
    ...fields,
  });
}

test('a read that started before an invalidation is not kept', () => {
  const cache = new ProfileCache({ now: () => 0, usable: () => true });
  const before = cache.startFill();
  cache.invalidate([1]);
  cache.storeProfiles(before, [profileWith({ user_id: 1, domain: 'a', nick: 'old' })]);
  assert.equal(cache.get(1), undefined);
  assert.equal(cache.getByDomain('a'), undefined);
  const after = cache.startFill();
  cache.storeProfiles(after, [profileWith({ user_id: 1, domain: 'a', nick: 'new' })]);
  assert.match(cache.get(1)?.text ?? '', /"nick":"new"/);
  assert.match(cache.getByDomain('a')?.text ?? '', /"nick":"new"/);
});

test('getMany sorts ids into cached, at their index, and missing', () => {
  const cache = new ProfileCache({ now: () => 0, usable: () => true });
  cache.storeProfiles(cache.startFill(), [profileWith({ user_id: 1 }), profileWith({ user_id: 3 })]);
  const found: (Profile | undefined)[] = [];
  const missing: number[] = [];
  cache.getMany([3, 2, 1, 4], found, missing);
  assert.deepEqual(
    found.map((profile) => profile?.user_id),
    [3, undefined, 1, undefined],
  );
  assert.deepEqual(missing, [2, 4]);
});

test('cached rows expire after 30 seconds and are not used while Redis is unreachable', () => {
  let now = 0;
  let connected = true;
  const cache = new ProfileCache({ now: () => now, usable: () => connected });
  cache.storeProfiles(cache.startFill(), [profileWith({ user_id: 1 })]);
  now = 29;
  assert.ok(cache.get(1));
  connected = false;
  assert.equal(cache.get(1), undefined);
  connected = true;
  now = 30;
  assert.equal(cache.get(1), undefined);
});

test('expired profiles leave memory: a store forgets them, and so does the sweep, oldest first up to the first still servable', () => {
  let now = 0;
  const cache = new ProfileCache({ now: () => now, usable: () => true });
  cache.storeProfiles(cache.startFill(), [profileWith({ user_id: 1, domain: 'one' }), profileWith({ user_id: 2 })]);
  now = 20;
  cache.storeProfiles(cache.startFill(), [profileWith({ user_id: 3 })]);
  now = 30;
  cache.storeProfiles(cache.startFill(), [profileWith({ user_id: 4 })]);
  assert.equal(cache.size, 2);
  assert.equal(cache.getByDomain('one'), undefined);
  now = 49;
  cache.forgetExpired();
  assert.equal(cache.size, 2);
  now = 50;
  cache.forgetExpired();
  assert.deepEqual([cache.size, cache.get(4)?.user_id], [1, 4]);
});

test('a server forgets the profiles it can no longer serve, without being asked for them again', async () => {
  const server = await start({ world: { users: Array.from({ length: 5 }, (_, i) => ({ user_id: i + 1, nick: `Player ${i + 1}` })) } });
  try {
    const cache = server.services.users.profiles;
    if (cache === undefined) return; // PostgreSQL without Redis keeps no profiles
    for (const id of [1, 2, 3, 4]) await profile(server, id);
    assert.equal(cache.size, 4);
    server.clock.advance(30);
    assert.equal((await profile(server, 5)).nick, 'Player 5');
    assert.equal(cache.size, 1);
  } finally {
    await server.close();
  }
});

test('with Redis, a relation changed on another process shows in friendship once announced', { skip: missing.redis }, async () => {
  const first = await start({ redis: true });
  try {
    const second = await start({ redis: true, location: first.location, world: undefined });
    try {
      const alice = await sessionFor(first, 1);
      const bob = await sessionFor(first, 2);
      const seenBySecond = async () => ok(await second.call('users.get', { user_id: 2 }, { token: alice, http: 'GET' }))[0].friendship;
      assert.equal(await seenBySecond(), 0);

      let changed = heard(second, FRIENDS_CHANGED);
      ok(await first.call('friends.add', { user_id: 2 }, { token: alice }));
      await changed;
      assert.equal(await seenBySecond(), 2);

      changed = heard(second, FRIENDS_CHANGED);
      ok(await first.call('friends.add', { user_id: 1 }, { token: bob }));
      await changed;
      assert.equal(await seenBySecond(), 1);

      changed = heard(second, FRIENDS_CHANGED);
      ok(await first.call('blacklist.add', { user_id: 1 }, { token: bob }));
      await changed;
      assert.equal(await seenBySecond(), 5);

      const reloaded = heard(second, WORLD_CHANGED);
      await admin(first, 'importWorld', { world: JSON.stringify({ users: [{ user_id: 3, nick: 'Carol' }], friends: [[1, 3]] }) });
      await reloaded;
      assert.equal(ok(await second.call('users.get', { user_id: 3 }, { token: alice, http: 'GET' }))[0].friendship, 1);
    } finally {
      await second.close();
    }
  } finally {
    await first.close();
  }
});

test('the cache is bounded by memory: 100,000 profiles of typical size are all kept, far larger ones push the oldest out', () => {
  const cache = new ProfileCache({ now: () => 0, usable: () => true });
  const typical = (id: number) =>
    profileWith({ user_id: id, domain: `player${id}`, nick: `Player ${id}`, avatar: `https://cdn.example.com/avatars/${id}.png` });
  const fill = cache.startFill();
  for (let id = 1; id <= 100_000; id++) cache.storeProfiles(fill, [typical(id)]);
  assert.equal(cache.size, 100_000);
  assert.equal(cache.getByDomain('player1')?.user_id, 1);

  const wordy = (id: number) =>
    profileWith({ user_id: id, nicks_old: JSON.stringify(Array.from({ length: 100 }, (_, i) => `former nick ${i}`)) });
  for (let id = 100_001; id <= 200_000; id++) cache.storeProfiles(fill, [wordy(id)]);
  assert.ok(cache.size < 100_000);
  assert.equal(cache.get(1), undefined);
  assert.equal(cache.getByDomain('player1'), undefined);
  assert.equal(cache.get(200_000)?.user_id, 200_000);
});
