/**
 * Crash safety (`npm run crash-test`): in each round the real server runs as a child process
 * on a fresh database; concurrent clients craft, open cases, redeem promo codes, trade, revoke, change
 * friendships, chat, write private messages, sell, buy and cancel on the market, quick-sell and buy
 * from the shop; the server is killed with SIGKILL at a random moment, once at least `--messages`
 * private messages have been acknowledged (default 3), and restarted on the same database; the
 * openings, shop purchases and private messages in flight are sent again with their request_id or
 * send_id; then the invariants of test-crash/invariants.ts are checked against everything the
 * clients saw acknowledged. Twenty rounds on SQLite, and twenty on PostgreSQL when
 * TEST_DATABASE_URL is set.
 *
 *   npm run crash-test -- [--rounds N] [--db sqlite|postgres] [--seed S] [--messages M]
 */
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import type { Database } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { newToken, sha256 } from '../src/infra/secrets.js';
import { importWorld } from '../src/world/import.js';
import type { World } from '../src/world/schema.js';
import { catalogWorld } from '../test/item-fixtures.js';
import { postgresLocation, sqliteLocation, startServerProcess, type ServerProcess } from './server-process.js';
import { newStormLog, runStorm, type StormLog } from './storm.js';
import { checkInvariants } from './invariants.js';

const ADMIN_KEY = 'crash-test-admin-key-0123456789';
const CRAFTERS = [1, 2, 3, 4, 5, 6];
const ITEMS_PER_CRAFTER = 600;
const FRIENDS = Array.from({ length: 12 }, (_, i) => 11 + i);
const PAIRS = 20;
const CHATTERS = [31, 32, 33, 34];
const OPENERS = [41, 42];
const CASES_PER_OPENER = 300;
const REDEEMERS = Array.from({ length: 10 }, (_, i) => 51 + i);
const TRADERS = [71, 72, 73, 74];
const ITEMS_PER_TRADER = 40;
const MARKETEERS = [81, 82, 83, 84];
const ITEMS_PER_MARKETEER = 30;
/** Kopecks each market user starts with, granted in the world's ledger. */
const MARKET_GRANT = 100_000;
/** Every fifth code has 4 uses for the 10 redeemers; the others are open to all. */
const PROMOCODES = Array.from({ length: 40 }, (_, i) => ({
  code: `CRASH-${String(i).padStart(2, '0')}`,
  item_proto_ids: [101, 601],
  ...(i % 5 === 0 ? { max_uses: 4 } : {}),
}));
/** Says one thing before the storm, so the first messages of the storm do not meet a cold chat. */
const HERALD = 40;
/** The kill comes this long after the storm starts (milliseconds, uniformly)... */
const KILL_AFTER = { min: 300, max: 3000 };
/** ...or later, once the private messages asked for are acknowledged, waited for this long at most (milliseconds). */
const MESSAGES_WAIT = 60_000;

/** No request limits: the storm is as fast as the server. */
const SERVE_ARGS = [
  '--no-rate-limit',
  '--trade-create-rate',
  '1000000',
  '--trade-open-max',
  '100000',
  '--im-burst',
  '1000000',
  '--im-per-hour',
  '10000000',
  '--im-young-account-days',
  '0',
  // Bought items may be sold again at once, so items go round.
  '--market-hold',
  '0',
];

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '20' },
    db: { type: 'string' },
    seed: { type: 'string' },
    messages: { type: 'string', default: '3' },
  },
});
const MESSAGES = Number(args.messages);
const ROUNDS = Number(args.rounds);
const SEED = args.seed !== undefined ? Number(args.seed) : Date.now() % 1_000_000;

/** A small seeded generator: with --seed a round gets the same kill moment and the same choices again. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

interface Setup {
  tokens: Map<number, string>;
  crafters: Map<number, number[]>;
  openers: Map<number, { cases: number[]; keys: number[] }>;
  traders: Map<number, number[]>;
  marketeers: Map<number, number[]>;
  originalItemIds: number[];
  /** The first owner of every item of the world. */
  firstOwners: Map<number, number>;
}

