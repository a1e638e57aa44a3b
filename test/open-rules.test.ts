import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callFails, callOk, catalogWorld, ownedIds, tokenFor, user } from './item-fixtures.js';
import { ADMIN_KEY } from './admin-support.js';
import type { World } from '../src/world/schema.js';

/** Item ids by purpose; all of user 1 unless said otherwise. */
const CASES = [100, 101, 102, 103, 104, 105]; // proto 501, opens with key 502
const KEYS = [110, 111, 112, 113, 114, 115]; // proto 502
const OTHER_KEY = 116; // proto 512: the key of another case
const CARD = 120; // proto 101: cannot be opened
const GIFTS = [130, 131, 132, 133]; // proto 401: gift set of 101, 601, 701
const WEIGHTED = [140, 141]; // proto 510: a case without a key, weights 3:1
const EMPTY_GIFT = 150; // proto 402: a gift set with nothing inside
const OTHERS_CASE = 200; // user 2
const OTHERS_KEY = 201; // user 2
const FRIEND = 2;
const STRANGER = 3;
const BOT = 4;

const world: World = {
  ...catalogWorld,
  item_protos: [
    ...catalogWorld.item_protos!,
    {
      item_proto_id: 401,
      type: 1,
      quality_id: 2,
      title: 'Gift set',
      drop: [{ item_proto_id: 101 }, { item_proto_id: 601 }, { item_proto_id: 702, is_secondary: 1 }],
      can_craft: 0,
    },
    { item_proto_id: 402, type: 1, quality_id: 1, title: 'Empty gift set', drop: [], can_craft: 0 },
    {
      item_proto_id: 510,
      type: 2,
      quality_id: 1,
      title: 'Keyless case',
      drop: [
        { item_proto_id: 101, weight: 3 },
        { item_proto_id: 201, weight: 1 },
      ],
      can_craft: 0,
    },
    {
      item_proto_id: 511,
      type: 2,
      quality_id: 1,
      title: 'Other case',
      key_item_proto_id: 512,
      drop: [{ item_proto_id: 101 }],
      can_craft: 0,
    },
    { item_proto_id: 512, type: 3, quality_id: 1, title: 'Other key', case_item_proto_ids: [511], can_craft: 0 },
  ],
  users: [user(1), user(FRIEND), user(STRANGER), user(BOT, { bot_owner: 1 })],
  friends: [[1, FRIEND]],
  items: [
    ...CASES.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 501, ts_owned: 100 })),
    ...KEYS.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 502, ts_owned: 100 })),
    { item_id: OTHER_KEY, user_id: 1, item_proto_id: 512 },
    { item_id: CARD, user_id: 1, item_proto_id: 101 },
    ...GIFTS.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 401 })),
    ...WEIGHTED.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 510 })),
    { item_id: EMPTY_GIFT, user_id: 1, item_proto_id: 402 },
    { item_id: OTHERS_CASE, user_id: 2, item_proto_id: 501 },
    { item_id: OTHERS_KEY, user_id: 2, item_proto_id: 502 },
  ],
};

const CASE_DROPS = [101, 201, 301];

