import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { catalogWorld, tokenFor, user } from './item-fixtures.js';
import { revokeItem } from '../src/inventory/grants.js';
import type { World } from '../src/world/schema.js';

const POOL = 300;
const FIRST_ID = 1000;
const pool = Array.from({ length: POOL }, (_, i) => FIRST_ID + i);

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

/**
 * Every item is owned, or consumed by exactly one recorded craft (which lists it), or
 * revoked (with a revocations row); every craft consumed ten items and created one.
 */
async function assertConservation(server: TestServer, originalIds: number[]): Promise<{ crafts: number; revoked: number }> {
  const k = server.db.kysely;
  const [items, crafts, revocations] = await Promise.all([
    k.selectFrom('items').selectAll().execute(),
    k.selectFrom('crafts').selectAll().execute(),
    k.selectFrom('revocations').selectAll().execute(),
  ]);
  const itemById = new Map(items.map((i) => [i.item_id, i]));
  const consumedBy = new Map<number, number>();
  for (const craft of crafts) {
    const consumed: number[] = JSON.parse(craft.consumed_item_ids);
    assert.equal(new Set(consumed).size, 10, `craft ${craft.craft_id} consumed ten distinct items`);
    for (const id of consumed) {
      assert.ok(!consumedBy.has(id), `item ${id} consumed by crafts ${consumedBy.get(id)} and ${craft.craft_id}`);
      consumedBy.set(id, craft.craft_id);
      const item = itemById.get(id)!;
      assert.equal(item.state, 'consumed');
      assert.equal(item.craft_id, craft.craft_id);
      assert.equal(item.user_id, craft.user_id);
    }
    assert.ok(craft.result_item_id !== null, `craft ${craft.craft_id} has a result`);
    const result = itemById.get(craft.result_item_id!)!;
    assert.equal(result.created_by_craft_id, craft.craft_id);
    assert.equal(result.quality_id, 2);
    assert.ok([201, 202].includes(result.item_proto_id), `result ${result.item_proto_id} is a craft result of class 2`);
  }
  const revokedIds = new Set(revocations.map((r) => r.item_id));
  assert.equal(revokedIds.size, revocations.length, 'one revocation per item');
  for (const id of originalIds) {
    const item = itemById.get(id);
    assert.ok(item, `item ${id} still exists`);
    const fates = [item.state === 'owned', consumedBy.has(id), revokedIds.has(id)].filter(Boolean).length;
    assert.equal(fates, 1, `item ${id} (${item.state}) has exactly one fate`);
    if (item.state === 'owned') assert.equal(item.craft_id, null);
    if (item.state === 'revoked') assert.ok(revokedIds.has(id));
  }
  const results = items.filter((i) => i.created_by_craft_id !== null);
  assert.equal(results.length, crafts.length);
  assert.equal(items.length, originalIds.length + crafts.length, 'no item appeared from nowhere');
  return { crafts: crafts.length, revoked: revokedIds.size };
}

describe('inventory.craft under concurrency', () => {
  let server: TestServer;
  let token: string;
  before(async () => {
    server = await startTestServer({ world, config: { rateLimit: false } });
    token = await tokenFor(server, 1);
  });
  after(() => server.close());

  const craft = (ids: number[]) => server.call('inventory.craft', { item_ids: ids.join(',') }, { token });

  test('two crafts sharing one item: exactly one wins, the other answers 603', async () => {
    for (let round = 0; round < 5; round++) {
      const start = FIRST_ID + round * 19;
      const first = Array.from({ length: 10 }, (_, i) => start + i);
      const second = Array.from({ length: 10 }, (_, i) => start + 9 + i);
      const answers = await Promise.all([craft(first), craft(second)]);
      const codes = answers.map((a) => a.body.code).sort();
      assert.deepEqual(codes, [0, 603], `round ${round}: ${JSON.stringify(answers.map((a) => a.body))}`);
    }
    const identical = Array.from({ length: 10 }, (_, i) => FIRST_ID + 100 + i);
    const answers = await Promise.all(Array.from({ length: 6 }, () => craft(identical)));
    assert.deepEqual(answers.map((a) => a.body.code).sort((a, b) => a - b), [0, 603, 603, 603, 603, 603]);
    const totals = await assertConservation(server, pool);
    assert.equal(totals.crafts, 6);
  });

  test('a burst of overlapping crafts and revocations conserves every item', async () => {
    const next = random(20260101);
    const available = pool.filter((id) => id >= FIRST_ID + 120);
    const crafts = Array.from({ length: 40 }, () => pick(next, available, 10));
    const revocations = pick(next, available, 8);
    const otherToken = await tokenFor(server, 2);
    const [answers, revoked, foreign] = await Promise.all([
      Promise.all(crafts.map((ids) => craft(ids))),
      Promise.all(revocations.map((id) => revokeItem(server.services, id, 'burst'))),
      Promise.all(crafts.slice(0, 5).map((ids) => server.call('inventory.craft', { item_ids: ids.join(',') }, { token: otherToken }))),
    ]);
    for (const answer of answers) assert.ok([0, 603].includes(answer.body.code), JSON.stringify(answer.body));
    for (const answer of foreign) assert.equal(answer.body.code, 603);
    // A revocation that lost the race to a craft finds the item consumed and changes nothing.
    const revokedCount = revoked.filter(Boolean).length;
    const won = answers.filter((a) => a.body.code === 0).length;
    assert.ok(won >= 1, 'at least the first craft succeeds');

    const totals = await assertConservation(server, pool);
    assert.equal(totals.crafts, 6 + won);
    assert.equal(totals.revoked, revokedCount);

    // The inventory count agrees with the history.
    const inventory = await server.call('inventory.get', { count: 0 }, { token });
    const owned = POOL - 10 * totals.crafts - totals.revoked + totals.crafts;
    assert.equal(inventory.body.data.count, owned);
  });
});
