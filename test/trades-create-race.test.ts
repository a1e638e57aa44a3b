import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { catalogWorld, tokenFor, user } from './item-fixtures.js';
import { callsInTurn, startProcesses, type Processes } from './race-support.js';
import type { World } from '../src/world/schema.js';
import { missing } from './components.js';

/*
 * Creations racing each other and acceptances, with real concurrent HTTP requests over sockets
 * (on PostgreSQL two processes share the database and Redis; SQLite runs as one process).
 */

const MAX_OPEN = 5;
const OFFERS = 24;

/** User 1 holds items 100..123, user 2 items 200..223, user 3 items 300..323. */
const world: World = {
  ...catalogWorld,
  users: [user(1), user(2), user(3)],
  items: [1, 2, 3].flatMap((userId) =>
    Array.from({ length: OFFERS }, (_, i) => ({ item_id: 100 * userId + i, user_id: userId, item_proto_id: 101, ts_owned: 1000 + i })),
  ),
};

let processes: Processes;
const tokens = new Map<number, string>();
let call: ReturnType<typeof callsInTurn>;

before(async () => {
  if (missing.redis) return;
  processes = await startProcesses({
    world,
    config: { rateLimit: false, trades: { ttl: 14 * 86400, hold: 0, maxOpenOutgoing: MAX_OPEN, createsPerMinute: 100_000 } },
  });
  for (const id of [1, 2, 3]) tokens.set(id, await tokenFor(processes.servers[0], id));
  call = callsInTurn(processes, (id) => tokens.get(id));
});
after(async () => {
  await processes?.close();
});

const db = () => processes.servers[0].db.kysely;
const codes = (answers: { code: number }[]) => answers.map((a) => a.code).sort((a, b) => a - b);

describe('trade creations under concurrency', { skip: missing.redis }, () => {
  test(`${OFFERS} concurrent offers from one sender: exactly ${MAX_OPEN} are made, the others answer 7`, async () => {
    const answers = await Promise.all(
      Array.from({ length: OFFERS }, (_, i) => call(1, 'trades.create', { user_id: 2, thing_ids_from: String(100 + i) })),
    );
    assert.deepEqual(codes(answers), [...Array(MAX_OPEN).fill(0), ...Array(OFFERS - MAX_OPEN).fill(7)]);
    const open = await db().selectFrom('trades').select('trade_id').where('user_id_from', '=', 1).where('status', '=', 0).execute();
    assert.equal(open.length, MAX_OPEN);
    for (const { trade_id } of open) assert.equal((await call(2, 'trades.decline', { trade_id })).code, 0);
  });

  test('an offer of an item racing the acceptance that moves it: made before the move it ends invalid, else it answers 603', async () => {
    // Round by round, user 3 gives an item to user 2 and, at the moment user 2 accepts, offers it to user 1.
    for (let i = 0; i < 8; i++) {
      const item = 300 + i;
      const gift = await call(3, 'trades.create', { user_id: 2, thing_ids_from: String(item) });
      assert.equal(gift.code, 0, JSON.stringify(gift));
      const [accepted, offer] = await Promise.all([
        call(2, 'trades.accept', { trade_id: gift.data.trade_id }),
        call(3, 'trades.create', { user_id: 1, thing_ids_from: String(item) }),
      ]);
      assert.equal(accepted.code, 0, JSON.stringify(accepted));
      if (offer.code === 0) {
        const { status } = await db()
          .selectFrom('trades')
          .select('status')
          .where('trade_id', '=', offer.data.trade_id)
          .executeTakeFirstOrThrow();
        assert.equal(status, 4, 'an offer made before the move ends invalid with it');
      } else assert.equal(offer.code, 603, JSON.stringify(offer));
      const owner = await db().selectFrom('items').select('user_id').where('item_id', '=', item).executeTakeFirstOrThrow();
      assert.equal(owner.user_id, 2);
    }
  });
});
