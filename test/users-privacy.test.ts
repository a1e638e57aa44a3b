import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ok, startTestServer, type TestServer } from './helpers.js';
import { fails, sessionFor } from './social-fixtures.js';
import type { World } from '../src/world/schema.js';

// 1 owns an inventory; 2 is their friend, 3 a stranger, 4 asked 1 to be friends, 5 a bot of 1;
// 6 was set to `nobody` by the world file.
const world: World = {
  users: [
    { user_id: 1, nick: 'Owner' },
    { user_id: 2, nick: 'Friend' },
    { user_id: 3, nick: 'Stranger' },
    { user_id: 4, nick: 'Asker' },
    { user_id: 5, nick: 'Bot', bot_owner: 1 },
    { user_id: 6, nick: 'Private', inventory_privacy: 'nobody' },
  ],
  friends: [[1, 2]],
  friend_requests: [{ from: 4, to: 1 }],
};

const SETTING_DEFAULTS = {
  trades_income: 1,
  trades_income_from_friends: 0,
  trades_income_gifts: 1,
  trades_income_gifts_autoaccept: 0,
  messages: 'everyone',
};

let server: TestServer;
const tokens = new Map<number, string>();
before(async () => {
  server = await startTestServer({ world });
  for (const id of [1, 2, 3, 4, 6]) tokens.set(id, await sessionFor(server, id));
});
after(async () => {
  await server.close();
});

const inventory = (ownerId: number, viewer?: number) =>
  server.call('inventory.get', { user_id: ownerId }, { http: 'GET', token: viewer === undefined ? undefined : tokens.get(viewer) });
const setPrivacy = (by: number, value: unknown) => server.call('account.setPrivacy', { inventory: value }, { token: tokens.get(by) });

/** Which of anonymous, owner, friend, stranger, asker may read user 1's inventory. */
async function readers(): Promise<Record<string, boolean>> {
  const viewers: [string, number | undefined][] = [
    ['anonymous', undefined],
    ['owner', 1],
    ['friend', 2],
    ['stranger', 3],
    ['asker', 4],
  ];
  const out: Record<string, boolean> = {};
  for (const [name, viewer] of viewers) {
    const answer = await inventory(1, viewer);
    assert.ok([0, 701].includes(answer.body.code), JSON.stringify(answer.body));
    out[name] = answer.body.code === 0;
  }
  return out;
}

test('everyone (the default) lets anyone read the inventory', async () => {
  assert.deepEqual(ok(await server.call('account.getPrivacy', {}, { token: tokens.get(1) })), {
    ...SETTING_DEFAULTS,
    inventory: 'everyone',
  });
  assert.deepEqual(await readers(), { anonymous: true, owner: true, friend: true, stranger: true, asker: true });
});

test('friends: only the owner and their friends', async () => {
  assert.deepEqual((await setPrivacy(1, 'friends')).body, { code: 0 });
  assert.deepEqual(ok(await server.call('account.getPrivacy', {}, { token: tokens.get(1), http: 'GET' })), {
    ...SETTING_DEFAULTS,
    inventory: 'friends',
  });
  assert.deepEqual(await readers(), { anonymous: false, owner: true, friend: true, stranger: false, asker: false });
  ok(await server.call('friends.add', { user_id: 4 }, { token: tokens.get(1) }));
  assert.equal((await inventory(1, 4)).body.code, 0);
  ok(await server.call('friends.delete', { user_id: 4 }, { token: tokens.get(1) }));
  fails(await inventory(1, 4), 701);
});

test('nobody: only the owner', async () => {
  ok(await setPrivacy(1, 'nobody'));
  assert.deepEqual(await readers(), { anonymous: false, owner: true, friend: false, stranger: false, asker: false });
  ok(await setPrivacy(1, 'everyone'));
  assert.deepEqual(await readers(), { anonymous: true, owner: true, friend: true, stranger: true, asker: true });
});

test('the world file sets privacy too', async () => {
  fails(await inventory(6, 3), 701);
  assert.equal((await inventory(6, 6)).body.code, 0);
  assert.deepEqual(ok(await server.call('account.getPrivacy', {}, { token: tokens.get(6) })), { ...SETTING_DEFAULTS, inventory: 'nobody' });
});

test('bad values 2, no token 1, bots 4', async () => {
  fails(await setPrivacy(1, 'strangers'), 2);
  assert.deepEqual((await server.call('account.setPrivacy', {}, { token: tokens.get(1) })).body, { code: 0 });
  fails(await server.call('account.setPrivacy', { inventory: 'nobody' }), 1);
  fails(await server.call('account.getPrivacy', {}), 1);
  const bot = await sessionFor(server, 5, { bot: true });
  fails(await server.call('account.setPrivacy', { inventory: 'nobody' }, { token: bot }), 4);
  assert.deepEqual(ok(await server.call('account.getPrivacy', {}, { token: tokens.get(1) })), {
    ...SETTING_DEFAULTS,
    inventory: 'everyone',
  });
});
