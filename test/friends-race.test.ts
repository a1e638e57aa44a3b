import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { DB_KIND, startTestServer, type TestServer } from './helpers.js';
import { sessionFor } from './social-fixtures.js';
import { FRIENDS_CHANGED } from '../src/infra/channels.js';
import { missing } from './components.js';

/*
 * Races on the social graph, with real concurrent HTTP requests over sockets. On PostgreSQL
 * two servers share the database (and Redis), as two processes of one deployment do, and
 * the two users of a pair always call different servers; SQLite runs as one process.
 */

const PAIRS = 30;
// Pair i is users 2i+1 (first) and 2i+2 (second).
const pairs = Array.from({ length: PAIRS }, (_, i) => [2 * i + 1, 2 * i + 2] as const);
const world = { users: Array.from({ length: PAIRS * 2 }, (_, i) => ({ user_id: i + 1, nick: `user${i + 1}` })) };
const CROSSING_ROUNDS = 12;
const MIXED_ROUNDS = 20;

const servers: TestServer[] = [];
const bases: string[] = [];
const tokens = new Map<number, string>();
/** Graph changes asked for so far: each call below changes (or leaves) one pair's relation and announces it once. */
let changesAsked = 0;
/** Per server: how many announcements of relation changes it has heard, and who waits for more. */
const heard: { count: number; waiters: { count: number; resolve: () => void }[] }[] = [];

async function listen(server: TestServer): Promise<string> {
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
}

/** On PostgreSQL the servers are joined by Redis: without one the races are not run. */
const clustered = DB_KIND === 'postgres';
const withoutRedis = clustered && missing.redis;

before(async () => {
  if (withoutRedis) return;
  const config = { rateLimit: false };
  const first = await startTestServer({ world, config, redis: clustered });
  servers.push(first);
  if (clustered) servers.push(await startTestServer({ location: first.location, clock: first.clock, config, redis: true }));
  for (const server of servers) {
    bases.push(await listen(server));
    const log = { count: 0, waiters: [] as { count: number; resolve: () => void }[] };
    server.services.bus.subscribe(FRIENDS_CHANGED, () => {
      log.count++;
      log.waiters = log.waiters.filter((w) => (w.count <= log.count ? (w.resolve(), false) : true));
    });
    heard.push(log);
  }
  for (const { user_id } of world.users) tokens.set(user_id, await sessionFor(first, user_id));
});
after(async () => {
  for (const server of [...servers].reverse()) await server.close();
});

/** One POST over a socket, by `by` (odd users call the first server, even ones the last). */
async function call(method: string, by: number, userId: number): Promise<number> {
  const base = bases[by % 2 === 1 ? 0 : bases.length - 1];
  changesAsked++;
  const response = await fetch(`${base}/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.get(by)}` },
    body: JSON.stringify({ user_id: userId }),
  });
  assert.equal(response.status, 200);
  const body = (await response.json()) as { code: number };
  return body.code;
}

/** Resolves once every server has heard `total` announcements of relation changes (each change makes one). */
async function everyServerHeard(total: number): Promise<void> {
  await Promise.all(
    heard.map((log) => (log.count >= total ? undefined : new Promise<void>((resolve) => log.waiters.push({ count: total, resolve })))),
  );
}

/** `friendship` of one user on another, as users.get on the given server shows it. */
async function friendshipShown(base: string, viewer: number, other: number): Promise<number> {
  const response = await fetch(`${base}/api/users.get?user_id=${other}`, { headers: { authorization: `Bearer ${tokens.get(viewer)}` } });
  const body = (await response.json()) as { code: number; data: { friendship: number }[] };
  assert.equal(body.code, 0);
  return body.data[0].friendship;
}

interface Rows {
  friendships: { user_id: number; friend_id: number }[];
  requests: { from_user_id: number; to_user_id: number }[];
  blocks: { user_id: number; blocked_user_id: number }[];
}

async function rows(): Promise<Rows> {
  const k = servers[0].db.kysely;
  return {
    friendships: await k.selectFrom('friendships').select(['user_id', 'friend_id']).execute(),
    requests: await k.selectFrom('friend_requests').select(['from_user_id', 'to_user_id']).execute(),
    blocks: await k.selectFrom('blocks').select(['user_id', 'blocked_user_id']).execute(),
  };
}

