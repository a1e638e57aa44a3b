import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { catalogWorld, tokenFor, user } from './item-fixtures.js';
import { needsRedis, callsInTurn, startProcesses, type Processes } from './race-support.js';
import { missing } from './components.js';
import { checkLedger } from '../src/market/index.js';
import type { World } from '../src/world/schema.js';

/*
 * The market under concurrency, with real concurrent HTTP requests over sockets. On
 * PostgreSQL two servers share the database and Redis, as two processes of one deployment do,
 * and requests alternate between them; SQLite runs as one process. After each test the ledger
 * replays to every balance and every item's owner.
 */

const USERS = [1, 2, 3, 4, 5, 6];
const PER_USER = 80;
const ADMIN_KEY = 'admin-key-of-the-market-race-test';
const GRANT = 1000;

/** Items 1000 + 100 * (user - 1) + i: class-1 cards of each user; a case (501) and key (502) at i = 70..79. */
const initialOwner = new Map<number, number>();
const itemOf = (userId: number, i: number) => 1000 + 100 * (userId - 1) + i;
const world: World = {
  ...catalogWorld,
  users: USERS.map((id) => user(id)),
  items: USERS.flatMap((userId) =>
    Array.from({ length: PER_USER }, (_, i) => {
      const item_id = itemOf(userId, i);
      initialOwner.set(item_id, userId);
      const item_proto_id = i >= 75 ? 502 : i >= 70 ? 501 : 101;
      return { item_id, user_id: userId, item_proto_id, ts_owned: 100 + i };
    }),
  ),
};

let processes: Processes;
const tokens = new Map<number, string>();
let call: (userId: number, method: string, params: Record<string, unknown>) => Promise<any>;

before(async () => {
  if (needsRedis) return;
  const config = {
    rateLimit: false,
    adminKey: ADMIN_KEY,
    trades: { ttl: 14 * 86400, hold: 0, maxOpenOutgoing: 10_000, createsPerMinute: 100_000 },
  };
  processes = await startProcesses({ world, config, redis: !missing.redis });
  for (const id of USERS) tokens.set(id, await tokenFor(processes.servers[0]!, id));
  call = callsInTurn(processes, (id) => tokens.get(id));
  for (const id of USERS) {
    const answer = await processes.servers[0]!.call(
      'admin.grantMoney',
      { user_id: id, amount: GRANT, reason: 'race' },
      { headers: { 'x-admin-key': ADMIN_KEY } },
    );
    assert.equal(answer.body.code, 0);
  }
});
after(async () => {
  await processes?.close();
});

const db = () => processes.servers[0]!.db.kysely;
const sorted = (codes: number[]) => [...codes].sort((a, b) => a - b);

async function sellOk(seller: number, itemId: number, price: number): Promise<void> {
  const answer = await call(seller, 'market.sell', { thing_id: itemId, price });
  assert.equal(answer.code, 0, JSON.stringify(answer));
}

async function balanceOf(userId: number): Promise<number> {
  const row = await db().selectFrom('balances').select('balance').where('user_id', '=', userId).executeTakeFirst();
  return row ? Number(row.balance) : 0;
}

async function ownerOf(itemId: number): Promise<{ user_id: number; state: string }> {
  const row = await db().selectFrom('items').select(['user_id', 'state']).where('item_id', '=', itemId).executeTakeFirstOrThrow();
  return { user_id: Number(row.user_id), state: row.state };
}

/**
 * Money and items are conserved: the ledger checks (every balance is the sum of its entries,
 * every transfer sums to zero, the fee account is the fees), the users' money is what was
 * granted less what was revoked and the fees, every listed item has one listing and every listing one listed item,
 * no item appeared or vanished except by crafts and openings, and the sales and trade moves,
 * replayed from the first owners, give every item's owner.
 */