/** The world of a round, and a session for every user, written before the server starts. */
async function prepare(db: Database): Promise<Setup> {
  const crafters = new Map(CRAFTERS.map((userId) => [userId, Array.from({ length: ITEMS_PER_CRAFTER }, (_, i) => userId * 10_000 + i)]));
  const openers = new Map(
    OPENERS.map((userId) => [
      userId,
      {
        cases: Array.from({ length: CASES_PER_OPENER }, (_, i) => userId * 10_000 + i),
        keys: Array.from({ length: CASES_PER_OPENER }, (_, i) => userId * 10_000 + 5000 + i),
      },
    ]),
  );
  const traders = new Map(TRADERS.map((userId) => [userId, Array.from({ length: ITEMS_PER_TRADER }, (_, i) => userId * 10_000 + i)]));
  const marketeers = new Map(
    MARKETEERS.map((userId) => [userId, Array.from({ length: ITEMS_PER_MARKETEER }, (_, i) => userId * 10_000 + i)]),
  );
  const world: World = {
    ...catalogWorld,
    users: [...CRAFTERS, ...FRIENDS, ...CHATTERS, HERALD, ...OPENERS, ...REDEEMERS, ...TRADERS, ...MARKETEERS].map((userId) => ({
      user_id: userId,
      nick: `user${userId}`,
    })),
    items: [
      ...[...crafters, ...traders].flatMap(([userId, ids]) =>
        ids.map((item_id, i) => ({ item_id, user_id: userId, item_proto_id: i % 2 === 0 ? 101 : 102, ts_owned: 100 })),
      ),
      ...[...openers].flatMap(([userId, owned]) => [
        ...owned.cases.map((item_id) => ({ item_id, user_id: userId, item_proto_id: 501, ts_owned: 100 })),
        ...owned.keys.map((item_id) => ({ item_id, user_id: userId, item_proto_id: 502, ts_owned: 100 })),
      ]),
      ...[...marketeers].flatMap(([userId, ids]) =>
        ids.map((item_id) => ({ item_id, user_id: userId, item_proto_id: 101, ts_owned: 100 })),
      ),
    ],
    promocodes: PROMOCODES,
    balances: MARKETEERS.map((user_id) => ({ user_id, balance: MARKET_GRANT })),
    ledger: MARKETEERS.map((userId, i) => ({
      transfer_id: i + 1,
      kind: 'admin_grant' as const,
      reason: 'crash test',
      entries: [
        { account_id: userId, kind: 'admin_grant' as const, amount: MARKET_GRANT, balance_after: MARKET_GRANT },
        { account_id: -2, kind: 'admin_grant' as const, amount: -MARKET_GRANT },
      ],
    })),
  };
  await migrateToLatest(db);
  const now = Math.floor(Date.now() / 1000);
  await importWorld(db, world, { mode: 'replace', now });
  const tokens = new Map<number, string>();
  for (const { user_id } of world.users!) {
    const token = newToken();
    tokens.set(user_id, token);
    await db.kysely
      .insertInto('sessions')
      .values({
        user_id,
        family_id: randomUUID(),
        access_hash: sha256(token),
        refresh_hash: null,
        ip: null,
        is_bot: 0,
        expires_at: now + 86400,
        created_at: now,
      })
      .execute();
  }
  const firstOwners = new Map(world.items!.map((item) => [item.item_id!, item.user_id]));
  return {
    tokens,
    crafters,
    openers,
    traders,
    marketeers,
    originalItemIds: [...crafters.values(), ...traders.values(), ...marketeers.values()]
      .flat()
      .concat([...openers.values()].flatMap((o) => [...o.cases, ...o.keys])),
    firstOwners,
  };
}

function choosePairs(random: () => number): [number, number][] {
  const all: [number, number][] = [];
  for (let i = 0; i < FRIENDS.length; i++) for (let j = i + 1; j < FRIENDS.length; j++) all.push([FRIENDS[i]!, FRIENDS[j]!]);
  for (let i = all.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [all[i], all[j]] = [all[j]!, all[i]!];
  }
  return all.slice(0, PAIRS);
}

