import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DB_KIND, queryPlan, startTestServer, type TestServer } from './helpers.js';
import { catalogWorld, user } from './item-fixtures.js';
import { openTradesHolding } from '../src/trades/queries.js';
import type { World } from '../src/world/schema.js';

/*
 * The open trades holding some items are found from the items' entries in trade_items, never
 * through the index of open trades (trades_open_by_age): after many trades have left `open`, that
 * index holds an entry for each of them on PostgreSQL until the table is vacuumed.
 */

const TRADES = 3000;
const world: World = {
  ...catalogWorld,
  users: [user(1), user(2)],
  items: Array.from({ length: 20 }, (_, i) => ({ item_id: 100 + i, user_id: 1, item_proto_id: 101, ts_owned: 1000 + i })),
};

let server: TestServer;
before(async () => {
  server = await startTestServer({ world });
  const db = server.db.kysely;
  // Many trades made and accepted (each once open), and a few still open, all recent.
  await sql`with recursive g (n) as (select 1 union all select n + 1 from g where n < ${TRADES})
    insert into trades (trade_id, user_id_from, user_id_to, status, create_time) select n, 1, 2, 0, 2000000000 from g`.execute(db);
  await sql`insert into trade_items (trade_id, item_id, side, user_id, item_proto_id, ts_owned, ts_can_trade)
    select trade_id, 100 + trade_id % 20, 0, 1, 101, 1000, 0 from trades`.execute(db);
  await sql`update trades set status = 1 where trade_id > 5`.execute(db);
  await sql`analyze`.execute(db);
});
after(() => server.close());

test('the open trades holding some items are found from trade_items and by id, not through the index of open trades', async () => {
  const query = openTradesHolding(server.db.kysely, DB_KIND, [100, 101, 102], 1_900_000_000);
  const found = await query.execute();
  assert.deepEqual(
    found.map((t) => t.trade_id),
    [1, 2],
  );
  const plan = await queryPlan(server, query.compile());
  assert.ok(!plan.includes('trades_open_by_age'), plan);
  assert.match(plan, /trade_items_by_item/, plan);
});
