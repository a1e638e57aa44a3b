/**
 * `npm run bench:game-live`: live games against the real server (a child process from the
 * sources, SQLite by default, PostgreSQL with `--db postgres` and TEST_DATABASE_URL, joined by
 * Redis when TEST_REDIS_URL is set). It measures
 *
 *   - live games over the WebSocket: `--games` games (default 20; `--full` for 500) of four
 *     players each, every player an account connected to /gs/ws that plays a simple legal move
 *     `--think` ms (default 1,000) after its turn comes, until each game has played `--actions`
 *     actions (default 60) or ended. Games start as the lobby starts them (an autostart room of
 *     four). Measured: the delay from a player's action frame to each of the game's four players
 *     receiving its packet (p50, p99; also of the slowest of the four), the server's CPU time per
 *     action (from /proc), and its memory per live game, its four connections included: the rise
 *     of its RSS from the idle server to the peak, divided by the games;
 *   - full computer games a second in one process: a player starts a game against three
 *     computer players (`games.createVsComputer`) and leaves it, so that the computer players play
 *     it to its end in that call; `--computer-games` of them (default 50), `--concurrency` at once
 *     (default 4).
 *
 * The numbers depend on the machine and on what else runs on it: compare runs on one machine.
 */
import { parseArgs } from 'node:util';
import { readFileSync, rmSync } from 'node:fs';
import WebSocket from 'ws';
import { cpuMsOf, percentile, signInUsers, usersWorld } from './live-support.js';
import { postgresLocation, sqliteLocation, startServerProcess } from '../test-crash/server-process.js';
import { moveFor } from '../test/game-socket-support.js';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    games: { type: 'string', default: '20' },
    full: { type: 'boolean', default: false },
    actions: { type: 'string', default: '60' },
    think: { type: 'string', default: '1000' },
    'computer-games': { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '4' },
  },
});
const GAMES = args.full ? 500 : Number(args.games);
const ACTIONS = Number(args.actions);
const THINK_MS = Number(args.think);
const COMPUTER_GAMES = Number(args['computer-games']);
const CONCURRENCY = Number(args.concurrency);
const PLAYERS = 4;
const USERS = GAMES * PLAYERS + CONCURRENCY;

const ms = (n: number) => `${n.toFixed(1)} ms`;

function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : NaN;
}

/** Runs `work` over `items`, `limit` at once. */
async function inParallel<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

interface LiveGame {
  gameId: number;
  /** When the action that produced packet number n was sent (performance.now()), by n. */
  sentAt: Map<number, number>;
  /** How many of the four players received packet n, and the delay of the slowest. */
  received: Map<number, { count: number; slowest: number }>;
  done: boolean;
  finished: () => void;
}

