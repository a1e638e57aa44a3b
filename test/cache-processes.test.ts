import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/connection.js';
import { DB_KIND, REDIS_URL, newDatabaseLocation } from './helpers.js';
import { missing } from './components.js';
import { api, serve, stopAll, type ServerProcess } from './process-support.js';

const ADMIN_KEY = 'cache-processes-admin-key';
const asAdmin = { 'x-admin-key': ADMIN_KEY };
const PROTO = { item_proto_id: 700, type: 0, quality_id: 1 };

/**
 * Two `serve` processes on one PostgreSQL schema, with or without Redis; the world (one
 * prototype) is imported by the first.
 */
async function twoProcesses(redis: boolean, body: (servers: ServerProcess[]) => Promise<void>): Promise<void> {
  const location = await newDatabaseLocation();
  const dir = mkdtempSync(join(tmpdir(), 'gp-cache-'));
  const servers: ServerProcess[] = [];
  // Opening the database creates the schema the processes are pointed at.
  const db = await openDatabase(location.url, { schema: location.schema });
  try {
    const url = new URL(location.url);
    url.searchParams.set('options', `-c search_path=${location.schema}`);
    writeFileSync(join(dir, 'world.json'), JSON.stringify({ item_protos: [{ ...PROTO, title: 'Before' }] }));
    const env = { DATABASE_URL: url.toString(), ADMIN_KEY, ...(redis ? { REDIS_URL, REDIS_PREFIX: location.redisPrefix } : {}) };
    servers.push(await serve({ ...env, WORLD: join(dir, 'world.json') }));
    servers.push(await serve(env));
    await body(servers);
  } finally {
    await stopAll(servers);
    await db.close();
    rmSync(dir, { recursive: true, force: true });
    await location.dispose();
  }
}

const titleOn = async (server: ServerProcess) =>
  (await api(server, 'data.getItemProtos', { item_proto_ids: String(PROTO.item_proto_id) })).item_protos[0].title as string;

for (const redis of [false, true])
  test(
    `two processes on PostgreSQL ${redis ? 'with' : 'without'} Redis: a catalogue change made through one shows through the other at once`,
    { skip: (DB_KIND !== 'postgres' && 'several processes share a database on PostgreSQL only') || (redis && missing.redis) },
    () =>
      twoProcesses(redis, async ([first, second]) => {
        // Both processes have read the catalogue before the change.
        assert.equal(await titleOn(first!), 'Before');
        assert.equal(await titleOn(second!), 'Before');
        await api(first!, 'admin.upsertItemProto', { item_proto: JSON.stringify({ ...PROTO, title: 'After' }) }, asAdmin);
        assert.equal(await titleOn(first!), 'After');
        assert.equal(await titleOn(second!), 'After');
      }),
  );
