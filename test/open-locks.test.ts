import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callFails, callOk, callVoid, catalogWorld, ownedIds, tokenFor, user } from './item-fixtures.js';
import type { World } from '../src/world/schema.js';

/** Item ids by purpose, all of user 1: cases (proto 501) and keys (proto 502), gift sets (proto 401). */
const FREE_CASE = 100;
const FREE_KEY = 110;
const NEVER_CASE = 101; // never tradable
const LATE_KEY = 111; // tradable from LOCKED_UNTIL
const LATE_CASE = 102;
const LATE_KEY_2 = 112;
const LOCKED_GIFT = 130; // tradable from LOCKED_UNTIL
const NEVER_GIFT = 131;
const FREE_GIFTS = [132, 133, 134];
const FRIEND = 2;
const BANNED_FRIEND = 3;
const CHOOSY_FRIEND = 4;
/** Far after the test server's clock. */
const LOCKED_UNTIL = 4_000_000_000;

const world: World = {
  ...catalogWorld,
  item_protos: [
    ...catalogWorld.item_protos!,
    {
      item_proto_id: 401,
      type: 1,
      quality_id: 2,
      title: 'Gift set',
      drop: [{ item_proto_id: 101 }, { item_proto_id: 601 }],
      can_craft: 0,
    },
  ],
  users: [user(1), user(FRIEND), user(BANNED_FRIEND, { global_ban: 1 }), user(CHOOSY_FRIEND)],
  friends: [
    [1, FRIEND],
    [1, BANNED_FRIEND],
    [1, CHOOSY_FRIEND],
  ],
  items: [
    { item_id: FREE_CASE, user_id: 1, item_proto_id: 501 },
    { item_id: FREE_KEY, user_id: 1, item_proto_id: 502 },
    { item_id: NEVER_CASE, user_id: 1, item_proto_id: 501, ts_can_trade: -1 },
    { item_id: LATE_KEY, user_id: 1, item_proto_id: 502, ts_can_trade: LOCKED_UNTIL },
    { item_id: LATE_CASE, user_id: 1, item_proto_id: 501, ts_can_trade: LOCKED_UNTIL },
    { item_id: LATE_KEY_2, user_id: 1, item_proto_id: 502, ts_can_trade: LOCKED_UNTIL - 10 },
    { item_id: LOCKED_GIFT, user_id: 1, item_proto_id: 401, ts_can_trade: LOCKED_UNTIL },
    { item_id: NEVER_GIFT, user_id: 1, item_proto_id: 401, ts_can_trade: -1 },
    ...FREE_GIFTS.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 401 })),
  ],
};