async function assertConserved(): Promise<void> {
  const k = db();
  assert.deepEqual(await checkLedger(k), []);
  const [balances, sales, moves, items, listings, crafts, draws, issued] = await Promise.all([
    k.selectFrom('balances').selectAll().execute(),
    k.selectFrom('market_sales').selectAll().orderBy('sale_id').execute(),
    k.selectFrom('trade_moves').selectAll().orderBy('move_id').execute(),
    k.selectFrom('items').selectAll().orderBy('item_id').execute(),
    k.selectFrom('market_listings').selectAll().execute(),
    k.selectFrom('crafts').selectAll().execute(),
    k.selectFrom('draws').selectAll().execute(),
    k.selectFrom('ledger_entries').select('amount').where('account_id', '=', -2).execute(),
  ]);
  const shopped = await k
    .selectFrom('ledger_transfers as t')
    .innerJoin('ledger_entries as e', 'e.transfer_id', 't.transfer_id')
    .select(['t.item_id', 'e.account_id'])
    .where('t.kind', '=', 'shop')
    .where('e.account_id', '>', 0)
    .execute();
  const total = balances.reduce((sum, b) => sum + Number(b.balance), 0);
  const fees = sales.reduce((sum, s) => sum + Number(s.fee), 0);
  const net = -issued.reduce((sum, e) => sum + Number(e.amount), 0);
  assert.ok(net <= USERS.length * GRANT * 100);
  assert.equal(total, net - fees, 'the users hold what was granted less what was revoked and the fees');
  for (const b of balances) assert.ok(Number(b.balance) >= 0, `user ${b.user_id} is not overdrawn`);

  const listed = new Set(items.filter((i) => i.state === 'listed').map((i) => Number(i.item_id)));
  assert.deepEqual([...listed].sort(), listings.map((l) => Number(l.item_id)).sort(), 'listed items are those with a listing');
  const made = crafts.length + shopped.length + draws.reduce((sum, d) => sum + (JSON.parse(d.result_item_ids) as number[]).length, 0);
  assert.equal(items.length, initialOwner.size + made, 'no item appeared from nowhere');

  const owner = new Map(initialOwner);
  for (const craft of crafts) owner.set(Number(craft.result_item_id), Number(craft.user_id));
  for (const purchase of shopped) owner.set(Number(purchase.item_id), Number(purchase.account_id));
  for (const draw of draws) for (const id of JSON.parse(draw.result_item_ids) as number[]) owner.set(id, Number(draw.receiver_user_id));
  const soldItems = new Set(sales.map((s) => Number(s.item_id)));
  const tradedItems = new Set(moves.map((m) => Number(m.item_id)));
  for (const sale of sales) {
    assert.ok(!tradedItems.has(Number(sale.item_id)), 'each item of this test changes hands one way');
    assert.equal(owner.get(Number(sale.item_id)), Number(sale.seller_id), `sale ${sale.sale_id} is from the item's owner`);
    owner.set(Number(sale.item_id), Number(sale.buyer_id));
  }
  for (const move of moves) {
    assert.equal(owner.get(Number(move.item_id)), Number(move.from_user_id));
    owner.set(Number(move.item_id), Number(move.to_user_id));
  }
  for (const item of items)
    assert.equal(Number(item.user_id), owner.get(Number(item.item_id)), `the ledger replays to item ${item.item_id}'s owner`);
  assert.ok(soldItems.size === sales.length, 'no item sold twice from one listing');
}

