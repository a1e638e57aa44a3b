import type { LoadRequest } from './load.js';
import type { MarketSeed } from './database.js';
import { BENCH_PASSWORD, Random, SEARCH_FILTER, emailOf, type WorldRoles } from './world.js';

/** What a scenario must reach (from the performance issue). */
export type Target =
  | { kind: 'ratio'; min: number }
  /** p50 latency at most `max` times that of another scenario. */
  | { kind: 'latencyOf'; scenario: string; max: number }
  | { kind: 'rps'; min: { sqlite: number; postgres: number } }
  /** At least as many per second as another scenario of the same run (or `share` of its rate). */
  | { kind: 'rpsOf'; scenario: string; share?: number }
  /** The default settings at least `min` of the quiet ones' speed (same requests, measured in turn). */
  | { kind: 'ofQuiet'; min: number }
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

/** A session of the harness: requests with its token come from its address. */
export interface Session {
  token: string;
  ip: string;
}

export interface ScenarioSetup {
  roles: WorldRoles;
  /** Sessions by user id, several per user, each bound to an address of its own. */
  sessions: Map<number, Session[]>;
  /** Signed-in ordinary users who view others. */
  viewers: number[];
  /** The listings and buyers seeded for the market scenarios. */
  market: MarketSeed;
}

/**
 * Sessions per role (spread over its users): enough that no token and no address reaches the
 * default limits (1,200 requests a minute per token, 3,000 per address) at the speeds measured.
 */
const SESSIONS_PER_ROLE = 1000;
const VIEWERS = 20;
/** Addresses of anonymous requests. */
const ANONYMOUS_ADDRESSES = 1000;

/** The n-th address of a private range, one per session or anonymous client. */
export function benchAddress(range: number, n: number): string {
  return `10.${range}.${(n >> 8) & 255}.${n & 255}`;
}

const get = (method: string, params: Record<string, string | number>, ip: string): LoadRequest => ({
  method: 'GET',
  path: `/api/${method}?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString()}`,
  headers: { 'x-forwarded-for': ip },
});
const post = (method: string, body: Record<string, unknown>, headers?: Record<string, string>): LoadRequest => ({
  method: 'POST',
  path: `/api/${method}`,
  body: JSON.stringify(body),
  headers,
});
/** A signed-in call: the session's token, from the session's address. */
const authGet = (method: string, params: Record<string, string | number>, session: Session) =>
  get(method, { ...params, access_token: session.token }, session.ip);
const authPost = (method: string, body: Record<string, unknown>, session: Session) =>
  post(method, { ...body, access_token: session.token }, { 'x-forwarded-for': session.ip });

/** The sessions the harness opens before the run (written straight into `sessions`), each with its address. */
export function sessionsToOpen(roles: WorldRoles): { wanted: { userId: number; ip: string }[]; viewers: number[] } {
  const viewers = Array.from({ length: VIEWERS }, (_, i) => roles.firstOrdinaryUser + i * 7);
  const wanted: { userId: number; ip: string }[] = [];
  let next = 0;
  const open = (users: number[], perUser = Math.ceil(SESSIONS_PER_ROLE / users.length)) => {
    for (const userId of users)
      for (let i = 0; i < perUser; i++) {
        next++;
        wanted.push({ userId, ip: benchAddress(1 + (next >> 16), next & 0xffff) });
      }
  };
  open(roles.craftUsers.map((r) => r.userId));
  open(roles.bigUsers.map((r) => r.userId));
  open(roles.hundredUsers.map((r) => r.userId));
  open(roles.openUsers.map((r) => r.userId));
  open(roles.friendHeavyUsers);
  open(viewers);
  open(
    roles.tradePairs.flatMap((p) => [p.from.userId, p.to.userId]),
    1,
  );
  return { wanted, viewers };
}

