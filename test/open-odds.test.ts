import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers.js';
import { callOk, ownedIds, tokenFor, user } from './item-fixtures.js';
import type { World } from '../src/world/schema.js';

/*
 * The draw frequency check: 2,000 cases whose drop list weighs 3:1 are opened through the
 * API, that is through the server's own random path (crypto.randomInt, no seed). The share of
 * the heavier entry must fall in the central 99.9% of Binomial(2000, 0.75): a correct server
 * fails this test once in a thousand runs, one whose odds differ from the published ones by a
 * few percent nearly always.
 */

const DRAWS = 2000;
const HEAVY = 101;
const LIGHT = 201;
const CONCURRENT = 10;

const world: World = {
  item_protos: [
    { item_proto_id: HEAVY, type: 0, quality_id: 1, title: 'Heavy' },
    { item_proto_id: LIGHT, type: 0, quality_id: 1, title: 'Light' },
    {
      item_proto_id: 510,
      type: 2,
      quality_id: 1,
      title: 'Weighted case',
      drop: [
        { item_proto_id: HEAVY, weight: 3 },
        { item_proto_id: LIGHT, weight: 1 },
      ],
    },
  ],
  users: [user(1)],
  items: [{ user_id: 1, item_proto_id: 510, copies: DRAWS }],
};

/** The smallest and largest counts k with P(X < k) <= tail and P(X > k) <= tail, X ~ Binomial(n, p). */
function binomialInterval(n: number, p: number, tail: number): [number, number] {
  const logFactorial = [0];
  for (let i = 1; i <= n; i++) logFactorial.push(logFactorial[i - 1] + Math.log(i));
  const pmf = (k: number) =>
    Math.exp(logFactorial[n] - logFactorial[k] - logFactorial[n - k] + k * Math.log(p) + (n - k) * Math.log(1 - p));
  let low = 0;
  for (let below = 0; below + pmf(low) <= tail; low++) below += pmf(low);
  let high = n;
  for (let above = 0; above + pmf(high) <= tail; high--) above += pmf(high);
  return [low, high];
}

test('2,000 draws from weights 3:1 land within the 99.9% binomial interval of 0.75', async () => {
  const server = await startTestServer({ world, config: { rateLimit: false, announceDropsFromClass: 99 } });
  try {
    const token = await tokenFor(server, 1);
    const cases = await ownedIds(server, 1, 510);
    assert.equal(cases.length, DRAWS);
    const drawn: number[] = [];
    for (let start = 0; start < DRAWS; start += CONCURRENT) {
      const batch = await Promise.all(
        cases.slice(start, start + CONCURRENT).map((item_id) => callOk(server, 'inventory.open', { item_id }, { token })),
      );
      for (const data of batch) drawn.push(data.items[0].item_proto_id);
    }
    const heavy = drawn.filter((id) => id === HEAVY).length;
    assert.equal(heavy + drawn.filter((id) => id === LIGHT).length, DRAWS);
    const [low, high] = binomialInterval(DRAWS, 0.75, 0.0005);
    assert.ok(low > 1400 && high < 1600, `interval [${low}, ${high}]`);
    assert.ok(heavy >= low && heavy <= high, `${heavy} of ${DRAWS} draws of the 3:1 entry, outside [${low}, ${high}]`);
    // The record agrees with the answers.
    const recorded = await server.db.kysely.selectFrom('draws').select('result_item_proto_ids').execute();
    assert.equal(recorded.filter((r) => r.result_item_proto_ids === `[${HEAVY}]`).length, heavy);
  } finally {
    await server.close();
  }
});
