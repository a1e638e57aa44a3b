import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { openDatabase } from '../src/db/connection.js';
import { DB_KIND, REDIS_URL, newDatabaseLocation, processDatabaseEnv } from './helpers.js';
import { api, serve, stopAll, type ServerProcess } from './process-support.js';
import { FeedClient, assertPushedOnceInOrder } from './chat-support.js';
import { ExtwsClient } from './extws-client.js';
import { missing } from './components.js';

const PASSWORD = 'processes-test-password';
const USERS = [1, 2, 3];

async function feedOf(server: ServerProcess): Promise<FeedClient> {
  const socket = new WebSocket(`${server.url.replace(/^http/, 'ws')}/ws?subs=gchat&format=json`);
  const client = new FeedClient(socket);
  await client.next((f) => f.event === 'ready');
  return client;
}

test(
  'three server processes on one PostgreSQL and Redis: concurrent sends appear once each, everywhere, in msg_id order',
  { skip: (DB_KIND !== 'postgres' && 'several processes share a database on PostgreSQL only') || missing.redis },
  async (t) => {
    const location = await newDatabaseLocation();
    const dir = mkdtempSync(join(tmpdir(), 'gp-chat-'));
    const servers: ServerProcess[] = [];
    const db = await openDatabase(location.url, { schema: location.schema, secretKey: location.secretKey });
    try {
      const world = {
        users: USERS.map((id) => ({ user_id: id, email: `u${id}@example.com`, password: PASSWORD, nick: `User ${id}` })),
      };
      writeFileSync(join(dir, 'world.json'), JSON.stringify(world));
      const env = { ...processDatabaseEnv(location), REDIS_URL, REDIS_PREFIX: location.redisPrefix, CHAT_HISTORY: '1000' };
      servers.push(await serve({ ...env, WORLD: join(dir, 'world.json') }));
      servers.push(...(await Promise.all([serve(env), serve(env)])));

      const tokens = await Promise.all(
        USERS.map(
          async (id) => (await api(servers[0], 'auth.signin', { email: `u${id}@example.com`, password: PASSWORD })).access_token as string,
        ),
      );
      const feeds = await Promise.all(servers.map(feedOf));
      // A client of the reference framing (the default of /ws) on another process than the first.
      const extws = await ExtwsClient.connect(servers[1].url.replace(/^http/, 'ws'));

      const perProcess = 50;
      const started = performance.now();
      const sent = await Promise.all(
        servers.flatMap((server, s) =>
          Array.from({ length: perProcess }, async (_, i) => {
            const text = `process ${s} message ${i}`;
            const data = await api(server, 'gchat.send', { access_token: tokens[i % tokens.length], message: text });
            return { msgId: data.msg_id as string, origin: s, text, userId: USERS[i % USERS.length] };
          }),
        ),
      );
      const elapsed = performance.now() - started;
      const ids = sent.map((x) => x.msgId);
      t.diagnostic(`${ids.length} concurrent gchat.send through ${servers.length} processes: ${Math.round(elapsed)} ms`);
      assert.equal(new Set(ids).size, ids.length, 'every msg_id is new');
      const sorted = [...ids].sort();

      const rows = await db.kysely.selectFrom('chat_messages').select('msg_id').orderBy('msg_seq').execute();
      assert.deepEqual(
        rows.map((r) => r.msg_id),
        sorted,
        'the order of appearance is the order of the ids',
      );

      for (const feed of feeds) for (const msgId of ids) await feed.added(msgId);
      const markers = await Promise.all(
        servers.map(
          async (server, s) => (await api(server, 'gchat.send', { access_token: tokens[s], message: `marker ${s}` })).msg_id as string,
        ),
      );
      await assertPushedOnceInOrder(feeds, ids, markers, new Map(sent.map((x) => [x.msgId, x.origin])), servers.length);
      for (const marker of markers) await extws.added(marker);
      const events = extws.events().filter((e) => e.type === 'gchat.add');
      assert.deepEqual(events.map((e) => e.msg_id).sort(), [...ids, ...markers].sort(), 'each message once as an events frame');
      for (let i = 1; i < events.length; i++) assert.ok(events[i]!.id > events[i - 1]!.id, 'event ids always increase');
      // Every process answers gchat.get the same once it has heard of every marker.
      const all = [...ids, ...markers].sort();
      assert.deepEqual(all.slice(0, ids.length), sorted, 'the markers came after everything');
      for (const server of servers)
        assert.deepEqual(
          (await api(server, 'gchat.get', {})).messages.map((m: any) => m.msg_id),
          all,
        );
      const shown = new Map((await api(servers[2], 'gchat.get', {})).messages.map((m: any) => [m.msg_id, m]));
      for (const x of sent) {
        const { type, user_id, text, user_ids_mentioned } = shown.get(x.msgId) as any;
        assert.deepEqual({ type, user_id, text, user_ids_mentioned }, { type: 1, user_id: x.userId, text: x.text, user_ids_mentioned: [] });
      }
      for (const feed of feeds) feed.close();
      extws.close();
    } finally {
      await db.close();
      await stopAll(servers);
      rmSync(dir, { recursive: true, force: true });
      await location.dispose();
    }
  },
);