/** The graph's invariants, checked on the stored rows; returns them. */
async function consistentRows(): Promise<Rows> {
  const stored = await rows();
  const friendKeys = new Set(stored.friendships.map((f) => `${f.user_id}>${f.friend_id}`));
  const requestKeys = new Set(stored.requests.map((r) => `${r.from_user_id}>${r.to_user_id}`));
  for (const f of stored.friendships) {
    assert.ok(friendKeys.has(`${f.friend_id}>${f.user_id}`), `friendship ${f.user_id}-${f.friend_id} is stored both ways`);
    assert.ok(!requestKeys.has(`${f.user_id}>${f.friend_id}`), `friends ${f.user_id}-${f.friend_id} have no pending request`);
  }
  for (const r of stored.requests)
    assert.ok(!requestKeys.has(`${r.to_user_id}>${r.from_user_id}`), `requests between ${r.from_user_id} and ${r.to_user_id} never cross`);
  for (const b of stored.blocks) {
    assert.ok(!friendKeys.has(`${b.user_id}>${b.blocked_user_id}`), `blocked ${b.user_id}-${b.blocked_user_id} are not friends`);
    assert.ok(!requestKeys.has(`${b.user_id}>${b.blocked_user_id}`) && !requestKeys.has(`${b.blocked_user_id}>${b.user_id}`));
  }
  return stored;
}

test('two users asking each other at the same moment end up friends, every pair, round after round', { skip: withoutRedis }, async () => {
  for (let round = 0; round < CROSSING_ROUNDS; round++) {
    // Which side of a pair sends first alternates between rounds and pairs.
    const adds = pairs.flatMap(([a, b], i) => {
      const [first, second] = (round + i) % 2 === 0 ? [a, b] : [b, a];
      return [call('friends.add', first, second), call('friends.add', second, first)];
    });
    assert.deepEqual(
      await Promise.all(adds),
      adds.map(() => 0),
      `round ${round}`,
    );
    const stored = await consistentRows();
    assert.equal(stored.friendships.length, PAIRS * 2, `round ${round}: every pair is friends`);
    assert.deepEqual(stored.requests, [], `round ${round}: no request is left`);

    const deletes = pairs.flatMap(([a, b]) => [call('friends.delete', a, b), call('friends.delete', b, a)]);
    assert.deepEqual(
      await Promise.all(deletes),
      deletes.map(() => 0),
    );
    assert.deepEqual(await rows(), { friendships: [], requests: [], blocks: [] }, `round ${round}: every friendship ended`);
  }
});

test('the same request sent many times at once is stored once', { skip: withoutRedis }, async () => {
  const [a, b] = pairs[0];
  const codes = await Promise.all(Array.from({ length: 20 }, () => call('friends.add', a, b)));
  assert.deepEqual(
    codes,
    codes.map(() => 0),
  );
  assert.deepEqual((await rows()).requests, [{ from_user_id: a, to_user_id: b }]);
  assert.equal(await call('friends.delete', b, a), 0);
  assert.deepEqual(await rows(), { friendships: [], requests: [], blocks: [] });
});

/** What is stored between the two users of a pair. */
interface PairState {
  friends: boolean;
  /** requests[0]: first user asked the second; requests[1]: the other way. */
  requests: [boolean, boolean];
  /** blocks[0]: first user blocked the second; blocks[1]: the other way. */
  blocks: [boolean, boolean];
}

type Kind = 'friends.add' | 'friends.delete' | 'blacklist.add' | 'blacklist.delete';
interface Operation {
  kind: Kind;
  /** 0: the first user of the pair acts on the second; 1: the other way. */
  side: 0 | 1;
}

/** Applies one operation as the rules say, one at a time; returns its answer code. */
function apply(state: PairState, { kind, side }: Operation): number {
  const other = side === 0 ? 1 : 0;
  switch (kind) {
    case 'friends.add':
      if (state.blocks[other]) return 107;
      if (state.blocks[side]) return 4;
      if (state.friends || state.requests[side]) return 0;
      if (state.requests[other]) {
        state.requests[other] = false;
        state.friends = true;
      } else state.requests[side] = true;
      return 0;
    case 'friends.delete':
      state.friends = false;
      state.requests = [false, false];
      return 0;
    case 'blacklist.add':
      state.friends = false;
      state.requests = [false, false];
      state.blocks[side] = true;
      return 0;
    case 'blacklist.delete':
      state.blocks[side] = false;
      return 0;
  }
}

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, i) => permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]));
}

const copy = (s: PairState): PairState => ({ friends: s.friends, requests: [...s.requests], blocks: [...s.blocks] });

/** Whether some order of `operations`, one after another from `start`, gives these codes and this end state. */
function explainable(start: PairState, operations: Operation[], codes: number[], end: PairState): boolean {
  const indexes = operations.map((_, i) => i);
  return permutations(indexes).some((order) => {
    const state = copy(start);
    for (const i of order) if (apply(state, operations[i]) !== codes[i]) return false;
    return JSON.stringify(state) === JSON.stringify(end);
  });
}