/** After the restart the server answers from what survived: a few reads agree with the database. */
async function checkRestartedServer(server: ServerProcess, db: Database, setup: Setup): Promise<string[]> {
  const problems: string[] = [];
  const get = async (method: string, params: Record<string, string>, token?: string) => {
    const query = new URLSearchParams(params).toString();
    const response = await fetch(`${server.url}/api/${method}?${query}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    const body = (await response.json()) as { code: number; data?: any };
    if (response.status !== 200 || body.code !== 0)
      problems.push(`${method} after the restart: HTTP ${response.status} ${JSON.stringify(body).slice(0, 300)}`);
    return body.data;
  };
  for (const userId of CRAFTERS.slice(0, 2)) {
    const data = await get('inventory.get', { user_id: String(userId), count: '0' });
    const owned = await db.kysely
      .selectFrom('items')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .where('state', '=', 'owned')
      .executeTakeFirstOrThrow();
    if (data && data.count !== Number(owned.n))
      problems.push(`inventory.get of user ${userId} counts ${data.count}, the database ${owned.n}`);
  }
  const chat = await get('gchat.get', {});
  const kept = await db.kysely
    .selectFrom('chat_messages')
    .select('msg_id')
    .where('deleted_at', 'is', null)
    .orderBy('msg_seq', 'desc')
    .limit(100)
    .execute();
  const served: string[] = (chat?.messages ?? []).map((m: { msg_id: string }) => m.msg_id);
  const stored = new Set(kept.map((r) => r.msg_id));
  if (served.length !== kept.length || served.some((id) => !stored.has(id)))
    problems.push(`gchat.get serves ${served.length} messages that are not the newest ${kept.length} kept ones`);
  const friend = FRIENDS[0]!;
  const friends = await get('friends.get', { user_id: String(friend) }, setup.tokens.get(friend));
  const storedFriends = await db.kysely.selectFrom('friendships').select('friend_id').where('user_id', '=', friend).execute();
  if (friends && friends.count !== storedFriends.length)
    problems.push(`friends.get of ${friend} counts ${friends.count}, the database ${storedFriends.length}`);
  return problems;
}

/**
 * The openings in flight at the kill, sent again with their request_id: one that committed
 * answers its recorded result, one that did not opens now (or answers 603 when the other
 * client took its case or key meanwhile).
 */
async function retryPendingOpenings(server: ServerProcess, db: Database, setup: Setup, log: StormLog): Promise<string[]> {
  const problems: string[] = [];
  for (const pending of log.pendingOpenings.splice(0)) {
    const stored = await db.kysely
      .selectFrom('draws')
      .select('result_item_ids')
      .where('user_id', '=', pending.userId)
      .where('request_id', '=', pending.requestId)
      .executeTakeFirst();
    const response = await fetch(`${server.url}/api/inventory.open`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${setup.tokens.get(pending.userId)}` },
      body: JSON.stringify({ item_id: pending.caseItemId, key_item_id: pending.keyItemId, request_id: pending.requestId }),
    });
    const body = (await response.json()) as { code: number; data?: { items: { item_id: number }[] } };
    const received = body.data?.items.map((item) => item.item_id);
    if (stored && (body.code !== 0 || JSON.stringify(received) !== stored.result_item_ids))
      problems.push(
        `the retry of committed opening ${pending.requestId} answered ${JSON.stringify(body).slice(0, 300)}, not its result ${stored.result_item_ids}`,
      );
    else if (!stored && body.code !== 0 && body.code !== 603)
      problems.push(`the retry of opening ${pending.requestId} answered ${JSON.stringify(body).slice(0, 300)}`);
    if (body.code === 0) log.openings.push({ ...pending, resultItemIds: received });
  }
  return problems;
}

/**
 * The private messages in flight at the kill, sent again with their send_id: one that committed
 * answers the msg_id it was stored under and stores nothing more; one that did not is stored now.
 */