/** Every scenario of the run, in order. Requests vary (ids, offsets) but are the same each run. */
export function buildScenarios({ roles, sessions, viewers, market }: ScenarioSetup): Scenario[] {
  const random = new Random(`${roles.seed}/scenarios`);
  const { users, protos } = roles.scale;
  const sessionsOf = (userId: number) => sessions.get(userId)!;
  const viewer = viewerSessionsInTurn({ sessions, viewers });
  const anonymous = () => benchAddress(200, random.int(1, ANONYMOUS_ADDRESSES));
  const many = (n: number, make: () => LoadRequest) => Array.from({ length: n }, make);
  const ids = (n: number, max: number) => random.distinct(n, 1, max).join(',');

  /** One request per session of each owner, owners taken in turn. */
  const inventoryOf = (ranges: typeof roles.bigUsers, params: Record<string, string | number>) => {
    const lists = ranges.map((r) => sessionsOf(r.userId));
    const longest = Math.max(...lists.map((l) => l.length));
    const requests: LoadRequest[] = [];
    for (let i = 0; i < longest; i++)
      for (const list of lists) if (i < list.length) requests.push(authGet('inventory.get', params, list[i]));
    return requests;
  };

  // Crafting: ten consecutive items of one crafter per request, crafters taken in turn, each crafter's sessions in turn.
  const craftRequests: LoadRequest[] = [];
  const setsPerUser = Math.floor(roles.scale.craftInventory / 10);
  for (let set = 0; set < setsPerUser; set++)
    for (const range of roles.craftUsers) {
      const first = range.firstItemId + set * 10;
      const itemIds = Array.from({ length: 10 }, (_, i) => first + i).join(',');
      const own = sessionsOf(range.userId);
      craftRequests.push(authPost('inventory.craft', { item_ids: itemIds }, own[set % own.length]));
    }

  // Opening: each opener's cases in turn, each with its own key.
  const openRequests: LoadRequest[] = [];
  for (let n = 0; n < roles.scale.openInventory; n++)
    for (const range of roles.openUsers) {
      const own = sessionsOf(range.userId);
      openRequests.push(
        authPost(
          'inventory.open',
          { item_id: range.firstItemId + n, key_item_id: range.firstItemId + range.count + n },
          own[n % own.length],
        ),
      );
    }

  // Trading: each pair swaps one item for one, the offering side creating, the other accepting; pairs taken in turn.
  const tradeRequests: LoadRequest[] = [];
  for (let n = 0; n < roles.scale.tradeInventory; n++)
    for (const { from, to } of roles.tradePairs) {
      const offering = sessionsOf(from.userId)[0];
      const receiving = sessionsOf(to.userId)[0];
      const accept = authPost('trades.accept', {}, receiving);
      tradeRequests.push({
        ...authPost(
          'trades.create',
          { user_id: to.userId, thing_ids_from: String(from.firstItemId + n), thing_ids_to: String(to.firstItemId + n) },
          offering,
        ),
        follow: { ...accept, body: accept.body!.replace('{', '{"trade_id":{{trade_id}},'), capture: 'trade_id' },
      });
    }

  // Buying: each request a listing of its own, the buyers' sessions in turn.
  const marketBuyers = market.buyers.flatMap((userId) => sessionsOf(userId));
  const buyRequests = Array.from({ length: market.listings }, (_, n) =>
    authPost('market.buy', { thing_id: market.firstItemId + n, price: market.price }, marketBuyers[n % marketBuyers.length]!),
  );

  return [
    {
      id: 'users.get-1',
      title: 'users.get, 1 id (full form)',
      requests: many(4000, () => authGet('users.get', { user_id: random.int(1, users) }, viewer())),
      connections: 10,
      target: { kind: 'ratio', min: 0.85 },
    },
    {
      id: 'users.get-50',
      title: 'users.get, 50 ids (full form)',
      requests: many(2000, () => authGet('users.get', { user_ids: ids(50, users) }, viewer())),
      connections: 10,
      target: { kind: 'ratio', min: 0.6 },
    },
    {
      id: 'friends.get',
      title: 'friends.get, 50 of 500 friends',
      requests: many(2000, () =>
        authGet('friends.get', { count: 50, offset: 50 * random.int(0, 9) }, random.pick(sessionsOf(random.pick(roles.friendHeavyUsers)))),
      ),
      connections: 10,
      target: { kind: 'ratio', min: 0.6 },
    },
    {
      id: 'data.getItemProtos',
      title: 'data.getItemProtos, 50 ids',
      requests: many(2000, () => get('data.getItemProtos', { item_proto_ids: ids(50, protos) }, anonymous())),
      connections: 10,
      target: { kind: 'ratio', min: 0.8 },
    },
    {
      id: 'data.searchItemProtos',
      title: 'data.searchItemProtos, type + quality_id, count 50',
      requests: many(1000, () => get('data.searchItemProtos', { ...SEARCH_FILTER, count: 50, offset: 50 * random.int(0, 2) }, anonymous())),
      connections: 10,
      target: { kind: 'ratio', min: 0.8 },
    },
    {
      id: 'inventory.get-100-legacy',
      title: 'inventory.get, 100 items (legacy)',
      requests: inventoryOf(roles.hundredUsers, {}),
      connections: 10,
      target: { kind: 'ratio', min: 0.8 },
    },
    {
      id: 'inventory.get-100',
      title: 'inventory.get, 100 items (add_legacy=0)',
      requests: inventoryOf(roles.hundredUsers, { add_legacy: 0 }),
      connections: 10,
      target: { kind: 'ratio', min: 0.8 },
    },
    {
      id: 'inventory.get-100-count20',
      title: 'inventory.get, 100 items, count=20',
      requests: inventoryOf(roles.hundredUsers, { count: 20 }),
      connections: 10,
      target: { kind: 'ratio', min: 0.8 },
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
      target: { kind: 'ratio', min: 0.8 },
    },
    {
      id: 'gchat.get',
      title: 'gchat.get',
      requests: many(1000, () => get('gchat.get', {}, anonymous())),
      connections: 10,
      target: { kind: 'ratio', min: 0.8 },
    },
    {
      id: 'inventory.craft',
      title: 'inventory.craft, a fresh set of ten each',
      requests: craftRequests,
      consumable: true,
      connections: 10,
      target: { kind: 'rps', min: { sqlite: 2000, postgres: 800 } },
    },
    {
      id: 'trades',
      title: 'trades.create + trades.accept, one item for one (pairs/s)',
      requests: tradeRequests,
      consumable: true,
      connections: 10,
      target: { kind: 'rpsOf', scenario: 'inventory.craft' },
    },
    {
      id: 'market.buy',
      title: 'market.buy, a listing of its own each',
      requests: buyRequests,
      consumable: true,
      connections: 10,
      target: { kind: 'rpsOf', scenario: 'inventory.craft', share: 0.7 },
    },
    {
      id: 'market.getListing-100k',
      title: 'market.getListing, count 20, of a prototype with 100,000 listings',
      requests: many(2000, () => get('market.getListing', { thing_prototype_id: market.protoId, count: 20 }, anonymous())),
      connections: 10,
      target: { kind: 'rpsOf', scenario: 'users.get-1', share: 0.5 },
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

/** Sign-ins naming e-mail addresses no account has, each from its own address: password checks anyone can ask for. */
export function unknownSigninRequests(count: number): LoadRequest[] {
  return Array.from({ length: count }, (_, i) =>
    post(
      'auth.signin',
      { email: `nobody${i}@unknown.bench.example`, password: 'a guess at a password' },
      { 'x-forwarded-for': benchAddress(202, i + 1) },
    ),
  );
}

/** The first sign-in of an ordinary account from its own address: its answer's device token makes the next ones known. */
export function knownSigninRequest(roles: WorldRoles, n: number): LoadRequest {
  return post(
    'auth.signin',
    { email: emailOf(roles.firstOrdinaryUser + n), password: BENCH_PASSWORD },
    { 'x-forwarded-for': benchAddress(203, n + 1) },
  );
}

/** Sign-ins of that account again, from the same address and with the device token it was given. */
export function knownSigninRequests(roles: WorldRoles, n: number, deviceToken: string, count: number): LoadRequest[] {
  return Array.from({ length: count }, () =>
    post(
      'auth.signin',
      { email: emailOf(roles.firstOrdinaryUser + n), password: BENCH_PASSWORD, device_token: deviceToken },
      { 'x-forwarded-for': benchAddress(203, n + 1) },
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

/**
 * The viewers' sessions, one after another: each carries the same share of the load, so that none
 * meets its token's limit (drawn at random, the busiest would in runs longer than half a minute).
 */
function viewerSessionsInTurn({ sessions, viewers }: Pick<ScenarioSetup, 'sessions' | 'viewers'>): () => Session {
  const viewerSessions = viewers.flatMap((userId) => sessions.get(userId)!);
  let next = 0;
  return () => viewerSessions[next++ % viewerSessions.length]!;
}

/** users.get requests of the viewers, for the measurements beside sign-ins and beside a flood. */
export function usersGetRequests(setup: ScenarioSetup, stream: string): LoadRequest[] {
  const random = new Random(`${setup.roles.seed}/${stream}`);
  const viewer = viewerSessionsInTurn(setup);
  return Array.from({ length: 4000 }, () => authGet('users.get', { user_id: random.int(1, setup.roles.scale.users) }, viewer()));
}

/** Addresses the flood of full inventories comes from. */
export const FLOOD_ADDRESSES = 1;

/** Anonymous requests for a 10,000-item inventory in full, from a few addresses. */
export function floodRequests(roles: WorldRoles): LoadRequest[] {
  return roles.bigUsers.flatMap((range) =>
    Array.from({ length: FLOOD_ADDRESSES }, (_, i) => get('inventory.get', { user_id: range.userId }, benchAddress(202, i + 1))),
  );
}
