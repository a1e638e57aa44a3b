import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { catalogWorld, tokenFor, user } from './item-fixtures.js';
import type { World } from '../src/world/schema.js';
import { missing } from './components.js';
import { CLUSTERED, startProcesses, type Processes } from './race-support.js';
import { checkLedger } from '../src/market/index.js';

/*
 * Activations racing for the same promo code, with real concurrent HTTP requests over
 * sockets. On PostgreSQL two servers share the database and Redis, as two processes of one
 * deployment do, and requests alternate between them; SQLite runs as one process.
 */

const USERS = Array.from({ length: 20 }, (_, i) => i + 1);
const ROUNDS = 3;
const LIMIT = 3;
const ITEMS = [101, 601];
/** Kopecks each code pays besides its items. */
const MONEY = 250;

const world: World = {
  ...catalogWorld,
  users: USERS.map((id) => user(id)),
  promocodes: [
    ...Array.from({ length: ROUNDS }, (_, round) => ({ code: `LIMITED-${round}`, item_proto_ids: ITEMS, max_uses: LIMIT, money: MONEY })),
    { code: 'EVERYONE', item_proto_ids: ITEMS, money: MONEY },
  ],
};

let processes: Processes;
const tokens = new Map<number, string>();
let sent = 0;

/** On PostgreSQL the servers are joined by Redis: without one the races are not run. */
const withoutRedis = CLUSTERED && missing.redis;

before(async () => {
  if (withoutRedis) return;
  processes = await startProcesses({ world, config: { rateLimit: false }, redis: CLUSTERED });
  for (const id of USERS) tokens.set(id, await tokenFor(processes.servers[0], id));
});
after(async () => {
  await processes?.close();
});

/** One POST over a socket, to each server in turn. */
async function activate(userId: number, promocode: string): Promise<any> {
  const base = processes.urls[sent++ % 2];
  const response = await fetch(`${base}/api/wallet.promocodeActivate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.get(userId)}` },
    body: JSON.stringify({ promocode }),
  });
  return response.json();
}

/** The code's count of uses, its use rows, the items granted and the money paid (once per use, through the ledger) agree. */
async function assertConserved(code: string, winners: number[]): Promise<void> {
  const k = processes.servers[0].db.kysely;
  const row = await k.selectFrom('promocodes').select('uses').where('code', '=', code).executeTakeFirstOrThrow();
  assert.equal(Number(row.uses), winners.length);
  const uses = await k.selectFrom('promocode_uses').selectAll().where('code', '=', code).orderBy('user_id').execute();
  assert.deepEqual(
    uses.map((u) => u.user_id),
    [...winners].sort((a, b) => a - b),
  );
  for (const use of uses) {
    const ids = JSON.parse(use.item_ids) as number[];
    const items = await k.selectFrom('items').select(['user_id', 'item_proto_id']).where('item_id', 'in', ids).orderBy('item_id').execute();
    assert.deepEqual(
      items,
      ITEMS.map((item_proto_id) => ({ user_id: use.user_id, item_proto_id })),
    );
  }
  const paid = await k
    .selectFrom('ledger_transfers as t')
    .innerJoin('ledger_entries as e', 'e.transfer_id', 't.transfer_id')
    .select(['e.account_id', 'e.amount'])
    .where('t.kind', '=', 'promocode')
    .where('t.reason', '=', code)
    .where('e.account_id', '>', 0)
    .orderBy('e.account_id')
    .execute();
  assert.deepEqual(
    paid.map((p) => [Number(p.account_id), Number(p.amount)]),
    [...winners].sort((a, b) => a - b).map((id) => [id, MONEY]),
    'each redemption paid once',
  );
  assert.deepEqual(await checkLedger(k), []);
}

describe('wallet.promocodeActivate under concurrency', { skip: withoutRedis }, () => {
  test(`${USERS.length} users racing for a code with ${LIMIT} uses: exactly ${LIMIT} succeed`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const code = `LIMITED-${round}`;
      const answers = await Promise.all(USERS.map((id) => activate(id, code)));
      const codes = answers.map((a) => a.code).sort((a, b) => a - b);
      assert.deepEqual(
        codes,
        [...Array(LIMIT).fill(0), ...Array(USERS.length - LIMIT).fill(1501)],
        `round ${round}: ${JSON.stringify(answers.filter((a) => a.code !== 1501))}`,
      );
      await assertConserved(
        code,
        USERS.filter((_, i) => answers[i].code === 0),
      );
    }
    const items = await processes.servers[0].db.kysely.selectFrom('items').select('item_id').execute();
    assert.equal(items.length, ROUNDS * LIMIT * ITEMS.length, 'no item appeared from nowhere');
  });

  test('each user sending one code four times at once redeems it once', async () => {
    const requests = USERS.flatMap((id) => [id, id, id, id]);
    const answers = await Promise.all(requests.map((id) => activate(id, 'EVERYONE')));
    for (const id of USERS) {
      const codes = answers
        .filter((_, i) => requests[i] === id)
        .map((a) => a.code)
        .sort((a, b) => a - b);
      assert.deepEqual(codes, [0, 1501, 1501, 1501], `user ${id}`);
    }
    await assertConserved('EVERYONE', USERS);
  });
});
