import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ok, startTestServer, type TestServer } from './helpers.js';
import { sessionFor } from './social-fixtures.js';
import { connect } from './chat-support.js';

const world = {
  users: [
    { user_id: 1, nick: 'Active' },
    { user_id: 2, nick: 'Watcher' },
    { user_id: 3, nick: 'Always', online: 1 as const },
  ],
};

async function online(server: TestServer, userId: number, type?: string): Promise<boolean> {
  const [user] = ok(await server.call('users.get', { user_id: userId, ...(type ? { type } : {}) }, { http: 'GET' }));
  return user.online === 1;
}

async function withServer(options: Parameters<typeof startTestServer>[0], run: (server: TestServer) => Promise<void>) {
  const server = await startTestServer(options);
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

test('an authenticated request makes a user online for 5 minutes', async () => {
  await withServer({ world }, async (server) => {
    assert.equal(await online(server, 1), false);
    const token = await sessionFor(server, 1);
    ok(await server.call('users.get', { user_id: 2 }, { token }));
    assert.equal(await online(server, 1), true);
    assert.equal(await online(server, 1, 'short'), true);
    server.clock.advance(299);
    assert.equal(await online(server, 1), true);
    server.clock.advance(1);
    assert.equal(await online(server, 1), false);
  });
});

test('every request counts, not only the ones that wrote last_seen', async () => {
  await withServer({ world }, async (server) => {
    const token = await sessionFor(server, 1);
    ok(await server.call('users.get', {}, { token }));
    server.clock.advance(30);
    ok(await server.call('users.get', {}, { token }));
    server.clock.advance(299);
    assert.equal(await online(server, 1), true);
    server.clock.advance(1);
    assert.equal(await online(server, 1), false);
  });
});

test('another server on the same database sees the user online from last_seen', async () => {
  await withServer({ world }, async (first) => {
    const second = await startTestServer({ location: first.location, clock: first.clock });
    try {
      const token = await sessionFor(first, 1);
      assert.equal(await online(second, 1), false);
      ok(await first.call('users.get', {}, { token }));
      // Written with the next batch, within a second: here at once.
      await first.services.presence.write();
      // The second server's profile cache may hold the row from before; it is renewed within 30 s.
      first.clock.advance(30);
      assert.equal(await online(second, 1), true);
      first.clock.advance(270);
      assert.equal(await online(second, 1), false);
    } finally {
      await second.close();
    }
  });
});

test('the online window is configurable', async () => {
  await withServer({ world, config: { onlineWindow: 60 } }, async (server) => {
    const token = await sessionFor(server, 1);
    ok(await server.call('users.get', {}, { token }));
    server.clock.advance(59);
    assert.equal(await online(server, 1), true);
    server.clock.advance(1);
    assert.equal(await online(server, 1), false);
  });
});

test('accounts marked always online are always online', async () => {
  await withServer({ world }, async (server) => {
    assert.equal(await online(server, 3), true);
    server.clock.advance(86400);
    assert.equal(await online(server, 3), true);
  });
});

test('an open realtime connection keeps a user online until it closes', async () => {
  await withServer({ world }, async (server) => {
    const token = await sessionFor(server, 1);
    const client = await connect(server, { token });
    server.clock.advance(3600);
    assert.equal(await online(server, 1), true);
    client.close();
    await client.closed;
    // The server handles the close after the client saw it; wait for that, not for a time.
    while (await online(server, 1)) await sleep(5);
    assert.equal(await online(server, 1), false);
  });
});

test('last_seen of many users is written in one batch, and never moves back', async () => {
  await withServer({ world }, async (server) => {
    const lastSeen = async (userId: number) =>
      (await server.services.db.kysely.selectFrom('users').select('last_seen').where('user_id', '=', userId).executeTakeFirstOrThrow())
        .last_seen;
    const now = Math.floor(server.clock.now() / 1000);
    ok(await server.call('users.get', {}, { token: await sessionFor(server, 1) }));
    ok(await server.call('users.get', {}, { token: await sessionFor(server, 2) }));
    await server.services.presence.write();
    assert.equal(await lastSeen(1), now);
    assert.equal(await lastSeen(2), now);
    // Another process wrote a later time meanwhile: an earlier one due here does not replace it.
    await server.services.db.kysely
      .updateTable('users')
      .set({ last_seen: now + 100 })
      .where('user_id', '=', 2)
      .execute();
    server.clock.advance(60);
    ok(await server.call('users.get', {}, { token: await sessionFor(server, 1) }));
    ok(await server.call('users.get', {}, { token: await sessionFor(server, 2) }));
    await server.services.presence.write();
    assert.equal(await lastSeen(1), now + 60);
    assert.equal(await lastSeen(2), now + 100);
  });
});