async function retryPendingPrivateMessages(server: ServerProcess, db: Database, setup: Setup, log: StormLog): Promise<string[]> {
  const problems: string[] = [];
  for (const pending of log.pendingPrivateMessages.splice(0)) {
    const stored = await db.kysely
      .selectFrom('im_messages')
      .select('msg_id')
      .where('sender_id', '=', pending.from)
      .where('send_id', '=', pending.sendId)
      .executeTakeFirst();
    const response = await fetch(`${server.url}/api/im.send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${setup.tokens.get(pending.from)}` },
      body: JSON.stringify({ user_id: pending.to, text: pending.text, send_id: pending.sendId }),
    });
    const body = (await response.json()) as { code: number; data?: { msg_id: number } };
    if (body.code !== 0 || !body.data) {
      problems.push(`the retry of private message ${pending.sendId} answered ${JSON.stringify(body).slice(0, 300)}`);
      continue;
    }
    if (stored && body.data.msg_id !== Number(stored.msg_id))
      problems.push(`the retry of committed private message ${pending.sendId} answered ${body.data.msg_id}, not ${stored.msg_id}`);
    log.retriedPrivateMessages.push({ ...pending, msgId: body.data.msg_id, committed: stored !== undefined });
  }
  return problems;
}

/**
 * The shop purchases in flight at the kill, sent again with their request_id: one that committed
 * answers the same item, one that did not buys now.
 */
async function retryPendingShopping(server: ServerProcess, db: Database, setup: Setup, log: StormLog): Promise<string[]> {
  const problems: string[] = [];
  for (const pending of log.pendingMarket.filter((r) => r.op === 'shop')) {
    const stored = await db.kysely
      .selectFrom('shop_purchases')
      .select('answer')
      .where('user_id', '=', pending.userId)
      .where('request_id', '=', pending.requestId)
      .executeTakeFirst();
    const response = await fetch(`${server.url}/api/shop.buy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${setup.tokens.get(pending.userId)}` },
      body: JSON.stringify({ item_proto_id: 101, request_id: pending.requestId }),
    });
    const body = (await response.json()) as { code: number; data?: { item: { item_id: number } } };
    if (body.code !== 0) problems.push(`the retry of shop purchase ${pending.requestId} answered ${JSON.stringify(body).slice(0, 300)}`);
    else if (stored && stored.answer !== JSON.stringify(body.data))
      problems.push(
        `the retry of committed shop purchase ${pending.requestId} answered ${JSON.stringify(body.data)}, not ${stored.answer}`,
      );
    else {
      log.pendingMarket.splice(log.pendingMarket.indexOf(pending), 1);
      log.market.push({ ...pending, itemId: body.data!.item.item_id });
    }
  }
  return problems;
}

/** Waits until `count` private messages are acknowledged; false when they are not within `ms`. */
async function privateMessagesAcknowledged(log: StormLog, count: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (log.privateMessages.length < count) {
    if (Date.now() >= until || log.gone) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

interface RoundResult {
  problems: string[];
  log: StormLog;
  killedAfterMs: number;
}

async function round(kind: 'sqlite' | 'postgres', number: number, seed: number): Promise<RoundResult> {
  const random = seeded(seed);
  const location = kind === 'sqlite' ? sqliteLocation() : postgresLocation(process.env.TEST_DATABASE_URL!, `crash_${number}`);
  const servers: ServerProcess[] = [];
  try {
    const setupDb = await location.open();
    const setup = await prepare(setupDb).finally(() => setupDb.close());

    const first = await startServerProcess({
      databaseUrl: location.url,
      secretKey: location.secretKey,
      adminKey: ADMIN_KEY,
      args: SERVE_ARGS,
    });
    servers.push(first);
    // One read of each kind first, so the storm meets a warm server rather than its first compilations.
    for (const path of ['gchat.get', `inventory.get?user_id=${CRAFTERS[0]}&count=1`, `friends.get?user_id=${FRIENDS[0]}`])
      await (await fetch(`${first.url}/api/${path}`)).text();
    await (
      await fetch(`${first.url}/api/gchat.send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${setup.tokens.get(HERALD)}` },
        body: '{"message":"the storm begins"}',
      })
    ).text();
    const log = newStormLog();
    const killedAfterMs = Math.round(KILL_AFTER.min + random() * (KILL_AFTER.max - KILL_AFTER.min));
    const storm = runStorm(
      {
        url: first.url,
        adminKey: ADMIN_KEY,
        tokens: setup.tokens,
        crafters: setup.crafters,
        pairs: choosePairs(random),
        chatters: CHATTERS,
        openers: setup.openers,
        traders: setup.traders,
        redeemers: REDEEMERS,
        marketeers: setup.marketeers,
        promocodes: PROMOCODES.map((p) => p.code),
        round: number,
        random,
      },
      log,
    );
    await new Promise((resolve) => setTimeout(resolve, killedAfterMs));
    if (!(await privateMessagesAcknowledged(log, MESSAGES, MESSAGES_WAIT)))
      log.unexpected.push(
        `only ${log.privateMessages.length} of the ${MESSAGES} private messages asked for were acknowledged before the kill`,
      );
    const how = await first.kill('SIGKILL');
    if (how !== 'SIGKILL') log.unexpected.push(`the server had already exited (${how}) before the kill:\n${first.output()}`);
    await storm;

    const second = await startServerProcess({
      databaseUrl: location.url,
      secretKey: location.secretKey,
      adminKey: ADMIN_KEY,
      args: SERVE_ARGS,
    });
    servers.push(second);
    const db = await location.open();
    try {
      const problems = [
        ...log.unexpected,
        ...(await checkRestartedServer(second, db, setup)),
        ...(await retryPendingOpenings(second, db, setup, log)),
        ...(await retryPendingPrivateMessages(second, db, setup, log)),
        ...(await retryPendingShopping(second, db, setup, log)),
      ];
      const stopped = await second.kill('SIGTERM');
      if (stopped !== 'exit 0') problems.push(`the restarted server did not stop cleanly on SIGTERM (${stopped}):\n${second.output()}`);
      problems.push(
        ...(await checkInvariants(db, log, setup.originalItemIds, new Map(PROMOCODES.map((p) => [p.code, p])), setup.firstOwners)),
      );
      return { problems, log, killedAfterMs };
    } finally {
      await db.close();
    }
  } finally {
    for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) await server.kill('SIGKILL');
    await location.dispose();
  }
}

