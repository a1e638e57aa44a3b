import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ALICE, assertSession, authWorld, sessionOf } from './auth-fixtures.js';
import { catalogWorld, tokenFor } from './item-fixtures.js';
import { wire } from './transport-support.js';
import { startProcesses, type Processes } from './race-support.js';
import { checkInvariants } from '../test-crash/invariants.js';
import { newStormLog } from '../test-crash/storm.js';
import type { World } from '../src/world/schema.js';
import { missing } from './components.js';

/**
 * Overlapping crafts and concurrent refreshes over real connections (on PostgreSQL to two
 * processes sharing the database and Redis).
 */

const CRAFTERS = [1, 2];
const ITEMS = 200;
const itemsOf = (userId: number) => Array.from({ length: ITEMS }, (_, i) => userId * 1000 + i);

describe('overlapping crafts over real connections', { skip: missing.redis }, () => {
  let processes: Processes;
  let urls: string[];
  const tokens = new Map<number, string>();

  before(async () => {
    const world: World = {
      ...catalogWorld,
      users: CRAFTERS.map((user_id) => ({ user_id, nick: `crafter${user_id}` })),
      items: CRAFTERS.flatMap((userId) =>
        itemsOf(userId).map((item_id, i) => ({ item_id, user_id: userId, item_proto_id: i % 2 ? 102 : 101, ts_owned: 100 })),
      ),
    };
    processes = await startProcesses({ world, config: { rateLimit: false } });
    urls = processes.urls;
    for (const userId of CRAFTERS) tokens.set(userId, await tokenFor(processes.servers[0]!, userId));
  });
  after(() => processes.close());

  test('every item ends owned, or consumed by exactly one craft; every acknowledged craft is recorded', async () => {
    const log = newStormLog();
    // Windows of ten sliding by seven: neighbours share three items, so most crafts race another.
    const attempts = CRAFTERS.flatMap((userId) =>
      Array.from({ length: Math.floor((ITEMS - 10) / 7) + 1 }, (_, n) => ({ userId, ids: itemsOf(userId).slice(n * 7, n * 7 + 10) })),
    );
    const answers = await Promise.all(
      attempts.map(async ({ userId, ids }, n) => {
        const answer = await wire(`${urls[n % 2]}/api/inventory.craft`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.get(userId)}` },
          body: JSON.stringify({ item_ids: ids.join(',') }),
        });
        assert.equal(answer.status, 200, answer.text);
        assert.ok([0, 603].includes(answer.body.code), answer.text);
        if (answer.body.code === 0) log.crafts.push({ userId, itemIds: ids, resultItemId: answer.body.data.item.item_id });
        return answer.body.code as number;
      }),
    );
    for (const userId of CRAFTERS)
      assert.ok(
        log.crafts.some((c) => c.userId === userId),
        `a craft of user ${userId} won: ${answers.join(',')}`,
      );
    assert.deepEqual(await checkInvariants(processes.servers[0]!.db, log, CRAFTERS.flatMap(itemsOf)), []);
    // Every process counts the same inventory.
    for (const url of urls) {
      const inventory = await wire(`${url}/api/inventory.get?user_id=1&count=0`);
      const crafts = log.crafts.filter((c) => c.userId === 1).length;
      assert.equal(inventory.body.data.count, ITEMS - 9 * crafts);
    }
  });
});

describe('concurrent refreshes of one token over real connections', { skip: missing.redis }, () => {
  const GRACE = 5;
  let strict: Processes;
  let lenient: Processes;

  before(async () => {
    const world = await authWorld();
    strict = await startProcesses({ world, config: { refreshReuseGrace: 0 } });
    lenient = await startProcesses({ world, config: { refreshReuseGrace: GRACE } });
  });
  after(async () => {
    await lenient.close();
    await strict.close();
  });

  const refresh = (url: string, refreshToken: string) =>
    wire(`${url}/api/auth.refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: refreshToken }),
    });
  const probe = async (url: string, token: string) =>
    (await wire(`${url}/api/account.getPrivacy`, { headers: { authorization: `Bearer ${token}` } })).body.code as number;

  /** Eight simultaneous refreshes of one fresh sign-in spread over the processes; the one Session handed out. */
  const race = async (processes: Processes, round: number) => {
    const session = await sessionOf(processes.servers[0]!, ALICE.email);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => refresh(processes.urls[i % 2], session.refresh_token)));
    for (const answer of answers) assert.ok(answer.status === 200 && [0, 1].includes(answer.body.code), answer.text);
    const winners = answers.filter((a) => a.body.code === 0);
    assert.equal(winners.length, 1, `round ${round}: ${answers.map((a) => a.body.code).join(',')}`);
    assertSession(winners[0]!.body.data);
    for (const url of processes.urls)
      assert.equal(await probe(url, session.access_token), 1, `round ${round}: the old token is dead at ${url}`);
    return winners[0]!.body.data as { access_token: string };
  };

  test('exactly one gets a session; with no grace the others are reuses that end the sign-in everywhere', async () => {
    for (let round = 0; round < 5; round++) {
      const fresh = await race(strict, round);
      for (const url of strict.urls) assert.equal(await probe(url, fresh.access_token), 1, `round ${round}: the sign-in ended at ${url}`);
    }
  });

  test('within the reuse grace period exactly one gets a session and it works everywhere', async () => {
    for (let round = 0; round < 5; round++) {
      const fresh = await race(lenient, round);
      for (const url of lenient.urls)
        assert.equal(await probe(url, fresh.access_token), 0, `round ${round}: the new token works at ${url}`);
    }
  });
});
