import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ok, startTestServer, type TestServer } from './helpers.js';
import { sessionFor } from './social-fixtures.js';

// User 1 has one relation of each kind: with 2 friends, asked 3, blocked 4, blocked by and
// blocking 5, nothing with 6, blocked by 7, asked by 8.
const world = {
  users: Array.from({ length: 8 }, (_, i) => ({ user_id: i + 1, nick: `user${i + 1}` })),
  friends: [[1, 2]] as [number, number][],
  friend_requests: [
    { from: 1, to: 3 },
    { from: 8, to: 1 },
  ],
  blocks: [
    { user_id: 1, blocked_user_id: 4 },
    { user_id: 1, blocked_user_id: 5 },
    { user_id: 5, blocked_user_id: 1 },
    { user_id: 7, blocked_user_id: 1 },
  ],
};

let server: TestServer;
before(async () => {
  server = await startTestServer({ world });
});
after(async () => {
  await server.close();
});

async function friendshipSeenBy(viewer: number, others: number[]): Promise<number[]> {
  const token = await sessionFor(server, viewer);
  const users = ok(await server.call('users.get', { user_ids: others.join(',') }, { http: 'GET', token }));
  return users.map((u: { friendship?: number }) => u.friendship);
}

test('friendship values 0 to 6 as user 1 sees the others', async () => {
  assert.deepEqual(await friendshipSeenBy(1, [2, 3, 4, 5, 6, 7, 8]), [1, 2, 4, 6, 0, 5, 3]);
});

test('friendship values as the others see user 1', async () => {
  const expected: Record<number, number> = { 2: 1, 3: 3, 4: 5, 5: 6, 6: 0, 7: 4, 8: 2 };
  for (const [viewer, value] of Object.entries(expected)) {
    assert.deepEqual(await friendshipSeenBy(Number(viewer), [1]), [value], `as user ${viewer} sees user 1`);
  }
});

test('the same values come through the HTTP methods that change relations', async () => {
  const fresh = await startTestServer({ world: { users: world.users } });
  try {
    const token = new Map<number, string>();
    for (const { user_id } of world.users) token.set(user_id, await sessionFor(fresh, user_id));
    const act = async (method: string, by: number, userId: number) =>
      ok(await fresh.call(method, { user_id: userId }, { token: token.get(by) }));
    await act('friends.add', 1, 2);
    await act('friends.add', 2, 1);
    await act('friends.add', 1, 3);
    await act('blacklist.add', 1, 4);
    await act('blacklist.add', 1, 5);
    await act('blacklist.add', 5, 1);
    await act('blacklist.add', 7, 1);
    await act('friends.add', 8, 1);
    const seen = ok(await fresh.call('users.get', { user_ids: '2,3,4,5,6,7,8' }, { token: token.get(1) }));
    assert.deepEqual(
      seen.map((u: { friendship: number }) => u.friendship),
      [1, 2, 4, 6, 0, 5, 3],
    );
    const back: number[] = [];
    for (const viewer of [2, 3, 4, 5, 6, 7, 8])
      back.push(ok(await fresh.call('users.get', { user_id: 1 }, { token: token.get(viewer) }))[0].friendship);
    assert.deepEqual(back, [1, 3, 5, 6, 0, 4, 2]);
  } finally {
    await fresh.close();
  }
});
