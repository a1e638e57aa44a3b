import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ok, startTestServer, type Answer, type TestServer } from './helpers.js';
import { sessionFor } from './social-fixtures.js';

const PAIRS = 30;
// Pair i is users 2i+1 and 2i+2.
const pairs = Array.from({ length: PAIRS }, (_, i) => [2 * i + 1, 2 * i + 2] as const);
const world = { users: Array.from({ length: PAIRS * 2 }, (_, i) => ({ user_id: i + 1, nick: `user${i + 1}` })) };

let server: TestServer;
const tokens = new Map<number, string>();
before(async () => {
  server = await startTestServer({ world });
  for (const { user_id } of world.users) tokens.set(user_id, await sessionFor(server, user_id));
});
after(async () => {
  await server.close();
});

const call = (method: string, by: number, userId: number) => server.call(method, { user_id: userId }, { token: tokens.get(by) });

/** The graph's invariants, checked on the stored rows. */
async function assertConsistent(): Promise<void> {
  const k = server.db.kysely;
  const friendships = await k.selectFrom('friendships').select(['user_id', 'friend_id']).execute();
  const requests = await k.selectFrom('friend_requests').select(['from_user_id', 'to_user_id']).execute();
  const blocks = await k.selectFrom('blocks').select(['user_id', 'blocked_user_id']).execute();
  const friendKeys = new Set(friendships.map((f) => `${f.user_id}>${f.friend_id}`));
  const requestKeys = new Set(requests.map((r) => `${r.from_user_id}>${r.to_user_id}`));
  for (const f of friendships) {
    assert.ok(friendKeys.has(`${f.friend_id}>${f.user_id}`), `friendship ${f.user_id}-${f.friend_id} is stored both ways`);
    assert.ok(!requestKeys.has(`${f.user_id}>${f.friend_id}`), `friends ${f.user_id}-${f.friend_id} have no pending request`);
  }
  for (const r of requests)
    assert.ok(!requestKeys.has(`${r.to_user_id}>${r.from_user_id}`), `requests between ${r.from_user_id} and ${r.to_user_id} never cross`);
  for (const b of blocks) {
    assert.ok(!friendKeys.has(`${b.user_id}>${b.blocked_user_id}`), `blocked ${b.user_id}-${b.blocked_user_id} are not friends`);
    assert.ok(!requestKeys.has(`${b.user_id}>${b.blocked_user_id}`) && !requestKeys.has(`${b.blocked_user_id}>${b.user_id}`));
  }
}

const succeeded = (answers: Answer[]) => answers.forEach((a) => ok(a));

test('two users asking each other at the same moment end up friends, every pair', async () => {
  succeeded(await Promise.all(pairs.flatMap(([a, b]) => [call('friends.add', a, b), call('friends.add', b, a)])));
  await assertConsistent();
  const friendships = await server.db.kysely.selectFrom('friendships').select(['user_id', 'friend_id']).execute();
  assert.equal(friendships.length, PAIRS * 2);
  assert.equal((await server.db.kysely.selectFrom('friend_requests').selectAll().execute()).length, 0);
  for (const [a, b] of pairs) {
    const [user] = ok(await server.call('users.get', { user_id: b }, { token: tokens.get(a), http: 'GET' }));
    assert.equal(user.friendship, 1);
  }
});

test('deleting while the other side asks again leaves a consistent graph', async () => {
  succeeded(await Promise.all(pairs.flatMap(([a, b]) => [call('friends.delete', a, b), call('friends.add', b, a), call('friends.add', b, a)])));
  await assertConsistent();
  const friendships = await server.db.kysely.selectFrom('friendships').selectAll().execute();
  assert.equal(friendships.length, 0);
  succeeded(await Promise.all(pairs.flatMap(([a, b]) => [call('friends.delete', a, b), call('friends.delete', b, a)])));
  assert.equal((await server.db.kysely.selectFrom('friend_requests').selectAll().execute()).length, 0);
});

test('the same request sent many times at once is stored once', async () => {
  const [a, b] = pairs[0];
  succeeded(await Promise.all(Array.from({ length: 10 }, () => call('friends.add', a, b))));
  const requests = await server.db.kysely.selectFrom('friend_requests').selectAll().where('from_user_id', '=', a).execute();
  assert.equal(requests.length, 1);
  ok(await call('friends.delete', a, b));
});

test('blocking while the other side asks or accepts ends with the block alone', async () => {
  succeeded(await Promise.all(pairs.slice(0, PAIRS / 2).flatMap(([a, b]) => [call('friends.add', a, b), call('friends.add', b, a)])));
  const answers = await Promise.all(pairs.flatMap(([a, b]) => [call('blacklist.add', a, b), call('friends.add', b, a)]));
  answers.forEach((answer, i) => {
    if (i % 2 === 0) ok(answer);
    else assert.ok([0, 107].includes(answer.body.code), JSON.stringify(answer.body));
  });
  await assertConsistent();
  assert.equal((await server.db.kysely.selectFrom('friendships').selectAll().execute()).length, 0);
  assert.equal((await server.db.kysely.selectFrom('friend_requests').selectAll().execute()).length, 0);
  assert.equal((await server.db.kysely.selectFrom('blocks').selectAll().execute()).length, PAIRS);
});
