import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DB_KIND, migrateTo, newDatabaseLocation, startTestServer } from './helpers.js';
import { openDatabase, type Database } from '../src/db/connection.js';
import { migrationsFor } from '../src/db/migrate.js';

/**
 * Data written as a server at an earlier schema level wrote it: plain SQL on the columns of
 * the first migration, which every later one keeps. A migration that drops or renames one of
 * these columns, or whose columns the application writes beside them, extends this test with
 * the data of its own level (`levels`: the migrations applied).
 */
async function writeEarlyData(db: Database, levels: string[]): Promise<void> {
  const k = db.kysely;
  await sql`insert into users (user_id, email, domain, nick, created_at) values (1, 'early@example.com', 'early', 'Early', 1000), (2, null, null, 'Second', 1000)`.execute(
    k,
  );
  // From 009_user_search on, a server writes each nick's search form with it.
  if (levels.includes('009_user_search'))
    await sql`update users set nick_lower = case user_id when 1 then 'early' else 'second' end`.execute(k);
  await sql`insert into item_protos (item_proto_id, type, quality_id, title) values (101, 0, 1, 'Early card'), (201, 0, 2, 'Early card II')`.execute(
    k,
  );
  for (let i = 0; i < 12; i++)
    await sql`insert into items (user_id, item_proto_id, type, quality_id, ts_owned, state) values (1, 101, 0, 1, ${2000 + i}, 'owned')`.execute(
      k,
    );
  await sql`insert into items (user_id, item_proto_id, type, quality_id, ts_owned, state, ended_at) values (1, 101, 0, 1, 1500, 'revoked', 1600)`.execute(
    k,
  );
  // Admin calls recorded before the audit log named their targets (027_audit_target).
  for (const params of ['{"user_id":1}', '{"user_id":"2","reason":"x"}', '{"user_id":"bob"}', '{"user_id":0}', '{"count":5}'])
    await sql`insert into audit_log (ts, key_fingerprint, ip, action, params, result_code) values (1000, 'k', '127.0.0.1', 'admin.early', ${params}, 0)`.execute(
      k,
    );
}

const names = Object.keys(migrationsFor({ dialect: DB_KIND } as Database));

for (const [index, level] of names.slice(0, -1).entries()) {
  test(`a database made at level ${level}, with data in it, upgrades to ${names.at(-1)} and serves its data`, async () => {
    const location = await newDatabaseLocation();
    try {
      const early = await openDatabase(location.url, { schema: location.schema, poolSize: 2, secretKey: location.secretKey });
      try {
        assert.deepEqual(await migrateTo(early, level, location.schema), names.slice(0, index + 1));
        await writeEarlyData(early, names.slice(0, index + 1));
      } finally {
        await early.close();
      }

      // The server migrates on start.
      const server = await startTestServer({ location });
      try {
        const applied = await server.db.kysely
          .selectFrom('kysely_migration' as never)
          .select('name' as never)
          .execute();
        assert.deepEqual(applied.map((r) => (r as { name: string }).name).sort(), names);
        const users = (await server.call('users.get', { user_ids: '1,2' }, { http: 'GET' })).body;
        assert.equal(users.code, 0);
        assert.deepEqual(
          users.data.map((u: { user_id: number; nick: string }) => [u.user_id, u.nick]),
          [
            [1, 'Early'],
            [2, 'Second'],
          ],
        );
        const found = (await server.call('users.search', { query: 'SEC' }, { http: 'GET' })).body;
        assert.deepEqual(
          found.data.users.map((u: { user_id: number }) => u.user_id),
          [2],
          'nicks written before users.search are found',
        );
        const inventory = (await server.call('inventory.get', { user_id: 1 }, { http: 'GET' })).body;
        assert.equal(inventory.code, 0, JSON.stringify(inventory));
        assert.equal(inventory.data.count, 12, 'the owned items, not the revoked one');
        assert.ok(inventory.data.things.every((t: { item_proto_id: number }) => t.item_proto_id === 101));
        const audit = await server.db.kysely.selectFrom('audit_log').select('target').orderBy('audit_id').execute();
        assert.deepEqual(
          audit.map((row) => row.target),
          ['user:1', 'user:2', null, null, null],
          'entries that named a user by id carry it as their target',
        );
      } finally {
        await server.close();
      }
    } finally {
      await location.dispose();
    }
  });
}
