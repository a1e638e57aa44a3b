/**
 * `npm run bench:messages`: private messages against the real server (a child process from the
 * sources, SQLite by default, PostgreSQL with `--db postgres` and TEST_DATABASE_URL). With
 * `--connections` (default 1,000) signed-in realtime connections open, one per user, it measures
 *
 *   - sends a second: `im.send` between pairs of users, against `gchat.send` by the same users,
 *     each from `--concurrency` clients at once for `--seconds`, after `--warmup` seconds of each;
 *   - delivery: the time from `im.send`'s answer to the receiver's `im.sync` frame, p50 and p99,
 *     over `--messages` messages sent at a steady pace (a frame that arrives before the answer
 *     counts 0).
 *
 * `--cpu-prof` writes the server's CPU profile to bench/.cache/profiles/messages/ (read it with
 * bench/profile-summary.ts). The numbers depend on the machine and on what else runs on it:
 * compare runs on one machine.
 */
import { parseArgs } from 'node:util';
import { rmSync } from 'node:fs';
import WebSocket from 'ws';
import { percentile, signInUsers, usersWorld } from './live-support.js';
import { postgresLocation, sqliteLocation, startServerProcess } from '../test-crash/server-process.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    connections: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '32' },
    seconds: { type: 'string', default: '5' },
    messages: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '2' },
    'cpu-prof': { type: 'boolean', default: false },
  },
});
const CONNECTIONS = Number(args.connections);
const CONCURRENCY = Number(args.concurrency);
const SECONDS = Number(args.seconds);
const MESSAGES = Number(args.messages);
const WARMUP = Number(args.warmup);
const USERS = Math.max(2, CONNECTIONS + (CONNECTIONS % 2));

const partnerOf = (userId: number) => (userId % 2 === 1 ? userId + 1 : userId - 1);

async function main(): Promise<void> {
  const location = args.db === 'postgres' ? postgresLocation(process.env.TEST_DATABASE_URL!, 'bench_im') : sqliteLocation();
  const { dir, worldFile } = usersWorld('im', USERS);
  // Opening the database first creates its schema (PostgreSQL) for the server to migrate.
  const db = await location.open();
  const server = await startServerProcess({
    databaseUrl: location.url,
    secretKey: location.secretKey,
    nodeArgs: args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', 'bench/.cache/profiles/messages'] : [],
    args: [
      '--world',
      worldFile,
      '--no-rate-limit',
      '--max-connections-per-ip',
      '100000',
      '--im-burst',
      '1000000',
      '--im-per-hour',
      '10000000',
      '--im-young-account-days',
      '0',
    ],
  });
  const sockets: WebSocket[] = [];
  try {
    const tokens = await signInUsers(db, USERS);

    // msg_id → when the receiver's frame arrived (performance.now()).
    const heard = new Map<number, number>();
    const waiting = new Map<number, () => void>();
    const wsUrl = `${server.url.replace('http', 'ws')}/ws`;
    for (let userId = 1; userId <= CONNECTIONS; userId++) {
      const socket = new WebSocket(`${wsUrl}?subs=&access_token=${tokens.get(userId)}`);
      socket.on('message', (raw) => {
        const text = raw.toString();
        if (text === '2') return socket.send('3');
        if (!text.startsWith('4events')) return;
        const at = performance.now();
        for (const event of JSON.parse(text.slice(7)).events)
          if (event.type === 'im.sync' && event.data?.type === 1 && event.message?.user_id !== userId) {
            heard.set(event.data.msg_id, at);
            waiting.get(event.data.msg_id)?.();
          }
      });
      await new Promise<void>((resolve, reject) => {
        socket.once('open', () => resolve());
        socket.once('error', reject);
      });
      sockets.push(socket);
    }

    const post = async (method: string, userId: number, params: Record<string, unknown>) => {
      const response = await fetch(`${server.url}/api/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.get(userId)}` },
        body: JSON.stringify(params),
      });
      const body = (await response.json()) as { code: number; data?: { msg_id: number } };
      if (body.code !== 0) throw new Error(`${method} answered ${JSON.stringify(body)}`);
      return body.data!;
    };

    const rate = async (method: string, params: (userId: number, n: number) => Record<string, unknown>, seconds = SECONDS) => {
      let done = 0;
      const end = performance.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async (_, worker) => {
          for (let n = 0; performance.now() < end; n++) {
            const userId = ((worker * 7919 + n) % USERS) + 1;
            await post(method, userId, params(userId, n));
            done++;
          }
        }),
      );
      return done / seconds;
    };
    const imParams = (userId: number, n: number) => ({ user_id: partnerOf(userId), text: `rate ${n}` });
    const chatParams = (userId: number, n: number) => ({ message: `rate ${userId} ${n}` });
    // Both paths warmed first (modules loaded, code compiled), so neither pays for the server's start.
    if (WARMUP > 0)
      for (const [method, params] of [
        ['im.send', imParams],
        ['gchat.send', chatParams],
      ] as const)
        await rate(method, params, WARMUP);
    const imRate = await rate('im.send', imParams);
    const chatRate = await rate('gchat.send', chatParams);

    const delays: number[] = [];
    const pace = 1000 / 200;
    await Promise.all(
      Array.from({ length: MESSAGES }, async (_, i) => {
        await new Promise((resolve) => setTimeout(resolve, i * pace));
        const sender = (i % CONNECTIONS) + 1;
        const receiver = partnerOf(sender);
        if (receiver > CONNECTIONS) return;
        const { msg_id } = await post('im.send', sender, { user_id: receiver, text: `delivery ${i}` });
        const answered = performance.now();
        if (!heard.has(msg_id)) await new Promise<void>((resolve) => waiting.set(msg_id, resolve));
        waiting.delete(msg_id);
        delays.push(Math.max(0, heard.get(msg_id)! - answered));
      }),
    );
    delays.sort((a, b) => a - b);
    console.log(
      `private messages on ${args.db}, ${CONNECTIONS} open connections, ${CONCURRENCY} concurrent senders, ${SECONDS} s each:\n` +
        `  im.send     ${imRate.toFixed(0)} sends/s\n` +
        `  gchat.send  ${chatRate.toFixed(0)} sends/s\n` +
        `  delivery from im.send's answer to the receiver's frame, ${delays.length} messages at 200/s: ` +
        `p50 ${percentile(delays, 50).toFixed(2)} ms, p99 ${percentile(delays, 99).toFixed(2)} ms`,
    );
  } finally {
    for (const socket of sockets) socket.terminate();
    await db.close();
    await server.kill('SIGTERM');
    await location.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