/** The `friendship` value the user on `side` sees on the other. */
function friendshipOf(state: PairState, side: 0 | 1): number {
  const other = side === 0 ? 1 : 0;
  if (state.blocks[side] && state.blocks[other]) return 6;
  if (state.blocks[side]) return 4;
  if (state.blocks[other]) return 5;
  if (state.friends) return 1;
  if (state.requests[side]) return 2;
  if (state.requests[other]) return 3;
  return 0;
}

function pairStates(stored: Rows): PairState[] {
  const has = <T>(list: T[], match: (x: T) => boolean) => list.some(match);
  return pairs.map(([a, b]) => ({
    friends: has(stored.friendships, (f) => f.user_id === a && f.friend_id === b),
    requests: [
      has(stored.requests, (r) => r.from_user_id === a && r.to_user_id === b),
      has(stored.requests, (r) => r.from_user_id === b && r.to_user_id === a),
    ],
    blocks: [
      has(stored.blocks, (x) => x.user_id === a && x.blocked_user_id === b),
      has(stored.blocks, (x) => x.user_id === b && x.blocked_user_id === a),
    ],
  }));
}

/** A small seeded generator, so a failing run can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

test(
  'concurrent adds, deletes, blocks and unblocks always end as some one-at-a-time order would',
  { timeout: 300_000, skip: withoutRedis },
  async () => {
    const next = random(20261121);
    // Adds are drawn more often, so pairs keep reaching requests and friendships.
    const kinds: Kind[] = ['friends.add', 'friends.add', 'friends.add', 'friends.delete', 'blacklist.add', 'blacklist.delete'];
    let states = pairStates(await consistentRows());
    const seen = new Set<string>();
    for (let round = 0; round < MIXED_ROUNDS; round++) {
      const plans = pairs.map(() =>
        Array.from({ length: 2 + Math.floor(next() * 3) }, (): Operation => {
          const kind = kinds[Math.floor(next() * kinds.length)];
          return { kind, side: next() < 0.5 ? 0 : 1 };
        }),
      );
      const perform = (plan: Operation[], [a, b]: readonly [number, number]) =>
        Promise.all(plan.map(({ kind, side }) => (side === 0 ? call(kind, a, b) : call(kind, b, a))));
      const showAll = () =>
        Promise.all(bases.flatMap((base) => pairs.flatMap(([a, b]) => [friendshipShown(base, a, b), friendshipShown(base, b, a)])));
      // Reads of the relations race the changes, so caches fill while the graph changes.
      const [answers] = await Promise.all([Promise.all(plans.map((plan, p) => perform(plan, pairs[p]))), showAll()]);
      const after = pairStates(await consistentRows());
      // Every server, once told of every change, shows each user's relation as stored.
      await everyServerHeard(changesAsked);
      const shown = await showAll();
      const stored = bases.flatMap(() => after.flatMap((state) => [friendshipOf(state, 0), friendshipOf(state, 1)]));
      assert.deepEqual(shown, stored, `round ${round}: friendship shown by users.get`);
      plans.forEach((plan, p) => {
        assert.ok(
          explainable(states[p], plan, answers[p], after[p]),
          `round ${round}, pair ${pairs[p]}: from ${JSON.stringify(states[p])}, ${JSON.stringify(plan)} ` +
            `answered ${answers[p]} and left ${JSON.stringify(after[p])}`,
        );
        seen.add(JSON.stringify(after[p]));
      });
      states = after;
    }
    // The rounds went through friendships, requests and blocks both ways, not only one corner.
    const ended = [...seen].map((s) => JSON.parse(s) as PairState);
    assert.ok(ended.some((s) => s.friends));
    assert.ok(ended.some((s) => s.requests[0]) && ended.some((s) => s.requests[1]));
    assert.ok(ended.some((s) => s.blocks[0] && s.blocks[1]));
  },
);

test('blocking while the other side asks or accepts ends with the block alone', { skip: withoutRedis }, async () => {
  await Promise.all(
    pairs.flatMap(([a, b]) => [call('blacklist.delete', a, b), call('blacklist.delete', b, a), call('friends.delete', a, b)]),
  );
  const setup = await Promise.all(pairs.slice(0, PAIRS / 2).flatMap(([a, b]) => [call('friends.add', a, b), call('friends.add', b, a)]));
  assert.deepEqual(
    setup,
    setup.map(() => 0),
  );
  const answers = await Promise.all(pairs.map(([a, b]) => Promise.all([call('blacklist.add', a, b), call('friends.add', b, a)])));
  for (const [block, add] of answers) {
    assert.equal(block, 0);
    assert.ok([0, 107].includes(add), `friends.add answered ${add}`);
  }
  const stored = await consistentRows();
  assert.deepEqual([stored.friendships, stored.requests], [[], []]);
  assert.deepEqual(
    stored.blocks.map((b) => [b.user_id, b.blocked_user_id]).sort((x, y) => x[0] - y[0]),
    pairs.map(([a, b]) => [a, b]),
  );
});
