import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { DB_KIND, startTestServer, type TestServer } from './helpers.js';
import { catalogWorld, tokenFor, user } from './item-fixtures.js';
import type { World } from '../src/world/schema.js';
import { missing } from './components.js';

/*
 * Crafts racing for the same items, with real concurrent HTTP requests over sockets. On
 * PostgreSQL two servers share the database (and Redis), as two processes of one deployment
 * do, and requests alternate between them; SQLite runs as one process.
 */

const POOL = 300;
const FIRST_ID = 1000;
const pool = Array.from({ length: POOL }, (_, i) => FIRST_ID + i);
const ADMIN_KEY = 'admin-key-of-the-craft-race-test';
const CLASS_2_RESULTS = [201, 202];

const world: World = {
  ...catalogWorld,
  users: [user(1), user(2)],
  items: pool.map((item_id, i) => ({ item_id, user_id: 1, item_proto_id: i % 2 === 0 ? 101 : 102, ts_owned: 100 + i })),
};

/** A small seeded generator, so a failing run can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function pick(next: () => number, from: number[], count: number): number[] {
  const copy = [...from];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy.slice(0, count);
}

const ascending = (ids: number[]) => [...ids].sort((a, b) => a - b);

const servers: TestServer[] = [];
const bases: string[] = [];
const tokens = new Map<number, string>();
let sent = 0;

/** On PostgreSQL the servers are joined by Redis: without one the races are not run. */
const clustered = DB_KIND === 'postgres';
const withoutRedis = clustered && missing.redis;

before(async () => {
  if (withoutRedis) return;
  const config = { rateLimit: false, adminKey: ADMIN_KEY };
  const first = await startTestServer({ world, config, redis: clustered });
  servers.push(first);
  if (clustered) servers.push(await startTestServer({ location: first.location, clock: first.clock, config, redis: true }));
  for (const server of servers) {
    await server.app.listen({ host: '127.0.0.1', port: 0 });
    bases.push(`http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`);
  }
  for (const userId of [1, 2]) tokens.set(userId, await tokenFor(first, userId));
});
after(async () => {
  for (const server of [...servers].reverse()) await server.close();
});