describe('inventory.open', () => {
  let server: TestServer;
  let token: string;
  let friendToken: string;
  let botToken: string;
  before(async () => {
    server = await startTestServer({ world, config: { adminKey: ADMIN_KEY } });
    token = await tokenFor(server, 1);
    friendToken = await tokenFor(server, FRIEND);
    botToken = await tokenFor(server, BOT, { bot: true });
  });
  after(() => server.close());

  const open = (params: Record<string, unknown>, t = token) => callOk(server, 'inventory.open', params, { token: t });
  const fails = (params: Record<string, unknown>, code: number, t = token) =>
    callFails(server, 'inventory.open', params, code, { token: t });
  const draws = () => server.db.kysely.selectFrom('draws').selectAll().orderBy('draw_id').execute();
  const chat = async () => (await callOk(server, 'gchat.get', {})).messages as any[];
  const admin = (method: string, params: Record<string, unknown>) =>
    server.call(`admin.${method}`, params, { headers: { 'x-admin-key': ADMIN_KEY } });

  test('a case and its key are consumed for one item drawn from the drop list, recorded with its odds and announced', async () => {
    const before = await draws();
    const data = await open({ item_id: CASES[0], key_item_id: KEYS[0] });
    assert.equal(data.items.length, 1);
    const item = data.items[0];
    assert.ok(CASE_DROPS.includes(item.item_proto_id), JSON.stringify(item));
    const now = Math.floor(server.clock.now() / 1000);
    assert.equal(item.ts_owned, now);
    assert.deepEqual(await ownedIds(server, 1, 501), CASES.slice(1));
    assert.deepEqual(await ownedIds(server, 1, 502), KEYS.slice(1));
    assert.ok((await ownedIds(server, 1, item.item_proto_id)).includes(item.item_id));
    const consumed = await server.db.kysely
      .selectFrom('items')
      .select(['state', 'ended_at'])
      .where('item_id', 'in', [CASES[0], KEYS[0]])
      .execute();
    assert.deepEqual(consumed, [
      { state: 'consumed', ended_at: now },
      { state: 'consumed', ended_at: now },
    ]);

    const recorded = (await draws()).slice(before.length);
    assert.equal(recorded.length, 1);
    const odds = JSON.stringify(CASE_DROPS.map((id) => ({ item_proto_id: id, weight: 1 })));
    assert.deepEqual(
      { ...recorded[0], draw_id: 0 },
      {
        draw_id: 0,
        ts: now,
        user_id: 1,
        receiver_user_id: 1,
        kind: 'case',
        case_item_id: CASES[0],
        case_item_proto_id: 501,
        key_item_id: KEYS[0],
        key_item_proto_id: 502,
        result_item_ids: `[${item.item_id}]`,
        result_item_proto_ids: `[${item.item_proto_id}]`,
        odds_version: recorded[0].odds_version,
        odds,
        request_id: null,
        answer: JSON.stringify(data.items),
      },
    );
    assert.match(recorded[0].odds_version, /^[0-9a-f]{16}$/);

    const last = (await chat()).at(-1);
    assert.deepEqual(
      { ...last, msg_id: '' },
      { type: 2, user_id: 1, msg_id: '', ts: now, case_item_proto_id: 501, drop_item_proto_id: item.item_proto_id },
    );
  });

  test('errors: 603 for items not owned by the caller, used up or a wrong key; 624 for what cannot be opened; 2 for a missing or needless key', async () => {
    const before = await draws();
    await fails({ item_id: OTHERS_CASE, key_item_id: KEYS[1] }, 603);
    await fails({ item_id: CASES[1], key_item_id: OTHERS_KEY }, 603);
    await fails({ item_id: CASES[0], key_item_id: KEYS[1] }, 603); // opened already
    await fails({ item_id: CASES[1], key_item_id: KEYS[0] }, 603); // key used up
    await fails({ item_id: CASES[1], key_item_id: OTHER_KEY }, 603); // another case's key
    await fails({ item_id: CASES[1], key_item_id: CARD }, 603); // not a key
    await fails({ item_id: CASES[1], key_item_id: CASES[1] }, 603);
    await fails({ item_id: 999_999, key_item_id: KEYS[1] }, 603);
    await fails({ item_id: CARD }, 624);
    await fails({ item_id: KEYS[1] }, 624);
    await fails({ item_id: EMPTY_GIFT }, 624);
    const missing = await fails({ item_id: CASES[1] }, 2);
    assert.equal(missing.body.description, 'parameter key_item_id: this case opens with a key');
    await fails({ item_id: GIFTS[0], key_item_id: KEYS[1] }, 2);
    await fails({ item_id: WEIGHTED[0], key_item_id: KEYS[1] }, 2);
    await fails({ item_id: CASES[1], key_item_id: KEYS[1], user_id_receiver: FRIEND }, 2);
    await fails({}, 2);
    await callFails(server, 'inventory.open', { item_id: CASES[1], key_item_id: KEYS[1] }, 1);
    await fails({ item_id: CASES[1], key_item_id: KEYS[1] }, 4, botToken);
    // Nothing was consumed or recorded.
    assert.deepEqual(await ownedIds(server, 1, 501), CASES.slice(1));
    assert.deepEqual(await ownedIds(server, 1, 502), KEYS.slice(1));
    assert.equal((await ownedIds(server, 1, 101)).includes(CARD), true);
    assert.equal((await draws()).length, before.length);
  });

  test('a gift set gives every item of its list; the chat names its best item', async () => {
    const data = await open({ item_id: GIFTS[0] });
    assert.deepEqual(
      data.items.map((i: any) => i.item_proto_id),
      [101, 601, 702],
    );
    assert.deepEqual(
      data.items.map((i: any) => i.item_id),
      [...data.items.map((i: any) => i.item_id)].sort((a: number, b: number) => a - b),
    );
    assert.deepEqual(await ownedIds(server, 1, 401), GIFTS.slice(1));
    const last = (await chat()).at(-1);
    assert.equal(last.type, 2);
    assert.equal(last.case_item_proto_id, 401);
    assert.equal(last.drop_item_proto_id, 702);
    const [draw] = (await draws()).slice(-1);
    assert.equal(draw.kind, 'gift');
    assert.equal(draw.key_item_id, null);
  });

  test('a gift set opened for a friend: the friend receives the items, the chat posts a present', async () => {
    const friendBefore = await ownedIds(server, FRIEND);
    const data = await open({ item_id: GIFTS[1], user_id_receiver: FRIEND });
    assert.deepEqual(
      data.items.map((i: any) => i.item_proto_id),
      [101, 601, 702],
    );
    const friendAfter = await ownedIds(server, FRIEND);
    assert.deepEqual(
      friendAfter,
      [...friendBefore, ...data.items.map((i: any) => i.item_id)].sort((a, b) => a - b),
    );
    const inventory = await callOk(server, 'inventory.get', { add_legacy: 0 }, { token: friendToken });
    const now = Math.floor(server.clock.now() / 1000);
    // Each item says it was a present, as a gift received in a trade does; in the opener's answer too.
    for (const item of data.items) {
      const held = inventory.items.find((i: any) => i.item_id === item.item_id);
      assert.deepEqual(held.gift, { from_user_id: 1, to_user_id: FRIEND, ts: now });
      assert.deepEqual(item.gift, held.gift);
    }
    const last = (await chat()).at(-1);
    assert.deepEqual(
      { ...last, msg_id: '', ts: 0 },
      { type: 3, user_id: 1, msg_id: '', ts: 0, user_id_receiver: FRIEND, item_proto_id: 401 },
    );
    const [draw] = (await draws()).slice(-1);
    assert.equal(draw.user_id, 1);
    assert.equal(draw.receiver_user_id, FRIEND);

    await fails({ item_id: GIFTS[2], user_id_receiver: STRANGER }, 2);
    await fails({ item_id: GIFTS[2], user_id_receiver: 999_999 }, 101);
    assert.deepEqual(await ownedIds(server, 1, 401), GIFTS.slice(2));
  });

  test('request_id: a retry answers the first result again and opens nothing more', async () => {
    const first = await open({ item_id: CASES[1], key_item_id: KEYS[1], request_id: 'retry-1' });
    const count = (await draws()).length;
    const again = await open({ item_id: CASES[1], key_item_id: KEYS[1], request_id: 'retry-1' });
    assert.deepEqual(again, first);
    // Whatever else the retry names, it is the first request's answer.
    assert.deepEqual(await open({ item_id: CASES[2], key_item_id: KEYS[2], request_id: 'retry-1' }), first);
    assert.equal((await draws()).length, count);
    assert.deepEqual(await ownedIds(server, 1, 501), CASES.slice(2));
    // Another request id is another request; another user's same id is theirs.
    await fails({ item_id: CASES[1], key_item_id: KEYS[1], request_id: 'retry-2' }, 603);
    await callFails(server, 'inventory.open', { item_id: CASES[2], key_item_id: KEYS[2], request_id: 'retry-1' }, 603, {
      token: friendToken,
    });
  });

  test('published odds: every drop entry carries its weight and its exact chance, in the catalogue and in inventories', async () => {
    const protos = (await callOk(server, 'data.getItemProtos', { item_proto_ids: '510,401' })).item_protos;
    assert.deepEqual(protos[0].drop, [
      { item_proto_id: 101, weight: 3, chance: 0.75 },
      { item_proto_id: 201, weight: 1, chance: 0.25 },
    ]);
    assert.deepEqual(protos[1].drop, [
      { item_proto_id: 101, chance: 1 },
      { item_proto_id: 601, chance: 1 },
      { item_proto_id: 702, is_secondary: 1, chance: 1 },
    ]);
    const found = (await callOk(server, 'data.searchItemProtos', { type: '2', count: 50 })).item_protos;
    for (const proto of found)
      assert.equal(
        proto.drop.reduce((sum: number, d: any) => sum + d.chance, 0),
        1,
        `chances of ${proto.item_proto_id}`,
      );
    const inventory = await callOk(server, 'inventory.get', { add_legacy: 0 }, { token });
    const weighted = inventory.items.find((i: any) => i.item_proto_id === 510);
    assert.deepEqual(weighted.drop, protos[0].drop);

    const data = await open({ item_id: WEIGHTED[0] });
    assert.ok([101, 201].includes(data.items[0].item_proto_id));
    const [draw] = (await draws()).slice(-1);
    assert.equal(
      draw.odds,
      JSON.stringify([
        { item_proto_id: 101, weight: 3 },
        { item_proto_id: 201, weight: 1 },
      ]),
    );
  });

  test('admin.listDraws and admin.exportDraws show the record by user and by case, and are audited', async () => {
    const all = await draws();
    const byUser = await admin('listDraws', { user_id: 1, count: 100 });
    assert.equal(byUser.body.code, 0);
    assert.equal(byUser.body.data.count, all.length);
    assert.deepEqual(
      byUser.body.data.draws.map((d: any) => d.draw_id),
      all.map((d) => d.draw_id),
    );
    const first = byUser.body.data.draws[0];
    assert.deepEqual(first, {
      draw_id: all[0].draw_id,
      ts: all[0].ts,
      user_id: 1,
      user_id_receiver: 1,
      kind: 'case',
      case_item_id: CASES[0],
      case_item_proto_id: 501,
      key_item_id: KEYS[0],
      key_item_proto_id: 502,
      result_item_ids: JSON.parse(all[0].result_item_ids),
      result_item_proto_ids: JSON.parse(all[0].result_item_proto_ids),
      odds_version: all[0].odds_version,
      odds: CASE_DROPS.map((id) => ({ item_proto_id: id, weight: 1 })),
    });
    const byCase = await admin('listDraws', { case_item_proto_id: 401 });
    assert.deepEqual(
      byCase.body.data.draws.map((d: any) => d.kind),
      ['gift', 'gift'],
    );
    const page = await admin('listDraws', { user_id: 1, offset: 1, count: 1 });
    assert.deepEqual(
      page.body.data.draws.map((d: any) => d.draw_id),
      [all[1].draw_id],
    );
    assert.equal((await admin('listDraws', { user_id: 1, since: all[0].ts + 1 })).body.data.count, 0);
    assert.equal((await admin('listDraws', {})).body.code, 2);
    assert.equal((await admin('listDraws', { user_id: 999_999 })).body.code, 101);

    const exported = await admin('exportDraws', { case_item_proto_id: 501 });
    assert.equal(exported.body.code, 0);
    const lines = exported.body.data.csv.split('\r\n');
    assert.equal(
      lines[0],
      'draw_id,ts,user_id,user_id_receiver,kind,case_item_id,case_item_proto_id,key_item_id,key_item_proto_id,result_item_ids,result_item_proto_ids,odds_version,odds,request_id',
    );
    const caseDraws = all.filter((d) => d.case_item_proto_id === 501);
    assert.equal(exported.body.data.count, caseDraws.length);
    assert.equal(lines.length, caseDraws.length + 2);
    assert.equal(lines.at(-1), '');
    const d = caseDraws[0];
    assert.equal(
      lines[1],
      `${d.draw_id},${d.ts},1,1,case,${CASES[0]},501,${KEYS[0]},502,${d.result_item_ids},${d.result_item_proto_ids},${d.odds_version},"${d.odds.replace(/"/g, '""')}",`,
    );
    const audit = await admin('auditLog', { count: 20 });
    const actions = audit.body.data.entries.map((e: any) => e.action);
    assert.ok(actions.includes('admin.listDraws') && actions.includes('admin.exportDraws'));
  });
});

describe('inventory.open: the lowest class announced', () => {
  test('drops below the configured class open silently; those at or above it are announced', async () => {
    const server = await startTestServer({ world, config: { announceDropsFromClass: 2 } });
    try {
      const token = await tokenFor(server, 1);
      const messages = async () => (await callOk(server, 'gchat.get', {})).messages.length;
      const start = await messages();
      // The keyless case drops class 1 (101) or class 2 (201): its announcement follows the drop.
      const drop = (await callOk(server, 'inventory.open', { item_id: WEIGHTED[0] }, { token })).items[0];
      assert.equal(await messages(), start + (drop.item_proto_id === 201 ? 1 : 0));
      const afterCase = await messages();
      // The gift set's best item is of class 2.
      await callOk(server, 'inventory.open', { item_id: GIFTS[0] }, { token });
      assert.equal(await messages(), afterCase + 1);
    } finally {
      await server.close();
    }
  });
});
