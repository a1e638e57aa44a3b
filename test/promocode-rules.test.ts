import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callFails, callOk, catalogWorld, ownedIds, tokenFor, user } from './item-fixtures.js';
import { ADMIN_KEY } from './admin-support.js';
import { exportWorld } from '../src/world/export.js';
import { importWorld } from '../src/world/import.js';
import type { World } from '../src/world/schema.js';
import { checkLedger } from '../src/market/index.js';

const REFUSED = { code: 1501, description: 'the promo code is unknown, expired, used up or already used' };
const USERS = [1, 2, 3, 4, 5, 6];
const BOT = 7;

const world: World = {
  ...catalogWorld,
  users: [...USERS.map((id) => user(id)), user(BOT, { bot_owner: 1 })],
  promocodes: [
    { code: 'FROM-THE-WORLD', item_proto_ids: [701] },
    { code: 'OLD-WORLD', item_proto_ids: [701], disabled: 1 },
  ],
};

describe('wallet.promocodeActivate', () => {
  let server: TestServer;
  const tokens = new Map<number, string>();
  before(async () => {
    server = await startTestServer({ world, config: { adminKey: ADMIN_KEY } });
    for (const id of [...USERS, BOT]) tokens.set(id, await tokenFor(server, id, { bot: id === BOT }));
  });
  after(() => server.close());

  const activate = (userId: number, promocode: string) =>
    server.call('wallet.promocodeActivate', { promocode }, { token: tokens.get(userId) });
  const admin = async (method: string, params: Record<string, unknown>) =>
    (await server.call(`admin.${method}`, params, { headers: { 'x-admin-key': ADMIN_KEY } })).body;
  const now = () => Math.floor(server.clock.now() / 1000);

  test('admins create codes; a user redeems one once, in any case, for its items, and the chat says so', async () => {
    const created = await admin('createPromocode', {
      code: 'welcome-2026',
      item_proto_ids: '101,601',
      max_uses: 2,
      ts_expires: now() + 1000,
    });
    assert.deepEqual(created, {
      code: 0,
      data: {
        promocode: {
          code: 'WELCOME-2026',
          item_proto_ids: [101, 601],
          max_uses: 2,
          uses: 0,
          ts_expires: now() + 1000,
          disabled: 0,
          created_at: now(),
        },
      },
    });
    const answer = await activate(1, ' Welcome-2026 ');
    assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
    const items = answer.body.data.items;
    assert.deepEqual(
      items.map((i: any) => i.item_proto_id),
      [101, 601],
    );
    assert.deepEqual(
      await ownedIds(server, 1),
      items.map((i: any) => i.item_id),
    );
    assert.ok(items.every((i: any) => i.ts_owned === now()));
    const last = (await callOk(server, 'gchat.get', {})).messages.at(-1);
    assert.deepEqual({ ...last, msg_id: '' }, { type: 4, user_id: 1, msg_id: '', ts: now(), item_proto_ids: [101, 601] });
    const use = await server.db.kysely.selectFrom('promocode_uses').selectAll().where('user_id', '=', 1).executeTakeFirstOrThrow();
    assert.deepEqual(use, { code: 'WELCOME-2026', user_id: 1, ts: now(), item_ids: JSON.stringify(items.map((i: any) => i.item_id)) });
  });

  test('unknown, already used, used up, expired and disabled codes all answer 1501 with one description', async () => {
    const refusals = [
      await activate(1, 'WELCOME-2026'), // already used by this user
      await activate(2, 'NO-SUCH-CODE'),
      await activate(2, '!!'),
    ];

    assert.equal((await activate(2, 'WELCOME-2026')).body.code, 0);
    refusals.push(await activate(3, 'WELCOME-2026')); // used up (2 of 2)
    await admin('createPromocode', { code: 'SOON-GONE', item_proto_ids: '101', ts_expires: now() + 10 });
    server.clock.advance(10_000);
    refusals.push(await activate(3, 'SOON-GONE'));
    await admin('createPromocode', { code: 'SWITCHED-OFF', item_proto_ids: '101' });
    // "ſ" (long s) is "S" in full Unicode upper case: a look-alike, not the code.
    refusals.push(await activate(3, '\u017fwitched-off'));
    const disabled = await admin('disablePromocode', { code: 'switched-off' });
    assert.equal(disabled.data.promocode.disabled, 1);
    refusals.push(await activate(3, 'SWITCHED-OFF'));
    refusals.push(await activate(3, 'OLD-WORLD'));
    for (const refusal of refusals) assert.deepEqual(refusal.body, REFUSED);
    assert.deepEqual(await ownedIds(server, 3), []);
    const uses = await server.db.kysely.selectFrom('promocode_uses').select(['code', 'user_id']).orderBy('user_id').execute();
    assert.deepEqual(uses, [
      { code: 'WELCOME-2026', user_id: 1 },
      { code: 'WELCOME-2026', user_id: 2 },
    ]);
    // The code from the world file works.
    assert.deepEqual(
      (await callOk(server, 'wallet.promocodeActivate', { promocode: 'from-the-world' }, { token: tokens.get(3) })).items.map(
        (i: any) => i.item_proto_id,
      ),
      [701],
    );
  });

  test('failed attempts are limited per user: the eleventh in ten minutes answers 7, even for a good code, until the window ends', async () => {
    await admin('createPromocode', { code: 'PATIENCE', item_proto_ids: '601' });
    for (let i = 0; i < 10; i++) assert.deepEqual((await activate(4, `GUESS-${i}`)).body, REFUSED);
    const limited = await activate(4, 'PATIENCE');
    assert.equal(limited.body.code, 7);
    assert.equal(limited.status, 429);
    assert.ok(limited.body.data.retry_after >= 1 && limited.body.data.retry_after <= 600);
    // Another user is not limited; successes do not count.
    for (let i = 0; i < 9; i++) assert.deepEqual((await activate(5, `GUESS-${i}`)).body, REFUSED);
    assert.equal((await activate(5, 'PATIENCE')).body.code, 0);
    assert.deepEqual((await activate(5, 'GUESS-9')).body, REFUSED);
    assert.equal((await activate(5, 'GUESS-10')).body.code, 7);
    server.clock.advance(601_000);
    assert.equal((await activate(4, 'PATIENCE')).body.code, 0);
  });

  test('parameters, sign-in and bots', async () => {
    await callFails(server, 'wallet.promocodeActivate', {}, 2, { token: tokens.get(6) });
    await callFails(server, 'wallet.promocodeActivate', { promocode: 'x'.repeat(65) }, 2, { token: tokens.get(6) });
    await callFails(server, 'wallet.promocodeActivate', { promocode: 'PATIENCE' }, 1);
    await callFails(server, 'wallet.promocodeActivate', { promocode: 'PATIENCE' }, 4, { token: tokens.get(BOT) });
  });

  test('admins list codes with their uses; bad codes are refused; every call is audited', async () => {
    const listed = await admin('listPromocodes', { count: 100 });
    assert.equal(listed.code, 0);
    const byCode = new Map(listed.data.promocodes.map((p: any) => [p.code, p]));
    assert.deepEqual([...byCode.keys()].sort(), ['FROM-THE-WORLD', 'OLD-WORLD', 'PATIENCE', 'SOON-GONE', 'SWITCHED-OFF', 'WELCOME-2026']);
    assert.equal(listed.data.count, 6);
    assert.equal((byCode.get('WELCOME-2026') as any).uses, 2);
    assert.equal((byCode.get('PATIENCE') as any).uses, 2);
    assert.equal((byCode.get('SWITCHED-OFF') as any).uses, 0);
    assert.equal((await admin('listPromocodes', { offset: 5 })).data.promocodes.length, 1);
    assert.equal((await admin('createPromocode', { code: 'welcome-2026', item_proto_ids: '101' })).code, 2);
    assert.equal((await admin('createPromocode', { code: 'UNKNOWN-PROTO', item_proto_ids: '99999' })).code, 2);
    assert.equal((await admin('createPromocode', { code: 'a b', item_proto_ids: '101' })).code, 2);
    // Only ASCII letters are upper-cased: "ﬀﬀ" is not kept as "FFFF", nor "ıtem" as "ITEM".
    assert.equal((await admin('createPromocode', { code: '\ufb00\ufb00', item_proto_ids: '101' })).code, 2);
    assert.equal((await admin('createPromocode', { code: '\u0131tem-code', item_proto_ids: '101' })).code, 2);
    assert.equal((await admin('createPromocode', { code: 'NO-ITEMS', item_proto_ids: '' })).code, 2);
    assert.equal((await admin('disablePromocode', { code: 'NOPE-NOPE' })).code, 2);
    const audit = await admin('auditLog', { count: 100 });
    const actions = new Set(audit.data.entries.map((e: any) => e.action));
    for (const action of ['admin.createPromocode', 'admin.listPromocodes', 'admin.disablePromocode'])
      assert.ok(actions.has(action), action);
  });

  test('world files carry codes both ways', async () => {
    const exported = await exportWorld(server.db);
    // Each code carries its creation time, its count of uses and who redeemed it.
    const listed = new Map((await admin('listPromocodes', { count: 100 })).data.promocodes.map((p: any) => [p.code, p]));
    const stored = await server.db.kysely.selectFrom('promocode_uses').selectAll().orderBy('ts').orderBy('user_id').execute();
    const usage = (code: string) => {
      const { created_at, uses } = listed.get(code) as { created_at: number; uses: number };
      const used_by = stored
        .filter((u) => u.code === code)
        .map((u) => ({ user_id: u.user_id, ts: u.ts, item_ids: JSON.parse(u.item_ids) }));
      return { created_at, uses, ...(used_by.length > 0 ? { used_by } : {}) };
    };
    assert.deepEqual(exported.promocodes, [
      { code: 'FROM-THE-WORLD', item_proto_ids: [701], ...usage('FROM-THE-WORLD') },
      { code: 'OLD-WORLD', item_proto_ids: [701], disabled: 1, ...usage('OLD-WORLD') },
      { code: 'PATIENCE', item_proto_ids: [601], ...usage('PATIENCE') },
      {
        code: 'SOON-GONE',
        item_proto_ids: [101],
        ts_expires: exported.promocodes!.find((p) => p.code === 'SOON-GONE')!.ts_expires,
        ...usage('SOON-GONE'),
      },
      { code: 'SWITCHED-OFF', item_proto_ids: [101], disabled: 1, ...usage('SWITCHED-OFF') },
      {
        code: 'WELCOME-2026',
        item_proto_ids: [101, 601],
        max_uses: 2,
        ts_expires: exported.promocodes!.find((p) => p.code === 'WELCOME-2026')!.ts_expires,
        ...usage('WELCOME-2026'),
      },
    ]);
    assert.deepEqual(
      exported.promocodes!.map((p) => [p.code, p.uses, (p.used_by ?? []).length]),
      [
        ['FROM-THE-WORLD', 1, 1],
        ['OLD-WORLD', 0, 0],
        ['PATIENCE', 2, 2],
        ['SOON-GONE', 0, 0],
        ['SWITCHED-OFF', 0, 0],
        ['WELCOME-2026', 2, 2],
      ],
    );
    const other = await startTestServer();
    try {
      await importWorld(other.db, JSON.parse(JSON.stringify(exported)), { mode: 'replace', now: now() });
      assert.deepEqual(await exportWorld(other.db), exported);
      // A merge replaces a code's definition and keeps its uses.
      await importWorld(
        server.db,
        { promocodes: [{ code: 'welcome-2026', item_proto_ids: [101], max_uses: 5 }] },
        { mode: 'merge', now: now() },
      );
      const merged = await server.db.kysely
        .selectFrom('promocodes')
        .selectAll()
        .where('code', '=', 'WELCOME-2026')
        .executeTakeFirstOrThrow();
      assert.deepEqual([merged.item_proto_ids, Number(merged.max_uses), merged.ts_expires, Number(merged.uses)], ['[101]', 5, null, 2]);
      await assert.rejects(
        importWorld(other.db, { promocodes: [{ code: 'BAD-PROTO', item_proto_ids: [99999] }] }, { mode: 'merge', now: now() }),
        /promocodes\[0\]\.item_proto_ids\[0\]: unknown item_proto_id 99999/,
      );
      await assert.rejects(
        importWorld(
          other.db,
          {
            promocodes: [
              { code: 'TWICE', item_proto_ids: [101] },
              { code: 'twice', item_proto_ids: [101] },
            ],
          },
          { mode: 'merge', now: now() },
        ),
        /promocodes\[1\]\.code: duplicate TWICE/,
      );
    } finally {
      await other.close();
    }
  });

  test('a code may pay money: credited once per redemption through the ledger (kind promocode) and shown in the history', async () => {
    const created = await admin('createPromocode', { code: 'cash-and-card', item_proto_ids: '101', money: 12.34, max_uses: 1 });
    assert.deepEqual(created.data.promocode, {
      code: 'CASH-AND-CARD',
      item_proto_ids: [101],
      max_uses: 1,
      uses: 0,
      disabled: 0,
      created_at: now(),
      money: 12.34,
    });
    const cashOnly = await admin('createPromocode', { code: 'cash-only', money: 0.5 });
    assert.deepEqual(cashOnly.data.promocode.item_proto_ids, []);
    for (const money of [0, 0.001, -1, 1_000_001])
      assert.equal((await admin('createPromocode', { code: 'BAD-MONEY', money })).code, 2, String(money));
    assert.equal((await admin('createPromocode', { code: 'NOTHING-AT-ALL' })).code, 2);

    const paid = await activate(5, 'cash-and-card');
    assert.equal(paid.body.code, 0, JSON.stringify(paid.body));
    assert.deepEqual(
      { money: paid.body.data.money, balance: paid.body.data.balance, protos: paid.body.data.items.map((i: any) => i.item_proto_id) },
      { money: 12.34, balance: 12.34, protos: [101] },
    );
    assert.deepEqual((await activate(6, 'cash-and-card')).body, REFUSED, 'used up: nothing paid');
    assert.deepEqual((await activate(5, 'cash-and-card')).body, REFUSED, 'used: nothing paid again');
    assert.deepEqual((await activate(5, 'cash-only')).body, { code: 0, data: { items: [], money: 0.5, balance: 12.84 } });

    const history = await callOk(server, 'wallet.getHistory', {}, { token: tokens.get(5) });
    assert.deepEqual(history, {
      count: 2,
      history: [
        { id: history.history[0].id, ts: now(), amount: 0.5, balance: 12.84, kind: 'promocode' },
        { id: history.history[1].id, ts: now(), amount: 12.34, balance: 12.34, kind: 'promocode' },
      ],
    });
    assert.equal((await callOk(server, 'wallet.getHistory', {}, { token: tokens.get(6) })).count, 0);
    assert.deepEqual(await checkLedger(server.db.kysely), []);
    const exported = await exportWorld(server.db);
    assert.deepEqual(
      exported.promocodes!.filter((p) => p.money !== undefined).map((p) => [p.code, p.money, p.uses]),
      [
        ['CASH-AND-CARD', 1234, 1],
        ['CASH-ONLY', 50, 1],
      ],
    );
  });
});
