import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ok, type TestServer } from './helpers.js';
import { ALICE, BOB, CARD, CAROL, chatWorld, connect, listen, withCluster, withServer, type FeedClient } from './chat-support.js';
import { ExtwsClient } from './extws-client.js';
import { tokenFor } from './item-fixtures.js';
import { sweepExpiredTrades } from '../src/trades/expiry.js';
import { revokeItem } from '../src/inventory/grants.js';
import { missing } from './components.js';

/*
 * A trade's receiver hears of it on the realtime feed: counters.trades_new in the ExtWS auth
 * frame, `trades.new` when one is offered and `trades.closed` when one offered to them ends,
 * in both framings and on every process.
 */

const TTL = 3600;
const ADMIN_KEY = 'admin-key-of-the-trades-realtime-test';
const config = { adminKey: ADMIN_KEY, trades: { ttl: TTL, hold: 0, maxOpenOutgoing: 100, createsPerMinute: 100 } };
/** Alice's cards 10 to 17. */
const tradesWorld = () =>
  chatWorld({ items: Array.from({ length: 8 }, (_, i) => ({ item_id: 10 + i, user_id: ALICE, item_proto_id: CARD })) });

const withinASecond = <T>(promise: Promise<T>, what: string): Promise<T> =>
  Promise.race([promise, sleep(1000).then(() => assert.fail(`${what} did not arrive within a second`))]);

async function offer(server: TestServer, token: string, to: number, itemIds: number[]): Promise<number> {
  return ok(await server.call('trades.create', { user_id: to, thing_ids_from: itemIds.join(',') }, { token })).trade_id;
}

async function voidCall(server: TestServer, method: string, params: Record<string, unknown>, token: string): Promise<void> {
  assert.deepEqual((await server.call(method, params, { token })).body, { code: 0 }, method);
}

/** The trade events an ExtWS client got, as `[type, trade_id, status]`. */
const tradeEvents = (client: ExtwsClient) =>
  client
    .events()
    .filter((e) => e.type.startsWith('trades.'))
    .map((e) => [e.type, e.trade_id, e.status]);

/** The ExtWS event of a trade, once it arrives. */
const eventOf = (client: ExtwsClient, type: string, tradeId: number) =>
  withinASecond(
    client.next((f) => f.event === 'events' && f.data.events.some((e: any) => e.type === type && e.trade_id === tradeId)),
    `${type} of trade ${tradeId}`,
  ).then((frame) => frame.data.events.find((e: any) => e.type === type && e.trade_id === tradeId));

/** The ExtWS event of an offer from alice arrives, with exactly these fields. */
async function assertOffered(client: ExtwsClient, tradeId: number, status: number): Promise<void> {
  const { id, ...event } = await eventOf(client, 'trades.new', tradeId);
  assert.equal(typeof id, 'number');
  assert.deepEqual(event, { type: 'trades.new', trade_id: tradeId, user_id_from: ALICE, status });
}

/** The JSON-framing frame of a trade, once it arrives. */
const frameOf = (client: FeedClient, type: string, tradeId: number) =>
  withinASecond(
    client.next((f) => f.event === type && f.data.trade_id === tradeId),
    `${type} of trade ${tradeId}`,
  );

