import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { catalogWorld, tokenFor, user } from './item-fixtures.js';
import { startProcesses, type Processes } from './race-support.js';
import type { World } from '../src/world/schema.js';
import { missing } from './components.js';

/*
 * Trades racing each other, crafts and revocations, with real concurrent HTTP requests over
 * sockets. On PostgreSQL two servers share the database and Redis, as two processes of one
 * deployment do, and requests alternate between them; SQLite runs as one process.
 */

const USERS = [1, 2, 3, 4, 5, 6];
const PER_USER = 60;
const ADMIN_KEY = 'admin-key-of-the-trades-race-test';

/** Items 1000 + 100 * (user - 1) + i: class-1 cards (101, 102 alternating) of each user. */
const initialOwner = new Map<number, number>();
const world: World = {
  ...catalogWorld,
  users: USERS.map((id) => user(id)),
  items: USERS.flatMap((userId) =>
    Array.from({ length: PER_USER }, (_, i) => {
      const item_id = 1000 + 100 * (userId - 1) + i;
      initialOwner.set(item_id, userId);
      return { item_id, user_id: userId, item_proto_id: i % 2 === 0 ? 101 : 102, ts_owned: 100 + i };
    }),
  ),
};
const itemsOf = (userId: number) => Array.from({ length: PER_USER }, (_, i) => 1000 + 100 * (userId - 1) + i);

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
  for (const id of USERS) tokens.set(id, await tokenFor(processes.servers[0], id));
});
after(async () => {
  await processes?.close();
});

