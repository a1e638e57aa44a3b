import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ok, startTestServer, type TestServer } from './helpers.js';
import { fails, idsOf, sessionFor } from './social-fixtures.js';
import type { World } from '../src/world/schema.js';

const NOW = Date.UTC(2026, 0, 1) / 1000;

// User 1 was asked by 2..55 (55 newest), by 56 and 57 at the same moment (latest), and by 58,
// globally blocked. User 60 is a bot.
const world: World = {
  users: [
    { user_id: 1, nick: 'Wanted' },
    ...Array.from({ length: 56 }, (_, i) => ({ user_id: i + 2, nick: `asker${i + 2}` })),
    { user_id: 58, nick: 'banned', global_ban: 1 },
    { user_id: 59, nick: 'Nobody asks' },
    { user_id: 60, nick: 'Bot', bot_owner: 59 },
  ],
  friend_requests: [
    ...Array.from({ length: 54 }, (_, i) => ({ from: i + 2, to: 1, ts: NOW - 1000 + i })),
    { from: 56, to: 1, ts: NOW },
    { from: 57, to: 1, ts: NOW },
    { from: 58, to: 1, ts: NOW },
    { from: 1, to: 59, ts: NOW },
  ],
};

let server: TestServer;
let token: string;
before(async () => {
  server = await startTestServer({ world });
  token = await sessionFor(server, 1);
});
after(async () => {
  await server.close();
});

const requests = (params: Record<string, unknown>, as = token) => server.call('friends.getRequests', params, { token: as, http: 'GET' });
const newestFirst = [57, 56, ...Array.from({ length: 54 }, (_, i) => 55 - i)];

test('incoming requests, newest first, each with friendship 3', async () => {
  const data = ok(await requests({ count: 50 }));
  assert.equal(data.count, 56);
  assert.deepEqual(idsOf(data.requests), newestFirst.slice(0, 50));
  assert.ok(data.requests.every((u: { friendship: number; nicks_old?: string[] }) => u.friendship === 3 && Array.isArray(u.nicks_old)));
});

test('the short form carries friendship too', async () => {
  const data = ok(await requests({ type: 'short', count: 1 }));
  assert.deepEqual(data, { count: 56, requests: [{ user_id: 57, nick: 'asker57', gender: 0, avatar: '', friendship: 3 }] });
  const full = ok(await requests({ count: 1 }));
  assert.deepEqual(full.requests, [
    { user_id: 57, nick: 'asker57', gender: 0, avatar: '', nicks_old: [], games: 0, games_wins: 0, xp: 0, xp_level: 0, friendship: 3 },
  ]);
});

test('paging: default 20, count 0, 50, 51, offsets at and past the end', async () => {
  assert.deepEqual(idsOf(ok(await requests({})).requests), newestFirst.slice(0, 20));
  assert.deepEqual(ok(await requests({ count: 0 })), { count: 56, requests: [] });
  fails(await requests({ count: 51 }), 6);
  assert.deepEqual(idsOf(ok(await requests({ offset: 50 })).requests), newestFirst.slice(50));
  assert.deepEqual(ok(await requests({ offset: 56 })), { count: 56, requests: [] });
  assert.deepEqual(ok(await requests({ offset: 500, count: 50 })), { count: 56, requests: [] });
});

test('outgoing requests are listed only on the receiving side', async () => {
  const all = ok(await requests({ count: 50, offset: 0 })).requests.concat(ok(await requests({ count: 50, offset: 50 })).requests);
  assert.equal(idsOf(all).includes(59), false);
  const asked = await sessionFor(server, 59);
  assert.deepEqual(idsOf(ok(await requests({}, asked)).requests), [1]);
});

test('accepting or declining takes a request off the list', async () => {
  ok(await server.call('friends.add', { user_id: 57 }, { token }));
  ok(await server.call('friends.delete', { user_id: 56 }, { token }));
  const data = ok(await requests({ count: 2 }));
  assert.equal(data.count, 54);
  assert.deepEqual(idsOf(data.requests), [55, 54]);
});

test('a token is required; bots may call it', async () => {
  fails(await server.call('friends.getRequests', {}, { http: 'GET' }), 1);
  const bot = await sessionFor(server, 60, { bot: true });
  assert.deepEqual(ok(await requests({}, bot)), { count: 0, requests: [] });
  assert.equal(ok(await server.call('friends.getRequests', { count: 3 }, { token })).requests.length, 3);
});
