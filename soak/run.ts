/**
 * Soak (`npm run soak`): mixed traffic at saturation against the real server in a child
 * process for --minutes (default 10). Every answer's code must be one its request can get;
 * the server's resident memory is sampled every few seconds, printed as a curve, and judged
 * flat or growing after the warm-up. Exits non-zero on an unexpected code or growing memory.
 *
 *   npm run soak -- [--minutes M] [--clients N] [--db sqlite|postgres] [--sample-seconds S]
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { hashPassword } from '../src/auth/passwords.js';
import type { Database } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { newToken, sha256 } from '../src/infra/secrets.js';
import { importWorld } from '../src/world/import.js';
import type { World } from '../src/world/schema.js';
import { catalogWorld } from '../test/item-fixtures.js';
import { postgresLocation, sqliteLocation, startServerProcess } from '../test-crash/server-process.js';

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    clients: { type: 'string', default: '32' },
    db: { type: 'string', default: 'sqlite' },
    'sample-seconds': { type: 'string', default: '5' },
  },
});
const MINUTES = Number(args.minutes);
const CLIENTS = Number(args.clients);
const SAMPLE_SECONDS = Number(args['sample-seconds']);
/** The first part of the run, and at least a minute of it when the run allows, is warm-up. */
const WARMUP_SECONDS = Math.min(60, MINUTES * 60 * 0.3);
/** Growth from the first to the last quarter after warm-up that still counts as flat. */
const FLAT = { ratio: 0.1, bytes: 24 * 1024 * 1024 };

const ADMIN_KEY = 'soak-admin-key-0123456789abcdef';
const PASSWORD = 'soak test password';
const USERS = 200;
/** Users 1-20 sign in with a password; every user also has a session made up front. */
const PASSWORD_USERS = 20;
const CARDS_PER_USER = 40;

interface Reply {
  status: number;
  code: number;
  data?: any;
}

const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS * 2 });

interface CallOptions {
  token?: string;
  admin?: boolean;
  get?: boolean;
  /** The client's address, as a reverse proxy would pass it on. */
  from?: string;
}

