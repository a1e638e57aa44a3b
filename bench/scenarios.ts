import type { LoadRequest } from './load.js';
import { BENCH_PASSWORD, Random, SEARCH_FILTER, emailOf, type WorldRoles } from './world.js';

/** What a scenario must reach (from the performance issue). */
export type Target =
  | { kind: 'ratio'; min: number }
  /** p50 latency at most `max` times that of another scenario. */
  | { kind: 'latencyOf'; scenario: string; max: number }
  | { kind: 'rps'; min: { sqlite: number; postgres: number } }
  | { kind: 'p99'; maxMs: number };

export interface Scenario {
  id: string;
  title: string;
  /** The requests, sent in turn. */
  requests: LoadRequest[];
  /** Requests used once each (crafting): warm-up and measurement take disjoint slices. */
  consumable?: boolean;
  connections: number;
  target?: Target;
}

export interface ScenarioSetup {
  roles: WorldRoles;
  /** Access tokens by user id. */
  tokens: Map<number, string>;
  /** Signed-in ordinary users who view others. */
  viewers: number[];
}

const get = (method: string, params: Record<string, string | number>): LoadRequest => ({
  method: 'GET',
  path: `/api/${method}?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString()}`,
});
const post = (method: string, body: Record<string, unknown>, headers?: Record<string, string>): LoadRequest => ({
  method: 'POST',
  path: `/api/${method}`,
  body: JSON.stringify(body),
  headers,
});

/** Users the harness signs in before the run (tokens written straight into `sessions`). */
export function usersToSignIn(roles: WorldRoles): { all: number[]; viewers: number[] } {
  const viewers = Array.from({ length: 20 }, (_, i) => roles.firstOrdinaryUser + i * 7);
  const all = [
    ...roles.craftUsers.map((r) => r.userId),
    ...roles.bigUsers.map((r) => r.userId),
    ...roles.hundredUsers.map((r) => r.userId),
    ...roles.openUsers.map((r) => r.userId),
    ...roles.friendHeavyUsers,
    ...viewers,
  ];
  return { all, viewers };
}

