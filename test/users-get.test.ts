import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ok, startTestServer, type TestServer } from './helpers.js';
import { fails, idsOf, sessionFor } from './social-fixtures.js';
import type { World } from '../src/world/schema.js';

const NOW = Date.UTC(2026, 0, 1) / 1000;

const world: World = {
  users: [
    {
      user_id: 1,
      domain: 'alice',
      nick: 'Alice',
      nicks_old: ['Al', 'Ally'],
      gender: 1,
      avatar: 'https://img.example/a.png',
      avatar_key: 'a-key',
      profile_cover: 'https://img.example/cover.png',
      approved: 1,
      vip: 1,
      moderator: 1,
      superadmin: 1,
      rank: { hidden: 1 },
      games: 120,
      games_wins: 61,
      xp: 5000,
      xp_level: 12,
      muted_until: NOW + 3600,
      online: 1,
    },
    { user_id: 2, nick: 'Bob' },
    { user_id: 3, nick: 'Robo', bot_owner: 2, domain: 'robo' },
    { user_id: 4, nick: 'Banned', domain: 'banned', global_ban: 1 },
    { user_id: 5, nick: 'Eve' },
    { user_id: 6, nick: 'Blank', avatar_key: '', profile_cover: '' },
    { user_id: 7, nick: 'Quinn', rank: { qual: 3 } },
    { user_id: 8, nick: 'Exa', rank: { expired: 1 } },
    { user_id: 9, nick: 'Vera', rank: { id: 14, pts: 2310 } },
  ],
};

let server: TestServer;
before(async () => {
  server = await startTestServer({ world });
});
after(async () => {
  await server.close();
});

const get = (params: Record<string, unknown>, token?: string) => server.call('users.get', params, { http: 'GET', token });

test('the full form carries exactly the documented fields', async () => {
  const [alice] = ok(await get({ user_id: 1 }));
  assert.deepEqual(alice, {
    user_id: 1,
    domain: 'alice',
    approved: 1,
    nick: 'Alice',
    gender: 1,
    avatar: 'https://img.example/a.png',
    avatar_key: 'a-key',
    online: 1,
    rank: { hidden: 1 },
    vip: 1,
    moderator: 1,
    superadmin: 1,
    nicks_old: ['Al', 'Ally'],
    profile_cover: 'https://img.example/cover.png',
    games: 120,
    games_wins: 61,
    xp: 5000,
    xp_level: 12,
    muted: 1,
  });
});

test('the short form carries exactly the short fields', async () => {
  const [alice] = ok(await get({ user_id: 1, type: 'short' }));
  assert.deepEqual(alice, {
    user_id: 1,
    domain: 'alice',
    approved: 1,
    nick: 'Alice',
    gender: 1,
    avatar: 'https://img.example/a.png',
    avatar_key: 'a-key',
    online: 1,
    rank: { hidden: 1 },
    vip: 1,
    moderator: 1,
    superadmin: 1,
  });
});

test('flags that are 0 are omitted; nicks_old and the game counters stay in the full form', async () => {
  const [bob, eve] = ok(await get({ user_ids: '2,5' }));
  assert.deepEqual(bob, { user_id: 2, nick: 'Bob', gender: 0, avatar: '', nicks_old: [], games: 0, games_wins: 0, xp: 0, xp_level: 0 });
  assert.equal('rank' in eve, false, 'no rank set: no rank key');
  const [bobShort] = ok(await get({ user_id: 2, type: 'short' }));
  assert.deepEqual(bobShort, { user_id: 2, nick: 'Bob', gender: 0, avatar: '' });
});

test('a rank shows in the form it was set, in both forms', async () => {
  for (const type of ['full', 'short']) {
    const users = ok(await get({ user_ids: '1,7,8,9,5', type }));
    assert.deepEqual(
      users.map((u: { rank?: unknown }) => u.rank),
      [{ hidden: 1 }, { qual: 3 }, { expired: 1 }, { id: 14, pts: 2310 }, undefined],
      type,
    );
  }
});

test('an empty avatar_key or profile_cover is omitted', async () => {
  const [blank] = ok(await get({ user_id: 6 }));
  assert.deepEqual(blank, { user_id: 6, nick: 'Blank', gender: 0, avatar: '', nicks_old: [], games: 0, games_wins: 0, xp: 0, xp_level: 0 });
  const [short] = ok(await get({ user_id: 6, type: 'short' }));
  assert.deepEqual(short, { user_id: 6, nick: 'Blank', gender: 0, avatar: '' });
});

test('bots show bot and bot_owner', async () => {
  const [robo] = ok(await get({ user_id: 'robo', type: 'short' }));
  assert.deepEqual(robo, { user_id: 3, domain: 'robo', nick: 'Robo', gender: 0, avatar: '', bot: 1, bot_owner: 2 });
});

test('any type other than short gives the full form', async () => {
  for (const type of ['full', 'SHORT', 'whatever', '']) {
    const [bob] = ok(await get({ user_id: 2, type }));
    assert.deepEqual(bob.nicks_old, [], `type=${type}`);
  }
});

