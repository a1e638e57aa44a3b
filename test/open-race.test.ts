import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { catalogWorld, tokenFor, user } from './item-fixtures.js';
import type { World } from '../src/world/schema.js';
import { missing } from './components.js';
import { CLUSTERED, startProcesses, type Processes } from './race-support.js';

/*
 * Opens racing for the same case, with real concurrent HTTP requests over sockets. On
 * PostgreSQL two servers share the database (and Redis), as two processes of one deployment
 * do, and requests alternate between them; SQLite runs as one process.
 */

const ROUNDS = 5;
const RACERS = 10;
const CASE_IDS = Array.from({ length: ROUNDS + 1 }, (_, i) => 1000 + i);
const KEY_IDS = Array.from({ length: (ROUNDS + 1) * RACERS }, (_, i) => 2000 + i);
const DROPS = [101, 201, 301];

const world: World = {
  ...catalogWorld,
  users: [user(1)],
  items: [
    ...CASE_IDS.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 501 })),
    ...KEY_IDS.map((item_id) => ({ item_id, user_id: 1, item_proto_id: 502 })),
  ],
};

let processes: Processes;
let token = '';
let sent = 0;

/** On PostgreSQL the servers are joined by Redis: without one the races are not run. */
const withoutRedis = CLUSTERED && missing.redis;

before(async () => {
  if (withoutRedis) return;
  processes = await startProcesses({ world, config: { rateLimit: false }, redis: CLUSTERED });
  token = await tokenFor(processes.servers[0], 1);
});
after(async () => {
  await processes?.close();
});

/** One POST over a socket, to each server in turn. */
async function open(params: Record<string, unknown>): Promise<any> {
  const base = processes.urls[sent++ % 2];
  const response = await fetch(`${base}/api/inventory.open`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(params),
  });
  assert.equal(response.status, 200);
  return response.json();
}

/** Every consumed case and key belongs to exactly one recorded draw, and every draw made one item. */
async function assertConservation(): Promise<number> {
  const k = processes.servers[0].db.kysely;
  const [items, draws] = await Promise.all([k.selectFrom('items').selectAll().execute(), k.selectFrom('draws').selectAll().execute()]);
  const byId = new Map(items.map((i) => [i.item_id, i]));
  const consumedBy = new Map<number, number>();
  const results = new Set<number>();
  for (const draw of draws) {
    for (const id of [draw.case_item_id, draw.key_item_id!]) {
      assert.ok(!consumedBy.has(id), `item ${id} consumed by draws ${consumedBy.get(id)} and ${draw.draw_id}`);
      consumedBy.set(id, draw.draw_id);
      assert.equal(byId.get(id)?.state, 'consumed');
    }
    const [result] = JSON.parse(draw.result_item_ids) as number[];
    assert.ok(!results.has(result));
    results.add(result);
    assert.ok(DROPS.includes(byId.get(result)!.item_proto_id));
    assert.equal(byId.get(result)!.state, 'owned');
  }
  for (const item of items) {
    if (item.state === 'consumed') assert.ok(consumedBy.has(item.item_id), `consumed item ${item.item_id} has a draw`);
    if (item.item_id < 1000 || item.item_id >= 3000) assert.ok(results.has(item.item_id), `item ${item.item_id} came from a draw`);
  }
  assert.equal(items.length, CASE_IDS.length + KEY_IDS.length + draws.length, 'no item appeared from nowhere');
  return draws.length;
}

describe('inventory.open under concurrency', { skip: withoutRedis }, () => {
  test(`${RACERS} opens of one case at once, each with its own key: one wins, the others answer 603 and keep their keys`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const keys = KEY_IDS.slice(round * RACERS, round * RACERS + RACERS);
      const answers = await Promise.all(keys.map((key) => open({ item_id: CASE_IDS[round], key_item_id: key })));
      const codes = answers.map((a) => a.code).sort((a, b) => a - b);
      assert.deepEqual(codes, [0, ...Array(RACERS - 1).fill(603)], `round ${round}: ${JSON.stringify(answers)}`);
      const winner = answers.findIndex((a) => a.code === 0);
      const owned = await processes.servers[0].db.kysely
        .selectFrom('items')
        .select('item_id')
        .where('item_id', 'in', keys)
        .where('state', '=', 'owned')
        .execute();
      assert.deepEqual(
        owned.map((r) => r.item_id).sort((a, b) => a - b),
        keys.filter((_, i) => i !== winner),
      );
    }
    assert.equal(await assertConservation(), ROUNDS);
  });

  test(`${RACERS} retries with one request_id at once: one opening, every answer the same`, async () => {
    const caseId = CASE_IDS[ROUNDS];
    const keys = KEY_IDS.slice(ROUNDS * RACERS);
    const answers = await Promise.all(keys.map((key) => open({ item_id: caseId, key_item_id: key, request_id: 'one-request' })));
    for (const answer of answers) assert.deepEqual(answer, answers[0]);
    assert.equal(answers[0].code, 0, JSON.stringify(answers[0]));
    assert.equal(await assertConservation(), ROUNDS + 1);
  });
});