test('the receiver sees counters.trades_new at connect, and every offer and ending of its trades at once, in both framings', async () =>
  withServer({ world: await tradesWorld(), config }, async (server) => {
    const base = await listen(server);
    const [alice, bob, carol] = [await tokenFor(server, ALICE), await tokenFor(server, BOB), await tokenFor(server, CAROL)];
    // Before bob connects: an offer that has expired since, two open ones; one to carol.
    const expired = await offer(server, alice, BOB, [10]);
    server.clock.advance(TTL);
    const [first, second] = [await offer(server, alice, BOB, [11]), await offer(server, alice, BOB, [12])];
    await offer(server, alice, CAROL, [13]);
    // Carol takes gifts at once from now on.
    await voidCall(server, 'privacy.update', { trades_income_gifts_autoaccept: 1 }, carol);

    const bobExtws = await ExtwsClient.connect(base, { access_token: bob, subs: '' });
    const bobJson = await connect(server, { token: bob, subs: '' });
    const aliceExtws = await ExtwsClient.connect(base, { access_token: alice, subs: '' });
    const carolExtws = await ExtwsClient.connect(base, { access_token: carol, subs: '' });
    const countersOf = async (client: ExtwsClient) => {
      const { friends_requests, trades_new } = (await client.next((f) => f.event === 'auth')).data.counters;
      return { friends_requests, trades_new };
    };
    assert.deepEqual(await countersOf(bobExtws), { friends_requests: 0, trades_new: 2 });
    assert.deepEqual(await countersOf(aliceExtws), { friends_requests: 0, trades_new: 0 });
    assert.deepEqual(await countersOf(carolExtws), { friends_requests: 0, trades_new: 1 });

    // A new offer: told only once committed, so the receiver can read it the moment it hears.
    const creating = offer(server, alice, BOB, [14, 15]);
    const heard = await withinASecond(
      bobExtws.next((f) => f.event === 'events' && f.data.events.some((e: any) => e.type === 'trades.new')),
      'trades.new',
    );
    const income = await bobExtws.api('trades.getIncome');
    const third = await creating;
    assert.deepEqual(heard.data.events, [
      { id: heard.data.id_last_given, type: 'trades.new', trade_id: third, user_id_from: ALICE, status: 0 },
    ]);
    assert.equal(income.data.trades[0].trade_id, third, 'the offer was committed before it was announced');
    assert.deepEqual((await frameOf(bobJson, 'trades.new', third)).data, { trade_id: third, user_id_from: ALICE, status: 0 });

    // The sender revokes one.
    await voidCall(server, 'trades.revoke', { trade_id: first }, alice);
    assert.deepEqual((await frameOf(bobJson, 'trades.closed', first)).data, { trade_id: first, status: 3 });
    // Bob accepts an offer sharing item 12 with `second`, which becomes invalid.
    const fourth = await offer(server, alice, BOB, [12, 16]);
    await voidCall(server, 'trades.accept', { trade_id: fourth }, bob);
    assert.deepEqual((await frameOf(bobJson, 'trades.closed', second)).data, { trade_id: second, status: 4 });
    // An item of `third` is taken away.
    await revokeItem(server.services, 14, 'test');
    await frameOf(bobJson, 'trades.closed', third);
    // Open past its time: the sweep tells the receiver.
    const fifth = await offer(server, alice, BOB, [11]);
    server.clock.advance(TTL);
    assert.equal(await sweepExpiredTrades(server.services), 3, 'the two offers to bob and the one to carol');
    await eventOf(bobExtws, 'trades.closed', fifth);
    // A gift accepted at once reaches its receiver as accepted.
    const gift = await offer(server, alice, CAROL, [17]);
    await assertOffered(carolExtws, gift, 1);
    // A world file merged by an operator replaces an item of an open trade.
    const sixth = await offer(server, alice, BOB, [15]);
    const world = JSON.stringify({ items: [{ item_id: 15, user_id: ALICE, item_proto_id: CARD }] });
    assert.equal((await server.call('admin.importWorld', { world }, { headers: { 'x-admin-key': ADMIN_KEY } })).body.code, 0);
    await eventOf(bobExtws, 'trades.closed', sixth);
    await frameOf(bobJson, 'trades.closed', sixth);

    const expected = [
      ['trades.new', third, 0],
      ['trades.closed', first, 3],
      ['trades.new', fourth, 0],
      ['trades.closed', fourth, 1],
      ['trades.closed', second, 4],
      ['trades.closed', third, 4],
      ['trades.new', fifth, 0],
      ['trades.closed', expired, 5],
      ['trades.closed', fifth, 5],
      ['trades.new', sixth, 0],
      ['trades.closed', sixth, 4],
    ];
    assert.deepEqual(tradeEvents(bobExtws), expected);
    assert.deepEqual(
      bobJson.frames.filter((f) => f.event.startsWith('trades.')).map((f) => [f.event, f.data.trade_id, f.data.status]),
      expected,
    );
    assert.deepEqual(tradeEvents(aliceExtws), [], 'the sender is not told');
    assert.deepEqual(
      tradeEvents(carolExtws).map(([type, , status]) => [type, status]),
      [
        ['trades.closed', 5],
        ['trades.new', 1],
      ],
    );

    const again = await ExtwsClient.connect(base, { access_token: bob, subs: '' });
    assert.deepEqual(await countersOf(again), { friends_requests: 0, trades_new: 0 });
    for (const client of [bobExtws, bobJson, aliceExtws, carolExtws, again]) client.close();
  }));

test(
  'across two processes with Redis: the receiver on either process hears of offers and endings made on the other',
  { skip: missing.redis },
  async () =>
    withCluster(
      async (first, second) => {
        const [baseFirst, baseSecond] = [await listen(first), await listen(second)];
        const [alice, bob] = [await tokenFor(first, ALICE), await tokenFor(first, BOB)];
        const bobOnSecond = await ExtwsClient.connect(baseSecond, { access_token: bob, subs: '' });
        const bobOnFirst = await connect(first, { token: bob, subs: '' });

        const tradeId = await offer(first, alice, BOB, [10]);
        await assertOffered(bobOnSecond, tradeId, 0);
        await frameOf(bobOnFirst, 'trades.new', tradeId);
        const later = await ExtwsClient.connect(baseFirst, { access_token: bob, subs: '' });
        assert.equal((await later.next((f) => f.event === 'auth')).data.counters.trades_new, 1);

        await voidCall(second, 'trades.revoke', { trade_id: tradeId }, alice);
        assert.deepEqual((await frameOf(bobOnFirst, 'trades.closed', tradeId)).data, { trade_id: tradeId, status: 3 });
        assert.equal((await eventOf(later, 'trades.closed', tradeId)).status, 3);
        // Each connection hears in its own time: wait for this one's too before reading all it heard.
        await eventOf(bobOnSecond, 'trades.closed', tradeId);
        assert.deepEqual(tradeEvents(bobOnSecond), [
          ['trades.new', tradeId, 0],
          ['trades.closed', tradeId, 3],
        ]);
        for (const client of [bobOnSecond, bobOnFirst, later]) client.close();
      },
      await tradesWorld(),
    ),
);