describe('inventory.open: trade locks and who may receive a gift set', () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startTestServer({ world });
    token = await tokenFor(server, 1);
  });
  after(() => server.close());

  const open = (params: Record<string, unknown>) => callOk(server, 'inventory.open', params, { token });
  const fails = (params: Record<string, unknown>, code: number) => callFails(server, 'inventory.open', params, code, { token });
  const locksOf = async (items: { item_id: number }[]) => {
    const rows = await server.db.kysely
      .selectFrom('items')
      .select('ts_can_trade')
      .where(
        'item_id',
        'in',
        items.map((item) => item.item_id),
      )
      .execute();
    return rows.map((row) => row.ts_can_trade);
  };

  test('what an opening gives keeps the strictest trade lock of the case and key', async () => {
    // An item free to trade shows no ts_can_trade.
    const free = await open({ item_id: FREE_CASE, key_item_id: FREE_KEY });
    assert.equal(free.items[0].ts_can_trade, undefined);
    assert.deepEqual(await locksOf(free.items), [0]);

    const never = await open({ item_id: NEVER_CASE, key_item_id: LATE_KEY });
    assert.equal(never.items[0].ts_can_trade, -1);
    assert.deepEqual(await locksOf(never.items), [-1]);

    const late = await open({ item_id: LATE_CASE, key_item_id: LATE_KEY_2 });
    assert.equal(late.items[0].ts_can_trade, LOCKED_UNTIL);
    // The drop cannot be offered before the case could have been.
    const answer = await callFails(server, 'trades.create', { user_id: FRIEND, thing_ids_from: [late.items[0].item_id] }, 603, { token });
    assert.match(answer.body.description ?? '', /cannot be traded yet/);
  });

  test('a trade-locked gift set opens for its owner, its items locked alike, and not for a friend', async () => {
    const answer = await fails({ item_id: LOCKED_GIFT, user_id_receiver: FRIEND }, 603);
    assert.equal(answer.body.description, 'the gift set is trade-locked: it may be opened only for yourself until its lock ends');
    await fails({ item_id: NEVER_GIFT, user_id_receiver: FRIEND }, 603);
    assert.deepEqual(await ownedIds(server, 1, 401), [LOCKED_GIFT, NEVER_GIFT, ...FREE_GIFTS]);
    assert.deepEqual(await ownedIds(server, FRIEND), []);

    const mine = await open({ item_id: NEVER_GIFT });
    assert.deepEqual(
      mine.items.map((item: { ts_can_trade: number }) => item.ts_can_trade),
      [-1, -1],
    );
  });

  test('a gift set is not given to a globally blocked friend', async () => {
    const answer = await fails({ item_id: FREE_GIFTS[0], user_id_receiver: BANNED_FRIEND }, 101);
    assert.equal(answer.body.description, `parameter user_id_receiver: user ${BANNED_FRIEND} does not exist`);
    assert.deepEqual(await ownedIds(server, BANNED_FRIEND), []);
    assert.ok((await ownedIds(server, 1, 401)).includes(FREE_GIFTS[0]));
  });

  test("a gift set is given only as the friend's trade settings let gifts through", async () => {
    const friendToken = await tokenFor(server, CHOOSY_FRIEND);
    await callVoid(server, 'privacy.update', { trades_income: 0, trades_income_gifts: 0 }, { token: friendToken });
    const answer = await fails({ item_id: FREE_GIFTS[1], user_id_receiver: CHOOSY_FRIEND }, 701);
    assert.equal(answer.body.description, 'the privacy settings of the user refuse gifts from you');
    assert.deepEqual(await ownedIds(server, CHOOSY_FRIEND), []);

    // Gifts alone let through: the set is given, its items marked as a gift.
    await callVoid(server, 'privacy.update', { trades_income_gifts: 1 }, { token: friendToken });
    const given = await open({ item_id: FREE_GIFTS[1], user_id_receiver: CHOOSY_FRIEND });
    assert.deepEqual(
      await ownedIds(server, CHOOSY_FRIEND),
      given.items.map((item: { item_id: number }) => item.item_id),
    );
    assert.ok(given.items.every((item: { gift?: { from_user_id: number } }) => item.gift?.from_user_id === 1));
    assert.deepEqual(await locksOf(given.items), [0, 0]);
  });

  test('a gift set for someone who is not a friend answers 2, for no one at all 101', async () => {
    await callVoid(server, 'friends.delete', { user_id: FRIEND }, { token });
    const answer = await fails({ item_id: FREE_GIFTS[2], user_id_receiver: FRIEND }, 2);
    assert.equal(answer.body.description, 'parameter user_id_receiver: a gift set may be opened only for a friend');
    await fails({ item_id: FREE_GIFTS[2], user_id_receiver: 999 }, 101);
  });
});

describe('inventory.open under --trade-hold', () => {
  const HOLD = 3600;
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startTestServer({
      world,
      config: { trades: { ttl: 14 * 86400, hold: HOLD, maxOpenOutgoing: 100, createsPerMinute: 30 } },
    });
    token = await tokenFor(server, 1);
  });
  after(() => server.close());

  test("a gift set opened for a friend gives items held as a trade's gift would be; opened for oneself, as its lock says", async () => {
    const now = Math.floor(server.clock.now() / 1000);
    const given = await callOk(server, 'inventory.open', { item_id: FREE_GIFTS[0], user_id_receiver: FRIEND }, { token });
    assert.deepEqual(
      given.items.map((item: { ts_can_trade?: number }) => item.ts_can_trade),
      [now + HOLD, now + HOLD],
    );
    const friendToken = await tokenFor(server, FRIEND);
    await callFails(server, 'trades.create', { user_id: 1, thing_ids_from: [given.items[0].item_id] }, 603, { token: friendToken });

    const mine = await callOk(server, 'inventory.open', { item_id: FREE_GIFTS[1] }, { token });
    assert.deepEqual(
      mine.items.map((item: { ts_can_trade?: number }) => item.ts_can_trade),
      [undefined, undefined],
    );
  });
});
