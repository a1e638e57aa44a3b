import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DB_KIND, queryPlan, startTestServer, type TestServer } from './helpers.js';
import { catalogWorld, user } from './item-fixtures.js';
import { expiredOpenTrades } from '../src/trades/queries.js';
import type { World } from '../src/world/schema.js';

/*
 * The expiry sweep finds the trades past their time through the index of open trades, oldest
 * first, however many trades have ended, and before the database has statistics of the table
 * (SQLite keeps none until ANALYZE runs): asked in id order, SQLite walked every trade.
 */

const TRADES = 3000;
const OPEN = 5;
const world: World = { ...catalogWorld, users: [user(1), user(2)] };

let server: TestServer;
before(async () => {
  server = await startTestServer({ world });
  await sql`with recursive g (n) as (select 1 union all select n + 1 from g where n < ${TRADES})
    insert into trades (trade_id, user_id_from, user_id_to, status, create_time) select n, 1, 2, 1, 1000 + n from g`.execute(
    server.db.kysely,
  );
  await sql`update trades set status = 0 where trade_id % ${TRADES / OPEN} = 0`.execute(server.db.kysely);
});
after(() => server.close());

test('the open trades past their time are read from the index of open trades, oldest first, without statistics', async () => {
  const query = expiredOpenTrades(server.db.kysely, DB_KIND, 1000 + TRADES, 1000);
  assert.deepEqual(
    (await query.execute()).map((t) => t.trade_id),
    [600, 1200, 1800, 2400, 3000],
  );
  const plan = await queryPlan(server, query.compile());
  assert.match(plan, /trades_open_by_age/, plan);
});