test('unknown ids and domains and globally blocked accounts give placeholders in place', async () => {
  const users = ok(await get({ user_ids: '999,2,nobody-here,banned,4' }));
  assert.deepEqual(users, [
    { user_id: 999, nick: 'Unknown user', avatar: '', avatar_key: '', inactive: 'not_exists' },
    { user_id: 2, nick: 'Bob', gender: 0, avatar: '', nicks_old: [], games: 0, games_wins: 0, xp: 0, xp_level: 0 },
    { domain: 'nobody-here', nick: 'Unknown user', avatar: '', avatar_key: '', inactive: 'not_exists' },
    { user_id: 4, domain: 'banned', nick: 'Blocked account', avatar: '', avatar_key: '', inactive: 'global_ban' },
  ]);
  const short = ok(await get({ user_ids: '4,999', type: 'short' }));
  assert.deepEqual(short, [
    { user_id: 4, domain: 'banned', nick: 'Blocked account', avatar: '', avatar_key: '', inactive: 'global_ban' },
    { user_id: 999, nick: 'Unknown user', avatar: '', avatar_key: '', inactive: 'not_exists' },
  ]);
});

test('a placeholder is given once however often its id or domain is repeated', async () => {
  const users = ok(await get({ user_id: 999, user_ids: '999,nobody-here,4,999,nobody-here,banned,4' }));
  assert.deepEqual(users, [
    { user_id: 999, nick: 'Unknown user', avatar: '', avatar_key: '', inactive: 'not_exists' },
    { domain: 'nobody-here', nick: 'Unknown user', avatar: '', avatar_key: '', inactive: 'not_exists' },
    { user_id: 4, domain: 'banned', nick: 'Blocked account', avatar: '', avatar_key: '', inactive: 'global_ban' },
  ]);
});

test('results follow the request order, user_id first, duplicates removed', async () => {
  const users = ok(await get({ user_id: 5, user_ids: '2,alice,5,1,2,robo,3' }));
  assert.deepEqual(idsOf(users), [5, 2, 1, 3]);
  const posted = ok(await server.call('users.get', { user_ids: [3, 'alice'] }));
  assert.deepEqual(idsOf(posted), [3, 1]);
  const form = ok(await server.call('users.get', { user_ids: '2,1' }, { form: true }));
  assert.deepEqual(idsOf(form), [2, 1]);
});

test('at most 50 users in all: more answers 6', async () => {
  const fifty = Array.from({ length: 50 }, (_, i) => i + 1).join(',');
  assert.equal(ok(await get({ user_ids: fifty })).length, 50);
  const fiftyOne = Array.from({ length: 51 }, (_, i) => i + 1).join(',');
  fails(await get({ user_ids: fiftyOne }), 6);
  fails(await get({ user_id: 100, user_ids: fifty }), 6);
  // The limit counts the elements as sent, repeated ones included.
  fails(await get({ user_ids: Array.from({ length: 51 }, () => 2).join(',') }), 6);
  fails(await server.call('users.get', { user_ids: Array.from({ length: 51 }, (_, i) => i + 1) }), 6);
  assert.deepEqual(idsOf(ok(await get({ user_ids: Array.from({ length: 50 }, () => 2).join(',') }))), [2]);
});

test('ids 0 or negative answer 2', async () => {
  fails(await get({ user_id: 0 }), 2);
  fails(await get({ user_id: -3 }), 2);
  fails(await get({ user_ids: '1,0' }), 2);
  fails(await get({ user_ids: '1,-2' }), 2);
  fails(await server.call('users.get', { user_id: 0 }), 2);
});

test('without ids: the caller, whose own profile has no friendship; without a valid token: 1', async () => {
  const token = await sessionFor(server, 2);
  const [me] = ok(await get({}, token));
  assert.equal(me.user_id, 2);
  assert.equal('friendship' in me, false);
  const [again] = ok(await get({ user_ids: '' }, token));
  assert.equal(again.user_id, 2);
  fails(await get({}), 1);
  fails(await get({ user_ids: '' }), 1);
  fails(await get({ user_id: 1 }, 'x'.repeat(43)), 1);
  const bot = await sessionFor(server, 3, { bot: true });
  assert.equal(ok(await get({}, bot))[0].user_id, 3);
});

test('friendship appears only in the full form, for a signed-in caller asking about others', async () => {
  const token = await sessionFor(server, 2);
  const [alice, bob] = ok(await get({ user_ids: '1,2' }, token));
  assert.equal(alice.friendship, 0);
  assert.equal('friendship' in bob, false);
  const [short] = ok(await get({ user_id: 1, type: 'short' }, token));
  assert.equal('friendship' in short, false);
  const [anonymous] = ok(await get({ user_id: 1 }));
  assert.equal('friendship' in anonymous, false);
  const [placeholder] = ok(await get({ user_id: 4 }, token));
  assert.equal('friendship' in placeholder, false);
});

test('muted is shown only while the mute lasts', async () => {
  const clockServer = await startTestServer({ world: { users: [{ user_id: 1, nick: 'M', muted_until: NOW + 60 }] } });
  try {
    assert.equal(ok(await clockServer.call('users.get', { user_id: 1 }))[0].muted, 1);
    clockServer.clock.advance(61);
    assert.equal('muted' in ok(await clockServer.call('users.get', { user_id: 1 }))[0], false);
  } finally {
    await clockServer.close();
  }
});