/** One POST over a socket, to each server in turn. */
async function post(method: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<any> {
  const base = bases[sent++ % bases.length];
  const response = await fetch(`${base}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200);
  return response.json();
}

const craft = (ids: number[], userId = 1) =>
  post('inventory.craft', { item_ids: ids.join(',') }, { authorization: `Bearer ${tokens.get(userId)}` });
const revoke = (itemId: number) => post('admin.revokeItem', { item_id: itemId, reason: 'race' }, { 'x-admin-key': ADMIN_KEY });

/**
 * The history accounts for every item: each one is an original item or the result of exactly
 * one craft; each is owned, or consumed by exactly one recorded craft (which lists it), or
 * revoked (with one revocations row); every craft consumed ten items of its user and made one.
 */
async function assertConservation(): Promise<{ crafts: number; revoked: number; owned: number }> {
  const k = servers[0].db.kysely;
  const [items, crafts, revocations] = await Promise.all([
    k.selectFrom('items').selectAll().execute(),
    k.selectFrom('crafts').selectAll().execute(),
    k.selectFrom('revocations').selectAll().execute(),
  ]);
  const itemById = new Map(items.map((i) => [i.item_id, i]));
  const consumedBy = new Map<number, number>();
  const resultOf = new Map<number, number>();
  for (const craft of crafts) {
    const consumed: number[] = JSON.parse(craft.consumed_item_ids);
    assert.equal(new Set(consumed).size, 10, `craft ${craft.craft_id} consumed ten distinct items`);
    for (const id of consumed) {
      assert.ok(!consumedBy.has(id), `item ${id} consumed by crafts ${consumedBy.get(id)} and ${craft.craft_id}`);
      consumedBy.set(id, craft.craft_id);
      const item = itemById.get(id);
      assert.ok(item, `item ${id} consumed by craft ${craft.craft_id} is kept`);
      assert.equal(item.state, 'consumed');
      assert.equal(item.craft_id, craft.craft_id);
      assert.equal(item.user_id, craft.user_id, 'a consumed item keeps its owner');
      assert.equal(item.ended_at, craft.ts);
    }
    assert.ok(craft.result_item_id !== null, `craft ${craft.craft_id} has a result`);
    assert.ok(!resultOf.has(craft.result_item_id!), `item ${craft.result_item_id} is the result of one craft`);
    resultOf.set(craft.result_item_id!, craft.craft_id);
    const result = itemById.get(craft.result_item_id!);
    assert.ok(result, `the result of craft ${craft.craft_id} exists`);
    assert.equal(result.created_by_craft_id, craft.craft_id);
    assert.equal(result.user_id, craft.user_id);
    assert.equal(result.ts_owned, craft.ts);
    assert.equal(result.quality_id, 2);
    assert.ok(CLASS_2_RESULTS.includes(result.item_proto_id), `result ${result.item_proto_id} is a craft result of class 2`);
  }
  const revokedIds = new Set(revocations.map((r) => r.item_id));
  assert.equal(revokedIds.size, revocations.length, 'one revocation per item');
  const original = new Set(pool);
  for (const item of items) {
    const origins = [original.has(item.item_id), item.created_by_craft_id !== null].filter(Boolean).length;
    assert.equal(origins, 1, `item ${item.item_id} has exactly one origin`);
    if (item.created_by_craft_id !== null) assert.equal(resultOf.get(item.item_id), item.created_by_craft_id);
    const fates = [item.state === 'owned', consumedBy.has(item.item_id), revokedIds.has(item.item_id)].filter(Boolean).length;
    assert.equal(fates, 1, `item ${item.item_id} (${item.state}) has exactly one fate`);
    if (item.state === 'owned') assert.equal(item.craft_id, null);
    if (revokedIds.has(item.item_id)) assert.equal(item.state, 'revoked');
  }
  for (const id of pool) assert.ok(itemById.has(id), `item ${id} still exists`);
  assert.equal(items.length, POOL + crafts.length, 'no item appeared from nowhere');
  const owned = items.filter((i) => i.state === 'owned' && i.user_id === 1).length;
  assert.equal(owned, POOL - 10 * crafts.length - revokedIds.size + crafts.length);
  return { crafts: crafts.length, revoked: revokedIds.size, owned };
}

/** The recorded craft behind a successful answer consumed exactly the items the request sent. */
async function assertRecorded(answer: any, ids: number[]): Promise<void> {
  const item = answer.data.item;
  const craft = await servers[0].db.kysely
    .selectFrom('crafts')
    .selectAll()
    .where('result_item_id', '=', item.item_id)
    .executeTakeFirstOrThrow();
  assert.equal(craft.user_id, 1);
  assert.deepEqual(JSON.parse(craft.consumed_item_ids), ascending(ids));
  assert.equal(item.ts_owned, craft.ts);
}

describe('inventory.craft under concurrency', { skip: withoutRedis }, () => {
  test('two crafts sharing one item: exactly one wins, the other answers 603', async () => {
    for (let round = 0; round < 8; round++) {
      const start = FIRST_ID + round * 19;
      const first = Array.from({ length: 10 }, (_, i) => start + i);
      const second = Array.from({ length: 10 }, (_, i) => start + 9 + i);
      const answers = await Promise.all([craft(first), craft(second)]);
      assert.deepEqual(
        answers.map((a) => a.code).sort((a, b) => a - b),
        [0, 603],
        `round ${round}: ${JSON.stringify(answers)}`,
      );
      const winner = answers.findIndex((a) => a.code === 0);
      await assertRecorded(answers[winner], winner === 0 ? first : second);
    }
    const totals = await assertConservation();
    assert.equal(totals.crafts, 8);
  });

  test('the same ten items sent six times at once: one craft, five 603', async () => {
    const identical = Array.from({ length: 10 }, (_, i) => FIRST_ID + 160 + i);
    const answers = await Promise.all(Array.from({ length: 6 }, () => craft(identical)));
    assert.deepEqual(
      answers.map((a) => a.code).sort((a, b) => a - b),
      [0, 603, 603, 603, 603, 603],
    );
    await assertRecorded(
      answers.find((a) => a.code === 0),
      identical,
    );
    const totals = await assertConservation();
    assert.equal(totals.crafts, 9);
  });

  test('a burst of overlapping crafts, revocations and crafts by another user conserves every item', async () => {
    const next = random(20260101);
    const available = pool.filter((id) => id >= FIRST_ID + 170);
    const crafts = Array.from({ length: 40 }, () => pick(next, available, 10));
    // Disjoint crafts that only the revocations and the random ones may beat.
    const disjoint = Array.from({ length: 5 }, (_, i) => available.slice(i * 10, i * 10 + 10));
    const revocations = pick(next, available, 8);
    const [answers, disjointAnswers, revoked, foreign] = await Promise.all([
      Promise.all(crafts.map((ids) => craft(ids))),
      Promise.all(disjoint.map((ids) => craft(ids))),
      Promise.all(revocations.map((id) => revoke(id))),
      Promise.all(crafts.slice(0, 5).map((ids) => craft(ids, 2))),
    ]);
    for (const answer of [...answers, ...disjointAnswers]) assert.ok([0, 603].includes(answer.code), JSON.stringify(answer));
    // A revocation that lost the race to a craft finds the item consumed and answers 2.
    for (const answer of revoked) assert.ok([0, 2].includes(answer.code), JSON.stringify(answer));
    for (const answer of foreign) assert.equal(answer.code, 603);
    const won = [...answers, ...disjointAnswers].filter((a) => a.code === 0).length;
    assert.ok(won >= 1, 'at least one craft succeeds');
    for (const [i, answer] of answers.entries()) if (answer.code === 0) await assertRecorded(answer, crafts[i]);
    for (const [i, answer] of disjointAnswers.entries()) if (answer.code === 0) await assertRecorded(answer, disjoint[i]);

    const totals = await assertConservation();
    assert.equal(totals.crafts, 9 + won);
    assert.equal(totals.revoked, revoked.filter((a) => a.code === 0).length);

    // Every server answers the same inventory, and its count agrees with the history.
    for (const base of bases) {
      const response = await fetch(`${base}/api/inventory.get?count=0&access_token=${tokens.get(1)}`);
      const body: any = await response.json();
      assert.equal(body.code, 0);
      assert.equal(body.data.count, totals.owned);
    }
  });
});