async function main(): Promise<void> {
  const location = args.db === 'postgres' ? postgresLocation(process.env.TEST_DATABASE_URL!, 'bench_game') : sqliteLocation();
  const { dir, worldFile } = usersWorld('game', USERS);
  const redis = args.db === 'postgres' && process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL } : undefined;
  const db = await location.open();
  const server = await startServerProcess({
    databaseUrl: location.url,
    secretKey: location.secretKey,
    args: ['--world', worldFile, '--no-rate-limit', '--max-connections-per-ip', '100000'],
    ...(redis ? { env: redis } : {}),
  });
  const sockets: WebSocket[] = [];
  try {
    const tokens = await signInUsers(db, USERS);
    const post = async (method: string, userId: number, params: Record<string, unknown>): Promise<any> => {
      const response = await fetch(`${server.url}/api/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.get(userId)}` },
        body: JSON.stringify(params),
      });
      const body = (await response.json()) as { code: number; data?: unknown };
      if (body.code !== 0) throw new Error(`${method} answered ${JSON.stringify(body)}`);
      return body.data;
    };

    // Full computer games, one call each once the player leaves; this also warms the server up.
    const computerStarted = performance.now();
    let computerActions = 0;
    const computerPlayers = Array.from({ length: CONCURRENCY }, (_, i) => GAMES * PLAYERS + i + 1);
    let computerLeft = COMPUTER_GAMES;
    await Promise.all(
      computerPlayers.map(async (userId) => {
        while (computerLeft > 0) {
          computerLeft -= 1;
          const created = await post('games.createVsComputer', userId, { computers: 3 });
          const left = await post('game.action', userId, { game_id: created.game_id, action: 'leave' });
          const last = left.packets.at(-1);
          if (!last.events.some((e: { type: string }) => e.type === 'game-over'))
            throw new Error('the computer players did not finish the game');
          computerActions += left.packets.length;
        }
      }),
    );
    const computerSeconds = (performance.now() - computerStarted) / 1000;

    // Live games: an autostart room of four each, every player connected to /gs/ws.
    const idleRss = rssOf(server.pid);
    const games: LiveGame[] = [];
    const allDone: Promise<void>[] = [];
    await inParallel(
      Array.from({ length: GAMES }, (_, g) => g),
      16,
      async (g) => {
        const seats = Array.from({ length: PLAYERS }, (_, i) => g * PLAYERS + i + 1);
        const { room_id } = await post('rooms.create', seats[0]!, { maxplayers: PLAYERS, option_autostart: 1 });
        for (const userId of seats.slice(1)) await post('rooms.join', userId, { room_id });
        const room = (await post('rooms.get', seats[0]!, { room_id })).rooms[0];
        let finished!: () => void;
        allDone[g] = new Promise<void>((resolve) => (finished = resolve));
        games[g] = { gameId: Number(room.gs_game_id), sentAt: new Map(), received: new Map(), done: false, finished };
      },
    );
    const delays: number[] = [];
    const slowest: number[] = [];
    /** Refused actions, by code and description. */
    const refused = new Map<string, number>();
    let connected = 0;
    let go!: () => void;
    const started = new Promise<void>((resolve) => (go = resolve));
    await inParallel(
      games.map((game, g) => ({ game, g })),
      16,
      async ({ game, g }) => {
        for (let i = 0; i < PLAYERS; i++) {
          const userId = g * PLAYERS + i + 1;
          const { gs_token } = await post('games.resolve', userId, { gs_game_id: game.gameId });
          const socket = new WebSocket(`${server.url.replace('http', 'ws')}/gs/ws?gs_token=${encodeURIComponent(gs_token)}`);
          let actedOn = -1;
          let latest = -1;
          let sent = 0;
          socket.on('message', (raw) => {
            const at = performance.now();
            const frame = JSON.parse(raw.toString());
            if (frame.type === 'answer') {
              if (frame.code !== 0) {
                const key = `${frame.code} ${frame.description}`;
                refused.set(key, (refused.get(key) ?? 0) + 1);
              }
              return;
            }
            if (frame.type !== 'packet') return;
            const seq: number = frame.seq;
            latest = seq;
            const sentAt = game.sentAt.get(seq);
            if (sentAt !== undefined) {
              const delay = at - sentAt;
              delays.push(delay);
              const seen = game.received.get(seq) ?? { count: 0, slowest: 0 };
              seen.count += 1;
              seen.slowest = Math.max(seen.slowest, delay);
              game.received.set(seq, seen);
              if (seen.count === PLAYERS) {
                slowest.push(seen.slowest);
                game.received.delete(seq);
                game.sentAt.delete(seq);
              }
            }
            const over = frame.packet.status.turn.action.user_id === null;
            if (!game.done && (over || seq >= ACTIONS)) {
              game.done = true;
              game.finished();
            }
            if (game.done || frame.packet.status.turn.action.user_id !== userId) return;
            const list: string[] = frame.packet.status.turn.action.list;
            void started.then(() =>
              setTimeout(() => {
                if (game.done || latest !== seq || actedOn >= seq) return;
                actedOn = seq;
                game.sentAt.set(seq + 1, performance.now());
                socket.send(JSON.stringify({ type: 'action', id: sent++, action: moveFor(list) }));
              }, THINK_MS),
            );
          });
          await new Promise<void>((resolve, reject) => {
            socket.once('open', () => resolve());
            socket.once('error', reject);
          });
          sockets.push(socket);
          connected += 1;
        }
      },
    );
    const liveStarted = performance.now();
    const startCpuMs = cpuMsOf(server.pid);
    go();
    let peakRss = rssOf(server.pid);
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssOf(server.pid))), 250);
    await Promise.all(allDone);
    clearInterval(sampler);
    const liveCpuMs = cpuMsOf(server.pid) - startCpuMs;
    const liveSeconds = (performance.now() - liveStarted) / 1000;
    delays.sort((a, b) => a - b);
    slowest.sort((a, b) => a - b);
    console.log(
      `game server on ${args.db}${redis ? ' with Redis' : ''}:\n` +
        `  full computer games in one process: ${COMPUTER_GAMES} games of four computer players (one call each), ${CONCURRENCY} at once: ` +
        `${(COMPUTER_GAMES / computerSeconds).toFixed(1)} games/s, ${Math.round(computerActions / computerSeconds)} actions/s\n` +
        `  ${GAMES} live games of four players over /gs/ws (${connected} connections), ${ACTIONS} actions each, ${THINK_MS} ms to think, ${liveSeconds.toFixed(1)} s:\n` +
        `    action to each player's packet: p50 ${ms(percentile(delays, 50))}, p99 ${ms(percentile(delays, 99))} (${delays.length} packets)\n` +
        `    action to the slowest of the four: p50 ${ms(percentile(slowest, 50))}, p99 ${ms(percentile(slowest, 99))}\n` +
        `    server CPU: ${(liveCpuMs / slowest.length).toFixed(2)} ms an action (its transaction and its packet to four players), ` +
        `${((liveCpuMs / (liveSeconds * 1000)) * 100).toFixed(0)}% of a core at ${(slowest.length / liveSeconds).toFixed(0)} actions/s\n` +
        `    memory a live game with its four connections: ${((peakRss - idleRss) / GAMES / 1024).toFixed(0)} KiB of the server's RSS ` +
        `(${(idleRss / 2 ** 20).toFixed(0)} MiB idle, ${(peakRss / 2 ** 20).toFixed(0)} MiB at the peak)` +
        [...refused].map(([why, n]) => `\n    ${n} actions refused: ${why}`).join(''),
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