describe('the market under concurrency', { skip: needsRedis }, () => {
  test('four buyers of one listing: one buys it, three answer 2101 and keep their money', async () => {
    for (let round = 0; round < 8; round++) {
      const itemId = itemOf(1, round);
      await sellOk(1, itemId, 5);
      const buyers = [2, 3, 4, 5];
      const before = await Promise.all(buyers.map(balanceOf));
      const answers = await Promise.all(buyers.map((b) => call(b, 'market.buy', { thing_id: itemId, price: 500 })));
      assert.deepEqual(sorted(answers.map((a) => a.code)), [0, 2101, 2101, 2101], JSON.stringify(answers));
      const winner = buyers[answers.findIndex((a) => a.code === 0)]!;
      assert.deepEqual(await ownerOf(itemId), { user_id: winner, state: 'owned' });
      const after = await Promise.all(buyers.map(balanceOf));
      buyers.forEach((b, i) => assert.equal(after[i], before[i]! - (b === winner ? 500 : 0), `buyer ${b} paid only for what it got`));
    }
    await assertConserved();
  });

  test('a buy racing a cancel or a price change: exactly one of them happens', async () => {
    for (let round = 0; round < 8; round++) {
      const itemId = itemOf(2, round);
      await sellOk(2, itemId, 3);
      const other =
        round % 2 === 0 ? call(2, 'market.cancel', { thing_id: itemId }) : call(2, 'market.sell', { thing_id: itemId, price: 4 });
      const [bought, changed] = await Promise.all([call(3, 'market.buy', { thing_id: itemId, price: 300 }), other]);
      const codes = [bought.code, changed.code];
      if (round % 2 === 0) assert.ok(JSON.stringify(codes) === '[0,2101]' || JSON.stringify(codes) === '[2101,0]', JSON.stringify(codes));
      else assert.ok(JSON.stringify(codes) === '[0,603]' || JSON.stringify(codes) === '[2102,0]', JSON.stringify(codes));
      const { user_id, state } = await ownerOf(itemId);
      if (bought.code === 0) assert.deepEqual({ user_id, state }, { user_id: 3, state: 'owned' });
      else assert.deepEqual({ user_id, state }, { user_id: 2, state: round % 2 === 0 ? 'owned' : 'listed' });
      if (state === 'listed') {
        const cancelled = await call(2, 'market.cancel', { thing_id: itemId });
        assert.equal(cancelled.code, 0);
      }
    }
    await assertConserved();
  });

  test('a listing racing a trade accept, a craft or an opening of the same item: exactly one of them happens', async () => {
    for (let round = 0; round < 4; round++) {
      // A trade offering the item, accepted while its owner lists it.
      const traded = itemOf(4, 20 + round);
      const trade = await call(4, 'trades.create', { user_id: 5, thing_ids_from: String(traded) });
      assert.equal(trade.code, 0, JSON.stringify(trade));
      const [accepted, listed] = await Promise.all([
        call(5, 'trades.accept', { trade_id: trade.data.trade_id }),
        call(4, 'market.sell', { thing_id: traded, price: 2 }),
      ]);
      assert.equal([accepted.code, listed.code].filter((c) => c === 0).length, 1, JSON.stringify([accepted, listed]));
      assert.equal((await ownerOf(traded)).user_id, accepted.code === 0 ? 5 : 4);

      // Ten cards crafted while one of them is listed.
      const cards = Array.from({ length: 10 }, (_, i) => itemOf(4, 30 + round * 10 + i)).filter((id) => id < itemOf(4, 70));
      if (cards.length === 10) {
        const [crafted, sold] = await Promise.all([
          call(4, 'inventory.craft', { item_ids: cards.join(',') }),
          call(4, 'market.sell', { thing_id: cards[0], price: 2 }),
        ]);
        assert.equal([crafted.code, sold.code].filter((c) => c === 0).length, 1, JSON.stringify([crafted, sold]));
        assert.ok([crafted.code, sold.code].includes(603));
      }

      // A case opened while it is being listed.
      const caseId = itemOf(4, 70 + round);
      const [opened, caseListed] = await Promise.all([
        call(4, 'inventory.open', { item_id: caseId, key_item_id: itemOf(4, 75 + round) }),
        call(4, 'market.sell', { thing_id: caseId, price: 2 }),
      ]);
      assert.equal([opened.code, caseListed.code].filter((c) => c === 0).length, 1, JSON.stringify([opened, caseListed]));
    }
    await assertConserved();
  });

  test('a listing or a quick sale racing an offer of the same item in a trade: exactly one of them happens', async () => {
    for (let round = 0; round < 12; round++) {
      const itemId = itemOf(4, round);
      const [offered, listed] = await Promise.all([
        call(4, 'trades.create', { user_id: 5, thing_ids_from: String(itemId) }),
        call(4, 'market.sell', { thing_id: itemId, price: 2 }),
      ]);
      assert.equal([offered.code, listed.code].filter((c) => c === 0).length, 1, JSON.stringify([offered, listed]));
      assert.deepEqual(await ownerOf(itemId), { user_id: 4, state: listed.code === 0 ? 'listed' : 'owned' });
      if (offered.code === 0) {
        // The offer stands and completes: the item was never on sale.
        const accepted = await call(5, 'trades.accept', { trade_id: offered.data.trade_id });
        assert.equal(accepted.code, 0, JSON.stringify(accepted));
        assert.deepEqual(await ownerOf(itemId), { user_id: 5, state: 'owned' });
      } else {
        const cancelled = await call(4, 'market.cancel', { thing_id: itemId });
        assert.equal(cancelled.code, 0, JSON.stringify(cancelled));
      }
    }
    // A quick sale racing an offer: the item is sold back or offered, never both.
    for (let round = 12; round < 20; round++) {
      const itemId = itemOf(4, round);
      const [offered, sold] = await Promise.all([
        call(4, 'trades.create', { user_id: 5, thing_ids_from: String(itemId) }),
        call(4, 'market.quickSell', { thing_id: itemId }),
      ]);
      assert.equal([offered.code, sold.code].filter((c) => c === 0).length, 1, JSON.stringify([offered, sold]));
      assert.deepEqual(await ownerOf(itemId), { user_id: 4, state: sold.code === 0 ? 'consumed' : 'owned' });
      if (offered.code === 0) assert.equal((await call(4, 'trades.revoke', { trade_id: offered.data.trade_id })).code, 0);
    }
    await assertConserved();
  });

  test('one buyer spending the same balance twice: only what it covers is bought', async () => {
    // User 6 keeps 10 units; ten listings of 4 units each, bought at once.
    const keep = 1000;
    const spend = (await balanceOf(6)) - keep;
    const revoked = await processes.servers[0]!.call(
      'admin.revokeMoney',
      { user_id: 6, amount: spend / 100, reason: 'race' },
      { headers: { 'x-admin-key': ADMIN_KEY } },
    );
    assert.equal(revoked.body.code, 0);
    const ids = Array.from({ length: 10 }, (_, i) => itemOf(5, 40 + i));
    for (const id of ids) await sellOk(5, id, 4);
    const answers = await Promise.all(ids.map((id) => call(6, 'market.buy', { thing_id: id, price: 400 })));
    assert.deepEqual(sorted(answers.map((a) => a.code)), [0, 0, 2103, 2103, 2103, 2103, 2103, 2103, 2103, 2103], JSON.stringify(answers));
    assert.equal(await balanceOf(6), keep - 800);
    await assertConserved();
  });

  test('six concurrent shop purchases under one request_id buy one item and answer it six times', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => call(3, 'shop.buy', { item_proto_id: 101, request_id: 'once' })));
    for (const answer of answers) assert.deepEqual(answer, answers[0]);
    assert.equal(answers[0].code, 0, JSON.stringify(answers[0]));
    assert.deepEqual(await ownerOf(answers[0].data.item.item_id), { user_id: 3, state: 'owned' });
    const bought = await db()
      .selectFrom('ledger_entries')
      .select('entry_id')
      .where('account_id', '=', 3)
      .where('kind', '=', 'shop')
      .execute();
    assert.equal(bought.length, 1);
  });

  test('a storm of sells, buys, cancels, price changes, shop purchases and quick sales conserves money and items', async () => {
    const sellers = [1, 2, 3];
    const pool = sellers.flatMap((s) => Array.from({ length: 10 }, (_, i) => itemOf(s, 50 + i)));
    const ops: Promise<unknown>[] = [];
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let i = 0; i < 240; i++) {
      const itemId = pool[random(pool.length)]!;
      const seller = Math.floor((itemId - 1000) / 100) + 1;
      const price = 1 + random(3);
      switch (random(6)) {
        case 4:
          ops.push(call(4 + random(3), 'shop.buy', { item_proto_id: 101, request_id: `storm-${random(20)}` }));
          break;
        case 5:
          ops.push(call(seller, 'market.quickSell', { thing_id: itemId }));
          break;
        case 0:
        case 1:
          ops.push(call(seller, 'market.sell', { thing_id: itemId, price }));
          break;
        case 2:
          ops.push(call(4 + random(3), 'market.buy', { thing_id: itemId, price: price * 100 }));
          break;
        default:
          ops.push(call(seller, 'market.cancel', { thing_id: itemId }));
      }
    }
    const answers = (await Promise.all(ops)) as { code: number }[];
    for (const answer of answers) assert.ok([0, 603, 2101, 2102, 2103, 2104].includes(answer.code), JSON.stringify(answer));
    assert.ok(answers.filter((a) => a.code === 0).length > 50, 'the storm did things');
    await assertConserved();
  });
});
