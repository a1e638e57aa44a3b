import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { catalogWorld, tokenFor, user } from './item-fixtures.js';
import { startProcesses, type Processes } from './race-support.js';
import type { World } from '../src/world/schema.js';
import { missing } from './components.js';

/*
 * A world exported while trades move items is one moment of the database: every item is with
 * the receiver of its last recorded move, and every recorded move belongs to an accepted trade.
 * On PostgreSQL the export reads over several pooled connections unless it holds one snapshot.
 */

const PAIRS: [number, number][] = [
  [1, 2],
  [3, 4],
  [5, 6],
];
const PER_USER = 20;
const ADMIN_KEY = 'admin-key-of-the-export-snapshot-test';

const initialOwner = new Map<number, number>();
const world: World = {
  ...catalogWorld,
  users: PAIRS.flat().map((id) => user(id)),
  items: PAIRS.flat().flatMap((userId) =>
    Array.from({ length: PER_USER }, (_, i) => {
      const item_id = 1000 + 100 * (userId - 1) + i;
      initialOwner.set(item_id, userId);
      return { item_id, user_id: userId, item_proto_id: 101, ts_owned: 100 + i };
    }),
  ),
};

let processes: Processes;
const tokens = new Map<number, string>();
let sent = 0;

before(async () => {
  if (missing.redis) return;
  const config = {
    rateLimit: false,
    adminKey: ADMIN_KEY,
    trades: { ttl: 14 * 86400, hold: 0, maxOpenOutgoing: 10_000, createsPerMinute: 100_000 },
  };
  processes = await startProcesses({ world, config });
  for (const [a, b] of PAIRS) for (const id of [a, b]) tokens.set(id, await tokenFor(processes.servers[0], id));
});
after(async () => {
  await processes?.close();
});

async function post(method: string, params: Record<string, unknown>, headers: Record<string, string>): Promise<any> {
  const response = await fetch(`${processes.urls[sent++ % 2]}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(params),
  });
  assert.equal(response.status, 200);
  return response.json();
}

const call = (userId: number, method: string, params: Record<string, unknown>) =>
  post(method, params, { authorization: `Bearer ${tokens.get(userId)}` });

/** Passes one item from `from` to `to` through a trade the receiver accepts. */
async function give(from: number, to: number, itemId: number): Promise<void> {
  const created = await call(from, 'trades.create', { user_id: to, thing_ids_from: String(itemId) });
  assert.equal(created.code, 0, JSON.stringify(created));
  const accepted = await call(to, 'trades.accept', { trade_id: created.data.trade_id });
  assert.equal(accepted.code, 0, JSON.stringify(accepted));
}

function checkConsistent(exported: World): void {
  const statusOf = new Map((exported.trades ?? []).map((t) => [t.trade_id, t.status]));
  const lastReceiver = new Map<number, number>();
  for (const move of exported.trade_moves ?? []) {
    assert.equal(
      statusOf.get(move.trade_id),
      1,
      `move of item ${move.item_id} belongs to trade ${move.trade_id}, not accepted in the export`,
    );
    lastReceiver.set(move.item_id, move.to_user_id);
  }
  for (const item of exported.items ?? []) {
    const expected = lastReceiver.get(item.item_id!) ?? initialOwner.get(item.item_id!);
    assert.equal(item.user_id, expected, `item ${item.item_id} is exported with user ${item.user_id}, its moves end with ${expected}`);
  }
  assert.equal(exported.items?.length, initialOwner.size);
}

test('a world exported while trades move items is consistent', { skip: missing.redis }, async () => {
  let storming = true;
  const storm = PAIRS.map(async ([a, b]) => {
    const held = new Map<number, number>();
    for (const id of [a, b]) for (let i = 0; i < PER_USER; i++) held.set(1000 + 100 * (id - 1) + i, id);
    for (let round = 0; storming; round++) {
      const itemId = 1000 + 100 * (a - 1) + (round % PER_USER);
      const owner = held.get(itemId)!;
      const receiver = owner === a ? b : a;
      await give(owner, receiver, itemId);
      held.set(itemId, receiver);
    }
  });
  try {
    for (let i = 0; i < 15; i++) {
      const answer = await post('admin.exportWorld', {}, { 'x-admin-key': ADMIN_KEY });
      assert.equal(answer.code, 0, JSON.stringify(answer));
      checkConsistent(answer.data.world);
    }
  } finally {
    storming = false;
    await Promise.all(storm);
  }
  const moved = await processes.servers[0].db.kysely
    .selectFrom('trade_moves')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  assert.ok(Number(moved.n) > 15, `the storm moved ${moved.n} items during the exports`);
});
