import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { BUS_LOST } from '../src/infra/channels.js';
import { DB_KIND, REDIS_URL, busCurrent, heard, ok, type TestServer } from './helpers.js';
import { signIn, smallWorld, startAdminServer } from './admin-support.js';
import { missing } from './components.js';
import { api, call, withServeProcesses, type ServerProcess } from './process-support.js';

const ADMIN_KEY = 'cache-processes-admin-key';
const asAdmin = { 'x-admin-key': ADMIN_KEY };
const PROTO = { item_proto_id: 700, type: 0, quality_id: 1 };
const USER = { user_id: 1, email: 'user@example.com', password: 'cache-processes-password' };

/**
 * Two `serve` processes on one PostgreSQL schema, with or without Redis; the world (one
 * prototype, one user) is imported by the first.
 */
const twoProcesses = (redis: boolean, body: (servers: ServerProcess[]) => Promise<void>) =>
  withServeProcesses(
    { count: 2, redis, env: { ADMIN_KEY }, world: { item_protos: [{ ...PROTO, title: 'Before' }], users: [{ ...USER, nick: 'Before' }] } },
    body,
  );

/** What a process shows of everything cached: the prototype's title, the user's nick and item count, and whether the token works. */
async function seenOn(server: ServerProcess, token: string) {
  const [protos, users, inventory, own] = await Promise.all([
    api(server, 'data.getItemProtos', { item_proto_ids: String(PROTO.item_proto_id) }),
    api(server, 'users.get', { user_ids: String(USER.user_id) }),
    api(server, 'inventory.get', { user_id: USER.user_id }),
    call(server, 'users.get', { access_token: token }),
  ]);
  return { title: protos.item_protos[0].title, nick: users[0].nick, items: inventory.count, token: own.code };
}

for (const redis of [false, true])
  test(
    `two processes on PostgreSQL ${redis ? 'with' : 'without'} Redis: changes made through one show through the other at once`,
    { skip: (DB_KIND !== 'postgres' && 'several processes share a database on PostgreSQL only') || (redis && missing.redis) },
    () =>
      twoProcesses(redis, async ([first, second]) => {
        const { access_token: token } = await api(first!, 'auth.signin', { email: USER.email, password: USER.password });
        // Both processes have read everything before the changes.
        const before = { title: 'Before', nick: 'Before', items: 0, token: 0 };
        assert.deepEqual(await seenOn(first!, token), before);
        assert.deepEqual(await seenOn(second!, token), before);
        await api(first!, 'admin.upsertItemProto', { item_proto: JSON.stringify({ ...PROTO, title: 'After' }) }, asAdmin);
        await api(first!, 'admin.updateUser', { user_id: USER.user_id, nick: 'After' }, asAdmin);
        await api(first!, 'admin.grantItems', { user_id: USER.user_id, item_proto_id: PROTO.item_proto_id }, asAdmin);
        await api(first!, 'admin.killSessions', { user_id: USER.user_id }, asAdmin);
        const after = { title: 'After', nick: 'After', items: 1, token: 1 };
        assert.deepEqual(await seenOn(first!, token), after);
        assert.deepEqual(await seenOn(second!, token), after);
      }),
  );

/** Entries each in-memory cache of the server holds, by cache name (as /metrics reports them). */
async function cacheEntries(server: TestServer): Promise<Record<string, number>> {
  const gauge = server.services.metrics.registry.getSingleMetric('game_platform_cache_entries');
  if (!gauge) return {};
  const { values } = await gauge.get();
  return Object.fromEntries(values.map((v) => [String(v.labels.cache), v.value]));
}

const EVERY_CACHE = ['catalog', 'friends.bannedUsers', 'friends.relations', 'inventory.answers', 'sessions', 'users.profiles'];

/** Calls that fill every cache: a token used, profiles, relations, the blocked set, an inventory, the catalogue. */
async function fillEveryCache(server: TestServer): Promise<void> {
  const token = await signIn(server, 'alice@example.com');
  ok(await server.call('users.get', { user_ids: '1,2' }, { token, http: 'GET' }));
  ok(await server.call('friends.get', {}, { token, http: 'GET' }));
  ok(await server.call('inventory.get', { user_id: 1 }, { token, http: 'GET' }));
  ok(await server.call('data.getItemProtos', { item_proto_ids: '100' }, { http: 'GET' }));
}

test(
  'one process on SQLite, or any database with Redis: every cache is filled, and a lost bus empties every one',
  { skip: missing.redis },
  async () => {
    const server = await startAdminServer({ world: await smallWorld(), redis: DB_KIND === 'postgres' });
    try {
      await busCurrent(server.services.bus);
      await fillEveryCache(server);
      const filled = await cacheEntries(server);
      assert.deepEqual(Object.keys(filled).sort(), EVERY_CACHE);
      for (const name of EVERY_CACHE) assert.ok(filled[name]! > 0, `${name} holds entries: ${JSON.stringify(filled)}`);
      if (DB_KIND === 'sqlite') await server.services.bus.publish(BUS_LOST, {});
      else {
        // The real loss: Redis drops the connection the bus listens on.
        const lost = heard(server, BUS_LOST);
        const redis = new Redis(REDIS_URL);
        try {
          const name = `${server.location.redisPrefix}bus`;
          const line = String(await redis.client('LIST'))
            .split('\n')
            .find((l) => l.includes(` name=${name} `));
          assert.ok(line, `the bus connection is named ${name}`);
          await redis.client('KILL', 'ID', /^id=(\d+)/.exec(line)![1]!);
        } finally {
          redis.disconnect();
        }
        await lost;
      }
      assert.deepEqual(await cacheEntries(server), Object.fromEntries(EVERY_CACHE.map((name) => [name, 0])));
    } finally {
      await server.close();
    }
  },
);

test(
  'several processes on PostgreSQL without Redis: nothing is cached',
  { skip: DB_KIND !== 'postgres' && 'PostgreSQL only' },
  async () => {
    const server = await startAdminServer({ world: await smallWorld() });
    try {
      await fillEveryCache(server);
      assert.deepEqual(await cacheEntries(server), {});
    } finally {
      await server.close();
    }
  },
);
