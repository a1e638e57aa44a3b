import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { catalogWorld, tokenFor, user } from './item-fixtures.js';
import { CLUSTERED, callsInTurn, startProcesses, type Processes } from './race-support.js';
import type { World } from '../src/world/schema.js';
import { missing } from './components.js';

/*
 * A sender's offers a minute under concurrency, with real concurrent HTTP requests over sockets
 * (on PostgreSQL two processes share the database and Redis; SQLite runs as one process). Offers
 * that stay open and gifts accepted at once are made in different ways on PostgreSQL (one call,
 * and a transaction): both count, and together they never pass the limit.
 */

const PER_MINUTE = 7;
const BURST = 32;
const ROUNDS = 3;

/** User 1 holds items 100..195; user 3 accepts gifts at once. */
const world: World = {
  ...catalogWorld,
  users: [user(1), user(2), user(3)],
  items: Array.from({ length: BURST * ROUNDS }, (_, i) => ({ item_id: 100 + i, user_id: 1, item_proto_id: 101, ts_owned: 1000 + i })),
};

let processes: Processes;
const tokens = new Map<number, string>();
let call: ReturnType<typeof callsInTurn>;

before(async () => {
  if (CLUSTERED && missing.redis) return;
  processes = await startProcesses({
    world,
    redis: false,
    config: { rateLimit: false, trades: { ttl: 14 * 86400, hold: 0, maxOpenOutgoing: 100, createsPerMinute: PER_MINUTE } },
  });
  for (const id of [1, 2, 3]) tokens.set(id, await tokenFor(processes.servers[0], id));
  call = callsInTurn(processes, (id) => tokens.get(id));
  assert.equal((await call(3, 'privacy.update', { trades_income_gifts_autoaccept: 1 })).code, 0);
});
after(async () => {
  await processes?.close();
});

describe('offers a minute under concurrency', { skip: CLUSTERED && missing.redis }, () => {
  test(`${ROUNDS} minutes of ${BURST} concurrent offers and gifts from one sender: exactly ${PER_MINUTE} are made each minute, the others answer 7`, async () => {
    const db = processes.servers[0].db.kysely;
    for (let round = 0; round < ROUNDS; round++) {
      processes.servers[0].clock.advance(60);
      const answers = await Promise.all(
        Array.from({ length: BURST }, (_, i) =>
          call(1, 'trades.create', { user_id: i % 2 === 0 ? 2 : 3, thing_ids_from: String(100 + round * BURST + i) }),
        ),
      );
      const made = answers.filter((a) => a.code === 0).map((a) => a.data.trade_id as number);
      assert.equal(made.length, PER_MINUTE, `round ${round}: ${JSON.stringify(answers)}`);
      for (const answer of answers.filter((a) => a.code !== 0)) {
        assert.equal(answer.code, 7, JSON.stringify(answer));
        assert.ok(answer.data.retry_after >= 1 && answer.data.retry_after <= 60, JSON.stringify(answer));
      }
      const trades = await db
        .selectFrom('trades')
        .select(['trade_id', 'user_id_to', 'status'])
        .where('user_id_from', '=', 1)
        .where('trade_id', 'in', made)
        .execute();
      assert.equal(trades.length, PER_MINUTE);
      // Gifts to user 3 completed at once; offers to user 2 stay open.
      for (const trade of trades) assert.equal(trade.status, trade.user_id_to === 3 ? 1 : 0);
    }
    const trades = await db.selectFrom('trades').select(['user_id_to']).where('user_id_from', '=', 1).execute();
    assert.equal(trades.length, PER_MINUTE * ROUNDS);
    const given = await db.selectFrom('items').select('item_id').where('user_id', '=', 3).execute();
    assert.equal(given.length, trades.filter((t) => t.user_id_to === 3).length);
  });
});