async function main(): Promise<void> {
  const kinds: ('sqlite' | 'postgres')[] = args.db ? [args.db as 'sqlite' | 'postgres'] : ['sqlite'];
  if (!args.db && process.env.TEST_DATABASE_URL) kinds.push('postgres');
  if (!args.db && !process.env.TEST_DATABASE_URL) console.log('TEST_DATABASE_URL is not set: the PostgreSQL rounds are skipped');
  if (kinds.includes('postgres') && !process.env.TEST_DATABASE_URL) throw new Error('--db postgres needs TEST_DATABASE_URL');
  console.log(`crash test: ${ROUNDS} rounds on ${kinds.join(' and ')}, seed ${SEED}`);
  let failed = 0;
  for (const kind of kinds) {
    for (let n = 1; n <= ROUNDS; n++) {
      const seed = SEED * 1000 + n;
      const started = Date.now();
      const { problems, log, killedAfterMs } = await round(kind, n, seed);
      const pending = log.pairs.filter((p) => p.pending).length;
      console.log(
        `${kind} round ${String(n).padStart(2)}: killed after ${killedAfterMs} ms; acknowledged ${log.crafts.length} crafts, ${log.openings.length} openings, ${log.redemptions.length} redemptions, ${log.market.length} market operations, ` +
          `${log.revocations.length} revocations, ${log.trades.filter((t) => t.accepted).length} of ${log.trades.length} trades accepted, ${log.pairs.reduce((s, p) => s + p.acked, 0)} friend changes (${pending} in flight), ` +
          `${log.messages.length} messages, ${log.deletions.size} deletions, ${log.privateMessages.length} private messages ` +
          `(${log.retriedPrivateMessages.length} in flight sent again, ${log.retriedPrivateMessages.filter((m) => m.committed).length} of them stored before the kill); ` +
          `${log.requests} requests; ${Date.now() - started} ms` +
          (problems.length > 0 ? ` — ${problems.length} VIOLATIONS` : ' — ok'),
      );
      if (problems.length > 0) {
        failed++;
        for (const problem of problems.slice(0, 20)) console.log(`    ${problem}`);
        console.log(`    replay: npm run crash-test -- --db ${kind} --seed ${SEED} (round ${n})`);
      }
    }
  }
  if (failed > 0) {
    console.error(`crash test FAILED: ${failed} rounds broke an invariant`);
    process.exit(1);
  }
  console.log('crash test passed: nothing acknowledged was lost, nothing was duplicated');
}

main().catch((error: unknown) => {
  console.error('crash test could not run:', error);
  process.exit(1);
});