/** One POST over a socket, to each process in turn. */
async function post(method: string, params: Record<string, unknown>, headers: Record<string, string>): Promise<any> {
  const base = processes.urls[sent++ % 2];
  const response = await fetch(`${base}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(params),
  });
  assert.ok([200, 429].includes(response.status), `HTTP ${response.status}`);
  return response.json();
}

const call = (userId: number, method: string, params: Record<string, unknown>) =>
  post(method, params, { authorization: `Bearer ${tokens.get(userId)}` });
const revokeItem = (itemId: number) => post('admin.revokeItem', { item_id: itemId, reason: 'race' }, { 'x-admin-key': ADMIN_KEY });

async function offer(from: number, to: number, give: number[], take: number[] = []): Promise<number> {
  const params: Record<string, unknown> = { user_id: to };
  if (give.length > 0) params.thing_ids_from = give.join(',');
  if (take.length > 0) params.thing_ids_to = take.join(',');
  const answer = await call(from, 'trades.create', params);
  assert.equal(answer.code, 0, JSON.stringify(answer));
  return answer.data.trade_id;
}

const db = () => processes.servers[0].db.kysely;
const sorted = (codes: number[]) => [...codes].sort((a, b) => a - b);

async function statusOf(tradeId: number): Promise<number> {
  return (await db().selectFrom('trades').select('status').where('trade_id', '=', tradeId).executeTakeFirstOrThrow()).status;
}

async function ownersOf(ids: number[]): Promise<number[]> {
  const rows = await db()
    .selectFrom('items')
    .select(['item_id', 'user_id'])
    .where('item_id', 'in', ids)
    .where('state', '=', 'owned')
    .orderBy('item_id')
    .execute();
  const byId = new Map(rows.map((r) => [r.item_id, r.user_id]));
  return ids.map((id) => byId.get(id) ?? 0);
}

/**
 * Every item is accounted for: an original or the result of one craft; owned, consumed by one
 * craft, or revoked once. The ledger, replayed from the first owners in order, gives every
 * item's current owner, and each accepted trade moved exactly its items (and no other trade
 * moved any). Every trade still open holds only items its sides own, free and tradable.
 */
async function assertConsistent(): Promise<void> {
  const k = db();
  const [items, moves, trades, tradeItems, crafts, revocations, equipped] = await Promise.all([
    k.selectFrom('items').selectAll().orderBy('item_id').execute(),
    k.selectFrom('trade_moves').selectAll().orderBy('move_id').execute(),
    k.selectFrom('trades').selectAll().execute(),
    k.selectFrom('trade_items').selectAll().execute(),
    k.selectFrom('crafts').selectAll().execute(),
    k.selectFrom('revocations').selectAll().execute(),
    k.selectFrom('equipped').selectAll().execute(),
  ]);
  const owner = new Map(initialOwner);
  for (const craft of crafts) owner.set(craft.result_item_id!, craft.user_id);
  for (const move of moves) {
    assert.equal(owner.get(move.item_id), move.from_user_id, `move ${move.move_id} of item ${move.item_id} starts from its owner`);
    owner.set(move.item_id, move.to_user_id);
  }
  const consumed = new Set(crafts.flatMap((c) => JSON.parse(c.consumed_item_ids) as number[]));
  assert.equal(consumed.size, crafts.length * 10, 'no item consumed twice');
  const revoked = new Set(revocations.map((r) => r.item_id));
  assert.equal(revoked.size, revocations.length, 'no item revoked twice');
  assert.equal(items.length, initialOwner.size + crafts.length, 'no item appeared from nowhere');
  for (const item of items) {
    assert.equal(item.user_id, owner.get(item.item_id), `the ledger replays to the owner of item ${item.item_id}`);
    const fates = [item.state === 'owned', consumed.has(item.item_id), revoked.has(item.item_id)].filter(Boolean).length;
    assert.equal(fates, 1, `item ${item.item_id} (${item.state}) has one fate`);
  }
  const itemsOfTrade = new Map<number, typeof tradeItems>();
  for (const entry of tradeItems)
    (itemsOfTrade.get(entry.trade_id) ?? itemsOfTrade.set(entry.trade_id, []).get(entry.trade_id)!).push(entry);
  const movesOfTrade = new Map<number, typeof moves>();
  for (const move of moves) (movesOfTrade.get(move.trade_id) ?? movesOfTrade.set(move.trade_id, []).get(move.trade_id)!).push(move);
  const itemById = new Map(items.map((i) => [i.item_id, i]));
  const equippedIds = new Set(equipped.map((e) => e.item_id));
  for (const trade of trades) {
    const entries = itemsOfTrade.get(trade.trade_id) ?? [];
    const moved = movesOfTrade.get(trade.trade_id) ?? [];
    if (trade.status === 1) {
      assert.deepEqual(
        moved.map((m) => [m.item_id, m.from_user_id, m.to_user_id]).sort((a, b) => a[0] - b[0]),
        entries
          .map((e) =>
            e.side === 0 ? [e.item_id, trade.user_id_from, trade.user_id_to] : [e.item_id, trade.user_id_to, trade.user_id_from],
          )
          .sort((a, b) => a[0] - b[0]),
        `accepted trade ${trade.trade_id} moved exactly its items`,
      );
    } else assert.equal(moved.length, 0, `trade ${trade.trade_id} (status ${trade.status}) moved nothing`);
    if (trade.status === 0)
      for (const entry of entries) {
        const item = itemById.get(entry.item_id)!;
        const side = entry.side === 0 ? trade.user_id_from : trade.user_id_to;
        assert.ok(
          item.state === 'owned' && item.user_id === side && !equippedIds.has(item.item_id),
          `open trade ${trade.trade_id} can complete`,
        );
      }
  }
  await assertCountedOnce(trades);
}

/** The processes' metrics, added up, count each trade made and each way one ended exactly once. */
async function assertCountedOnce(trades: { status: number }[]): Promise<void> {
  const counted = new Map<string, number>();
  for (const server of processes.servers) {
    const metric = await server.services.metrics.registry.getSingleMetric('game_platform_domain_events_total')!.get();
    for (const { labels, value } of metric.values)
      if (labels.kind === 'trade') counted.set(String(labels.outcome), (counted.get(String(labels.outcome)) ?? 0) + value);
  }
  const withStatus = (status: number) => trades.filter((t) => t.status === status).length;
  assert.deepEqual(
    ['created', 'accepted', 'declined', 'revoked', 'invalidated', 'expired'].map((outcome) => counted.get(outcome)),
    [trades.length, withStatus(1), withStatus(2), withStatus(3), withStatus(4), withStatus(5)],
    'trades counted once: created, accepted, declined, revoked, invalidated, expired',
  );
}

describe('trades under concurrency', { skip: missing.redis }, () => {
  test('six concurrent accepts of one trade: one moves the items, five answer 802', async () => {
    for (let round = 0; round < 3; round++) {
      const give = itemsOf(1).slice(round * 2, round * 2 + 2);
      const take = itemsOf(2).slice(round, round + 1);
      const tradeId = await offer(1, 2, give, take);
      const answers = await Promise.all(Array.from({ length: 6 }, () => call(2, 'trades.accept', { trade_id: tradeId })));
      assert.deepEqual(sorted(answers.map((a) => a.code)), [0, 802, 802, 802, 802, 802], JSON.stringify(answers));
      assert.deepEqual(await ownersOf([...give, ...take]), [2, 2, 1]);
      assert.equal(await statusOf(tradeId), 1);
    }
    await assertConsistent();
  });

  test('two trades sharing an item, accepted at once by different users: one wins, the other ends invalid with 603', async () => {
    for (let round = 0; round < 6; round++) {
      const shared = itemsOf(1)[10 + round];
      const toTwo = await offer(1, 2, [shared, itemsOf(1)[20 + round]]);
      const toThree = await offer(1, 3, [shared], [itemsOf(3)[round]]);
      const answers = await Promise.all([call(2, 'trades.accept', { trade_id: toTwo }), call(3, 'trades.accept', { trade_id: toThree })]);
      assert.deepEqual(sorted(answers.map((a) => a.code)), [0, 603], JSON.stringify(answers));
      const winner = answers[0].code === 0 ? toTwo : toThree;
      const loser = winner === toTwo ? toThree : toTwo;
      assert.deepEqual([await statusOf(winner), await statusOf(loser)], [1, 4]);
      assert.deepEqual(await ownersOf([shared]), [winner === toTwo ? 2 : 3]);
    }
    await assertConsistent();
  });

  test('an accept racing a craft of one of its items: exactly one of them happens', async () => {
    const outcomes = new Set<string>();
    for (let round = 0; round < 6; round++) {
      const ten = itemsOf(4).slice(round * 10, round * 10 + 10);
      const tradeId = await offer(4, 5, [ten[round % 10]], [itemsOf(5)[round]]);
      const [accepted, crafted] = await Promise.all([
        call(5, 'trades.accept', { trade_id: tradeId }),
        call(4, 'inventory.craft', { item_ids: ten.join(',') }),
      ]);
      assert.deepEqual(sorted([accepted.code, crafted.code]), [0, 603], JSON.stringify([accepted, crafted]));
      assert.equal(await statusOf(tradeId), accepted.code === 0 ? 1 : 4);
      outcomes.add(accepted.code === 0 ? 'accept' : 'craft');
    }
    await assertConsistent();
  });

  test('an accept racing a revocation of the trade, and of one of its items', async () => {
    for (let round = 0; round < 4; round++) {
      const tradeId = await offer(6, 1, [itemsOf(6)[round]]);
      const [accepted, revoked] = await Promise.all([
        call(1, 'trades.accept', { trade_id: tradeId }),
        call(6, 'trades.revoke', { trade_id: tradeId }),
      ]);
      assert.deepEqual(sorted([accepted.code, revoked.code]), [0, 802], JSON.stringify([accepted, revoked]));
      assert.equal(await statusOf(tradeId), accepted.code === 0 ? 1 : 3);
      assert.deepEqual(await ownersOf([itemsOf(6)[round]]), [accepted.code === 0 ? 1 : 6]);
    }
    for (let round = 0; round < 4; round++) {
      const item = itemsOf(6)[10 + round];
      const tradeId = await offer(6, 1, [item]);
      const [accepted, revoked] = await Promise.all([call(1, 'trades.accept', { trade_id: tradeId }), revokeItem(item)]);
      assert.equal(revoked.code, 0, 'the item is revoked from whoever owns it');
      // Revoked first: the trade is invalid; accepted first: the receiver lost the item after.
      assert.ok(accepted.code === 0 || accepted.code === 603, JSON.stringify(accepted));
      assert.equal(await statusOf(tradeId), accepted.code === 0 ? 1 : 4);
      const row = await db().selectFrom('revocations').select('user_id').where('item_id', '=', item).executeTakeFirstOrThrow();
      assert.equal(row.user_id, accepted.code === 0 ? 1 : 6);
    }
    for (let round = 0; round < 4; round++) {
      const tradeId = await offer(6, 1, [itemsOf(6)[20 + round]]);
      const [accepted, declined] = await Promise.all([
        call(1, 'trades.accept', { trade_id: tradeId }),
        call(1, 'trades.decline', { trade_id: tradeId }),
      ]);
      assert.deepEqual(sorted([accepted.code, declined.code]), [0, 802], JSON.stringify([accepted, declined]));
    }
    await assertConsistent();
  });

  test('a seeded storm of creates, accepts, declines, revocations and crafts conserves every item and replays', async () => {
    const next = random(20261123);
    const pick = <T>(list: T[]): T => list[Math.floor(next() * list.length)];
    const open: { id: number; from: number; to: number }[] = [];
    for (let wave = 0; wave < 6; wave++) {
      const owned = await db().selectFrom('items').select(['item_id', 'user_id', 'item_proto_id']).where('state', '=', 'owned').execute();
      const byUser = new Map<number, number[]>();
      for (const item of owned) (byUser.get(item.user_id) ?? byUser.set(item.user_id, []).get(item.user_id)!).push(item.item_id);
      const some = (userId: number, count: number) =>
        Array.from({ length: count }, () => pick(byUser.get(userId) ?? [0])).filter((id, i, all) => id > 0 && all.indexOf(id) === i);
      const operations: Promise<{ code: number }>[] = [];
      for (let i = 0; i < 40; i++) {
        const roll = next();
        const from = pick(USERS);
        const to = pick(USERS.filter((u) => u !== from));
        if (roll < 0.35 || open.length === 0) {
          const params: Record<string, unknown> = { user_id: to, thing_ids_from: some(from, 1 + Math.floor(next() * 3)).join(',') };
          if (next() < 0.7) params.thing_ids_to = some(to, 1 + Math.floor(next() * 2)).join(',');
          operations.push(
            call(from, 'trades.create', params).then((answer) => {
              if (answer.code === 0) open.push({ id: answer.data.trade_id, from, to });
              return answer;
            }),
          );
        } else if (roll < 0.75) {
          const trade = pick(open);
          operations.push(call(trade.to, 'trades.accept', { trade_id: trade.id }));
        } else if (roll < 0.82) {
          const trade = pick(open);
          operations.push(call(next() < 0.5 ? trade.to : trade.from, 'trades.cancel', { trade_id: trade.id }));
        } else if (roll < 0.92) {
          const mine = owned.filter((item) => item.user_id === from && item.item_proto_id === 101).map((item) => item.item_id);
          if (mine.length >= 10) operations.push(call(from, 'inventory.craft', { item_ids: shuffle(next, mine).slice(0, 10).join(',') }));
        } else operations.push(revokeItem(pick(owned).item_id));
      }
      const answers = await Promise.all(operations);
      for (const answer of answers) assert.ok([0, 2, 603, 802].includes(answer.code), JSON.stringify(answer));
    }
    await assertConsistent();
  });
});

/** A small seeded generator, so a failing run can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function shuffle<T>(next: () => number, list: T[]): T[] {
  const copy = [...list];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}