/** Every scenario of the run, in order. Requests vary (ids, offsets) but are the same each run. */
export function buildScenarios({ roles, tokens, viewers }: ScenarioSetup): Scenario[] {
  const random = new Random(`${roles.seed}/scenarios`);
  const { users, protos } = roles.scale;
  const token = (userId: number) => tokens.get(userId)!;
  const viewerToken = () => token(random.pick(viewers));
  const many = (n: number, make: () => LoadRequest) => Array.from({ length: n }, make);
  const ids = (n: number, max: number) => random.distinct(n, 1, max).join(',');

  const inventoryOf = (ranges: typeof roles.bigUsers, params: Record<string, string | number>) =>
    ranges.map((r) => get('inventory.get', { ...params, access_token: token(r.userId) }));

  // Crafting: ten consecutive items of one crafter per request, crafters taken in turn.
  const craftRequests: LoadRequest[] = [];
  const setsPerUser = Math.floor(roles.scale.craftInventory / 10);
  for (let set = 0; set < setsPerUser; set++)
    for (const range of roles.craftUsers) {
      const first = range.firstItemId + set * 10;
      const itemIds = Array.from({ length: 10 }, (_, i) => first + i).join(',');
      craftRequests.push(post('inventory.craft', { item_ids: itemIds, access_token: token(range.userId) }));
    }

  // Opening: each opener's cases in turn, each with its own key.
  const openRequests: LoadRequest[] = [];
  for (let n = 0; n < roles.scale.openInventory; n++)
    for (const range of roles.openUsers)
      openRequests.push(
        post('inventory.open', {
          item_id: range.firstItemId + n,
          key_item_id: range.firstItemId + range.count + n,
          access_token: token(range.userId),
        }),
      );

  return [
    {
      id: 'users.get-1',
      title: 'users.get, 1 id (full form)',
      requests: many(2000, () => get('users.get', { user_id: random.int(1, users), access_token: viewerToken() })),
      connections: 10,
      target: { kind: 'ratio', min: 0.7 },
    },
    {
      id: 'users.get-50',
      title: 'users.get, 50 ids (full form)',
      requests: many(500, () => get('users.get', { user_ids: ids(50, users), access_token: viewerToken() })),
      connections: 10,
      target: { kind: 'ratio', min: 0.4 },
    },
    {
      id: 'friends.get',
      title: 'friends.get, 50 of 500 friends',
      requests: many(500, () =>
        get('friends.get', { count: 50, offset: 50 * random.int(0, 9), access_token: token(random.pick(roles.friendHeavyUsers)) }),
      ),
      connections: 10,
      target: { kind: 'ratio', min: 0.4 },
    },
    {
      id: 'data.getItemProtos',
      title: 'data.getItemProtos, 50 ids',
      requests: many(500, () => get('data.getItemProtos', { item_proto_ids: ids(50, protos) })),
      connections: 10,
      target: { kind: 'ratio', min: 0.4 },
    },
    {
      id: 'data.searchItemProtos',
      title: 'data.searchItemProtos, type + quality_id, count 50',
      requests: [0, 50, 100].map((offset) => get('data.searchItemProtos', { ...SEARCH_FILTER, count: 50, offset })),
      connections: 10,
      target: { kind: 'ratio', min: 0.4 },
    },
    {
      id: 'inventory.get-100-legacy',
      title: 'inventory.get, 100 items (legacy)',
      requests: inventoryOf(roles.hundredUsers, {}),
      connections: 10,
      target: { kind: 'ratio', min: 0.4 },
    },
    {
      id: 'inventory.get-100',
      title: 'inventory.get, 100 items (add_legacy=0)',
      requests: inventoryOf(roles.hundredUsers, { add_legacy: 0 }),
      connections: 10,
      target: { kind: 'ratio', min: 0.4 },
    },
    {
      id: 'inventory.get-100-count20',
      title: 'inventory.get, 100 items, count=20',
      requests: inventoryOf(roles.hundredUsers, { count: 20 }),
      connections: 10,
    },
    {
      id: 'inventory.get-10k-count20',
      title: 'inventory.get, 10,000 items, count=20',
      requests: inventoryOf(roles.bigUsers, { count: 20 }),
      connections: 10,
      target: { kind: 'latencyOf', scenario: 'inventory.get-100-count20', max: 1.5 },
    },
    {
      id: 'inventory.get-10k',
      title: 'inventory.get, 10,000 items in full (legacy)',
      requests: inventoryOf(roles.bigUsers, {}),
      connections: 4,
    },
    {
      id: 'gchat.get',
      title: 'gchat.get',
      requests: [get('gchat.get', {})],
      connections: 10,
      target: { kind: 'ratio', min: 0.8 },
    },
    {
      id: 'inventory.craft',
      title: 'inventory.craft, a fresh set of ten each',
      requests: craftRequests,
      consumable: true,
      connections: 10,
      target: { kind: 'rps', min: { sqlite: 500, postgres: 200 } },
    },
    {
      id: 'inventory.open',
      title: 'inventory.open, a fresh case and key each',
      requests: openRequests,
      consumable: true,
      connections: 10,
    },
    {
      id: 'auth.signin',
      title: 'auth.signin',
      requests: signinRequests(roles, 2000),
      connections: 10,
    },
    {
      id: 'auth.signup',
      title: 'auth.signup, a new account each',
      requests: signupRequests(roles, 5000),
      consumable: true,
      connections: 10,
    },
  ];
}

/** Sign-ups of new accounts, each address used once, each from its own documentation-range address (the twin of auth.signin). */
export function signupRequests(roles: WorldRoles, count: number): LoadRequest[] {
  return Array.from({ length: count }, (_, i) =>
    post(
      'auth.signup',
      { email: `newcomer${i}@signup.bench.example`, password: BENCH_PASSWORD, nick: `Newcomer ${i}` },
      { 'x-forwarded-for': `198.19.${(i >> 8) & 255}.${i & 255}` },
    ),
  );
}

/** Sign-ins of distinct ordinary accounts, each from its own documentation-range address. */
export function signinRequests(roles: WorldRoles, count: number): LoadRequest[] {
  const random = new Random(`${roles.seed}/signin`);
  return Array.from({ length: count }, (_, i) => {
    const userId = random.int(roles.firstOrdinaryUser, roles.scale.users);
    return post(
      'auth.signin',
      { email: emailOf(userId), password: BENCH_PASSWORD },
      { 'x-forwarded-for': `198.18.${(i >> 8) & 255}.${i & 255}` },
    );
  });
}

/** users.get requests for the measurement under concurrent sign-ins. */
export function usersGetRequests(setup: ScenarioSetup): LoadRequest[] {
  const random = new Random(`${setup.roles.seed}/users-under-signin`);
  return Array.from({ length: 1000 }, () =>
    get('users.get', { user_id: random.int(1, setup.roles.scale.users), access_token: setup.tokens.get(random.pick(setup.viewers))! }),
  );
}
