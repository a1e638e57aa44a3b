import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DB_KIND, newDatabaseLocation, startTestServer, type TestServer } from './helpers.js';
import { callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { revokeItem } from '../src/inventory/grants.js';
import type { World } from '../src/world/schema.js';
import { ownedItemIndexesMigration } from '../src/db/migrations/003_owned_item_indexes.js';
import { rankFormsMigration } from '../src/db/migrations/005_rank_forms.js';

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);
const CARDS = range(100, 30); // proto 101, class 1
const STOCK = range(200, 3); // proto 801, stock class

const world: World = {
  ...catalogWorld,
  users: [user(1), user(2)],
  items: [
    ...CARDS.map((item_id, i) => ({ item_id, user_id: 1, item_proto_id: 101, ts_owned: 1000 + (i % 7) })),
    ...STOCK.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 801, ts_owned: 900 })),
    { item_id: 300, user_id: 2, item_proto_id: 201, ts_owned: 500 },
  ],
};

/** Puts back the item indexes as they were before 003_owned_item_indexes. */
async function downgradeItemIndexes(server: TestServer): Promise<void> {
  const db = server.db.kysely;
  for (const index of ['items_by_time', 'items_by_quality', 'items_craft']) await sql`drop index ${sql.id(index)}`.execute(db);
  await sql`create index items_by_time on items (user_id, state, ts_owned, item_id)`.execute(db);
  await sql`create index items_by_quality on items (user_id, state, quality_id, ts_owned, item_id)`.execute(db);
  await sql`create index items_craft on items (craft_id)`.execute(db);
}

async function indexDefinition(server: TestServer, name: string): Promise<string> {
  const query =
    DB_KIND === 'sqlite'
      ? sql<{ definition: string }>`select sql as definition from sqlite_master where type = 'index' and name = ${name}`
      : sql<{
          definition: string;
        }>`select indexdef as definition from pg_indexes where schemaname = current_schema() and indexname = ${name}`;
  return (await query.execute(server.db.kysely)).rows[0].definition;
}

test('a database from before the indexes of owned items answers the same after the upgrade, and crafts on', async () => {
  const location = await newDatabaseLocation();
  try {
    const before = await startTestServer({ world, location });
    let answers: unknown[];
    try {
      await downgradeItemIndexes(before);
      const token = await tokenFor(before, 1);
      // Consumed items and a revoked one, written while the indexes still held every state.
      await callOk(before, 'inventory.craft', { item_ids: CARDS.slice(0, 10).join(',') }, { token });
      await revokeItem(before.services, CARDS[10], null);
      answers = await inventoryAnswers(before, token);
      // The upgrade, as `migrate` runs it on the stored database (later migrations have run already).
      await ownedItemIndexesMigration().up(before.db.kysely);
    } finally {
      await before.close();
    }

    const after = await startTestServer({ location });
    try {
      assert.match(await indexDefinition(after, 'items_by_time'), /where \(?state = 'owned'/i);
      assert.match(await indexDefinition(after, 'items_by_quality'), /where \(?state = 'owned'/i);
      assert.match(await indexDefinition(after, 'items_craft'), /where \(?craft_id is not null/i);
      const token = await tokenFor(after, 1);
      assert.deepEqual(await inventoryAnswers(after, token), answers);

      const crafted = await callOk(after, 'inventory.craft', { item_ids: CARDS.slice(11, 21).join(',') }, { token });
      const byTime = await callOk(after, 'inventory.get', { count: 3 }, { token, http: 'GET' });
      assert.equal(byTime.things[0].item_id, crafted.item.item_id);
    } finally {
      await after.close();
    }
  } finally {
    await location.dispose();
  }
});

/** Every way of listing user 1's and user 2's items, as answered. */
async function inventoryAnswers(server: TestServer, token: string): Promise<unknown[]> {
  const answers: unknown[] = [];
  for (const order of ['time', 'quality'])
    for (const params of [{}, { include_stock: 1 }, { count: 5 }, { count: 5, include_stock: 1 }])
      answers.push(await callOk(server, 'inventory.get', { order, ...params }, { token, http: 'GET' }));
  answers.push(await callOk(server, 'inventory.get', { user_id: 2 }, { http: 'GET' }));
  return answers;
}

test('a database from before the four rank forms shows each stored rank in the form it means, and no rank for the rest', async () => {
  const location = await newDatabaseLocation();
  try {
    const stored: [number, string | null][] = [
      [1, '{"hidden":0}'],
      [2, '{"hidden":1,"season":3}'],
      [3, '{"hidden":0,"id":4,"pts":900}'],
      [4, '{"qual":2}'],
      [5, '{"expired":true}'],
      [6, 'not json'],
      [7, null],
    ];
    const before = await startTestServer({ world: { users: stored.map(([id]) => user(id)) }, location });
    try {
      for (const [id, rank] of stored) await before.db.kysely.updateTable('users').set({ rank }).where('user_id', '=', id).execute();
      await rankFormsMigration().up(before.db.kysely);
    } finally {
      await before.close();
    }

    const after = await startTestServer({ location });
    try {
      const rows = await after.db.kysely.selectFrom('users').select(['user_id', 'rank']).orderBy('user_id').execute();
      assert.deepEqual(
        rows.map((r) => r.rank),
        [null, '{"hidden":1}', '{"id":4,"pts":900}', '{"qual":2}', '{"expired":1}', null, null],
      );
      const users = await callOk(after, 'users.get', { user_ids: stored.map(([id]) => id).join(',') }, { http: 'GET' });
      assert.deepEqual(
        users.map((u: { rank?: unknown }) => u.rank),
        [undefined, { hidden: 1 }, { id: 4, pts: 900 }, { qual: 2 }, { expired: 1 }, undefined, undefined],
      );
    } finally {
      await after.close();
    }
  } finally {
    await location.dispose();
  }
});