function call(base: string, method: string, params: Record<string, unknown>, auth: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (auth.from) headers['x-forwarded-for'] = auth.from;
  if (auth.token) headers.authorization = `Bearer ${auth.token}`;
  if (auth.admin) headers['x-admin-key'] = ADMIN_KEY;
  let path = `/api/${method}`;
  let body: string | undefined;
  if (auth.get) {
    const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();
    if (query) path += `?${query}`;
  } else {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(params);
  }
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: auth.get ? 'GET' : 'POST', headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        try {
          const parsed = JSON.parse(text) as { code: number; data?: unknown };
          resolve({ status: res.statusCode ?? 0, code: typeof parsed.code === 'number' ? parsed.code : -1, data: parsed.data });
        } catch {
          resolve({ status: res.statusCode ?? 0, code: -1 });
        }
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Counts per operation and code; codes outside an operation's expected set are violations. */
class Tally {
  readonly counts = new Map<string, Map<number, number>>();
  /** The first few unexpected answers, for the report. */
  readonly unexpected: string[] = [];
  unexpectedCount = 0;
  total = 0;

  record(operation: string, reply: Reply, expected: number[]): Reply {
    this.total++;
    let codes = this.counts.get(operation);
    if (!codes) this.counts.set(operation, (codes = new Map()));
    codes.set(reply.code, (codes.get(reply.code) ?? 0) + 1);
    if (!expected.includes(reply.code) || reply.status >= 500) this.fail(`${operation}: HTTP ${reply.status} code ${reply.code}`);
    return reply;
  }

  fail(problem: string): void {
    this.unexpectedCount++;
    if (this.unexpected.length < 50) this.unexpected.push(problem);
  }
}

interface Client {
  userId: number;
  token: string;
  refreshToken?: string;
  /** Class-1 cards this user is believed to own. */
  cards: number[];
}

async function prepare(db: Database): Promise<Map<number, Client>> {
  const passwordHash = await hashPassword(PASSWORD);
  const users = Array.from({ length: USERS }, (_, i) => i + 1);
  const world: World = {
    ...catalogWorld,
    users: users.map((user_id) => ({
      user_id,
      nick: `soak${user_id}`,
      ...(user_id <= PASSWORD_USERS ? { email: `soak${user_id}@example.com`, password_hash: passwordHash } : {}),
    })),
    items: users.flatMap((user_id) =>
      Array.from({ length: CARDS_PER_USER }, (_, i) => ({
        item_id: user_id * 1000 + i,
        user_id,
        item_proto_id: i % 2 ? 102 : 101,
        ts_owned: 100,
      })),
    ),
    friends: users.filter((u) => u % 10 === 0).map((u) => [u, u - 1] as [number, number]),
  };
  await migrateToLatest(db);
  const now = Math.floor(Date.now() / 1000);
  await importWorld(db, world, { mode: 'replace', now });
  const clients = new Map<number, Client>();
  for (const userId of users) {
    const token = newToken();
    await db.kysely
      .insertInto('sessions')
      .values({
        user_id: userId,
        family_id: randomUUID(),
        access_hash: sha256(token),
        refresh_hash: null,
        ip: null,
        is_bot: 0,
        expires_at: now + 7 * 86400,
        created_at: now,
      })
      .execute();
    clients.set(userId, { userId, token, cards: Array.from({ length: CARDS_PER_USER }, (_, i) => userId * 1000 + i) });
  }
  return clients;
}

/** One closed-loop client: picks an operation by weight, sends it, and goes again until the end. */
async function trafficClient(base: string, clients: Map<number, Client>, tally: Tally, until: number, index: number): Promise<void> {
  let state = 7919 * (index + 1);
  // Each client signs in from its own address as one account: sign-in defences count attempts
  // in flight per address and per e-mail, so a crowd of real users is spread like this too.
  const address = `10.77.${index >> 8}.${index & 255}`;
  const account = 1 + (index % PASSWORD_USERS);
  const random = () => (state = (state * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const pick = () => clients.get(1 + Math.floor(random() * USERS))!;
  const operations: [number, () => Promise<unknown>][] = [
    [
      12,
      () =>
        call(
          base,
          'users.get',
          { user_ids: Array.from({ length: 1 + Math.floor(random() * 20) }, () => 1 + Math.floor(random() * USERS)).join(',') },
          { get: true },
        ).then((r) => tally.record('users.get', r, [0])),
    ],
    [10, () => call(base, 'gchat.get', {}, { get: true }).then((r) => tally.record('gchat.get', r, [0]))],
    [8, () => call(base, 'friends.get', { user_id: pick().userId }, { get: true }).then((r) => tally.record('friends.get', r, [0]))],
    [
      10,
      () =>
        call(base, 'inventory.get', { user_id: pick().userId, count: 20 }, { get: true }).then((r) =>
          tally.record('inventory.get', r, [0]),
        ),
    ],
    [
      6,
      () =>
        call(base, 'data.getItemProtos', { item_proto_ids: '101,102,201,501' }, { get: true }).then((r) =>
          tally.record('data.getItemProtos', r, [0]),
        ),
    ],
    [
      4,
      () =>
        call(base, 'data.searchItemProtos', { type: 0, count: 20 }, { get: true }).then((r) =>
          tally.record('data.searchItemProtos', r, [0]),
        ),
    ],
    [
      8,
      async () => {
        const a = pick();
        const b = pick();
        const add = random() < 0.6;
        const reply = await call(base, add ? 'friends.add' : 'friends.delete', { user_id: b.userId }, { token: a.token });
        // 2: a user asked to befriend themselves.
        tally.record(add ? 'friends.add' : 'friends.delete', reply, a.userId === b.userId ? [2] : [0]);
      },
    ],
    [
      3,
      async () =>
        tally.record(
          'gchat.send',
          await call(base, 'gchat.send', { message: `soak ${Math.floor(random() * 1e9)}` }, { token: pick().token }),
          [0],
        ),
    ],
    [
      8,
      async () => {
        const client = pick();
        if (client.cards.length < 10) {
          const granted = tally.record(
            'admin.grantItems',
            await call(base, 'admin.grantItems', { user_id: client.userId, item_proto_id: 101, copies: 50 }, { admin: true }),
            [0],
          );
          if (granted.code === 0) client.cards.push(...(granted.data.item_ids as number[]));
          return;
        }
        const ids = client.cards.splice(0, 10);
        // 603: another client crafted some of these items first.
        tally.record(
          'inventory.craft',
          await call(base, 'inventory.craft', { item_ids: ids.join(',') }, { token: client.token }),
          [0, 603],
        );
      },
    ],
    [
      1,
      async () => {
        const from = address;
        const signin = tally.record(
          'auth.signin',
          await call(base, 'auth.signin', { email: `soak${account}@example.com`, password: PASSWORD }, { from }),
          [0],
        );
        if (signin.code !== 0) return;
        const refreshed = tally.record(
          'auth.refresh',
          await call(base, 'auth.refresh', { refresh_token: signin.data.refresh_token }, { from }),
          [0],
        );
        if (refreshed.code === 0)
          tally.record('auth.signout', await call(base, 'auth.signout', {}, { token: refreshed.data.access_token, from }), [0]);
      },
    ],
    [
      2,
      async () =>
        tally.record('hostile', await call(base, 'data.searchItemProtos', { type: 0, count: "1' OR 1=1 --" }, { get: true }), [2]),
    ],
    [1, async () => tally.record('unknown method', await call(base, 'no.such', {}, { get: true }), [5])],
  ];
  const totalWeight = operations.reduce((s, [w]) => s + w, 0);
  while (Date.now() < until) {
    let roll = random() * totalWeight;
    const operation = operations.find(([w]) => (roll -= w) < 0)![1];
    try {
      await operation();
    } catch (error) {
      tally.fail(`request failed: ${(error as Error).message}`);
      if (tally.unexpectedCount > 50) return;
    }
  }
}

/** Subscribers of the realtime feed that come and go during the run. */
async function churnSubscribers(base: string, until: number, tally: Tally): Promise<void> {
  const wsBase = base.replace(/^http/, 'ws');
  while (Date.now() < until) {
    const sockets = Array.from({ length: 20 }, () => new WebSocket(`${wsBase}/ws?subs=gchat`));
    await Promise.all(sockets.map((s) => new Promise((resolve) => (s.once('open', resolve), s.once('error', resolve)))));
    for (const s of sockets) if (s.readyState !== WebSocket.OPEN) tally.fail('a WebSocket subscriber could not connect');
    await new Promise((resolve) => setTimeout(resolve, 2000));
    for (const s of sockets) s.close();
  }
}

function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

/** The RSS curve as rows of a bar chart, and whether it is flat after the warm-up. */
function judgeMemory(samples: { seconds: number; rss: number }[]): { flat: boolean; lines: string[] } {
  const max = Math.max(...samples.map((s) => s.rss));
  const lines = samples.map(
    (s) =>
      `  ${String(s.seconds).padStart(5)} s  ${mb(s.rss).padStart(7)} MB  ${'#'.repeat(Math.round((s.rss / max) * 50))}${s.seconds < WARMUP_SECONDS ? '  (warm-up)' : ''}`,
  );
  const steady = samples.filter((s) => s.seconds >= WARMUP_SECONDS);
  if (steady.length < 4) return { flat: true, lines: [...lines, '  too few samples after the warm-up to judge'] };
  const quarter = Math.max(1, Math.floor(steady.length / 4));
  const mean = (list: { rss: number }[]) => list.reduce((s, x) => s + x.rss, 0) / list.length;
  const early = mean(steady.slice(0, quarter));
  const late = mean(steady.slice(-quarter));
  const growth = late - early;
  const flat = growth <= Math.max(FLAT.bytes, early * FLAT.ratio);
  lines.push(
    `  after warm-up: first quarter ${mb(early)} MB, last quarter ${mb(late)} MB, growth ${mb(growth)} MB ` +
      `(flat up to ${mb(Math.max(FLAT.bytes, early * FLAT.ratio))} MB): ${flat ? 'FLAT' : 'GROWING'}`,
  );
  return { flat, lines };
}

async function main(): Promise<void> {
  if (args.db === 'postgres' && !process.env.TEST_DATABASE_URL) throw new Error('--db postgres needs TEST_DATABASE_URL');
  const location = args.db === 'postgres' ? postgresLocation(process.env.TEST_DATABASE_URL!, 'soak') : sqliteLocation();
  try {
    const setupDb = await location.open();
    const clients = await prepare(setupDb).finally(() => setupDb.close());
    const server = await startServerProcess({
      databaseUrl: location.url,
      secretKey: location.secretKey,
      adminKey: ADMIN_KEY,
      args: ['--no-rate-limit', '--trust-proxy'],
    });
    console.log(`soak: ${MINUTES} min, ${CLIENTS} clients, ${args.db}, server pid ${server.pid} at ${server.url}`);
    const tally = new Tally();
    const started = Date.now();
    const until = started + MINUTES * 60_000;
    const samples: { seconds: number; rss: number }[] = [];
    let lastTotal = 0;
    const sampler = setInterval(() => {
      const seconds = Math.round((Date.now() - started) / 1000);
      const rss = rssOf(server.pid);
      samples.push({ seconds, rss });
      const rate = Math.round((tally.total - lastTotal) / SAMPLE_SECONDS);
      lastTotal = tally.total;
      console.log(`  ${String(seconds).padStart(5)} s  RSS ${mb(rss)} MB  ${rate} req/s  ${tally.unexpectedCount} unexpected`);
    }, SAMPLE_SECONDS * 1000);
    await Promise.all([
      ...Array.from({ length: CLIENTS }, (_, i) => trafficClient(server.url, clients, tally, until, i)),
      churnSubscribers(server.url, until, tally),
    ]);
    clearInterval(sampler);
    const seconds = (Date.now() - started) / 1000;
    const stopped = await server.kill('SIGTERM');
    agent.destroy();

    console.log(`\n${tally.total} requests in ${seconds.toFixed(0)} s: ${Math.round(tally.total / seconds)} req/s`);
    for (const [operation, codes] of [...tally.counts].sort())
      console.log(`  ${operation.padEnd(22)} ${[...codes].map(([c, n]) => `code ${c}: ${n}`).join(', ')}`);
    console.log('\nServer RSS:');
    const memory = judgeMemory(samples);
    for (const line of memory.lines) console.log(line);
    const problems: string[] = [];
    if (tally.unexpectedCount > 0)
      problems.push(`${tally.unexpectedCount} unexpected answers:\n    ${tally.unexpected.slice(0, 20).join('\n    ')}`);
    if (!memory.flat) problems.push('memory grows after the warm-up');
    if (stopped !== 'exit 0') problems.push(`the server did not stop cleanly (${stopped}):\n${server.output().slice(-2000)}`);
    if (problems.length > 0) {
      console.error(`\nsoak FAILED:\n  ${problems.join('\n  ')}`);
      process.exitCode = 1;
    } else {
      console.log('\nsoak passed: zero unexpected codes, memory flat after the warm-up');
    }
  } finally {
    await location.dispose();
  }
}

main().catch((error: unknown) => {
  console.error('soak could not run:', error);
  process.exit(1);
});
