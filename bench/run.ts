/**
 * `npm run bench`: generates the benchmark world, starts the server under test (default
 * settings) and the bare Fastify and node:http baselines as separate processes, drives them
 * with autocannon from a third process, and prints (and writes to bench/results/) one table
 * per database.
 *
 *   npm run bench                       full world, SQLite then PostgreSQL (TEST_DATABASE_URL)
 *   npm run bench -- --quick            small world, short measurements (checks the harness)
 *   npm run bench -- --db sqlite        one database only
 *   npm run bench -- --only gchat.get,inventory.craft
 *   npm run bench -- --cpu-prof         write server CPU profiles to bench/.cache/profiles/
 *   npm run bench -- --server tsx       run the server from source (default: build dist/ and run it)
 *   npm run bench -- --no-redis         PostgreSQL without Redis even when TEST_REDIS_URL is set
 *   npx tsx bench/web-client.ts         the web client alone (also part of every run: the web.home row)
 */
import { parseArgs } from 'node:util';
import { fork, spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createServer as createNetServer } from 'node:net';
import { existsSync, mkdirSync, openSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, release, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  BENCH_SECRET_KEY,
  CACHE_DIR,
  checkConservation,
  createSessions,
  dropRunDatabase,
  prepareDatabase,
  seedMarket,
  type ConservationReport,
  type DbKind,
  type PreparedDatabase,
} from './database.js';
import { followUp, mergeResults, type LoadJob, type LoadRequest, type LoadResult } from './load.js';
import {
  FLOOD_ADDRESSES,
  benchAddress,
  buildScenarios,
  floodRequests,
  sessionsToOpen,
  signinRequests,
  knownSigninRequest,
  knownSigninRequests,
  unknownSigninRequests,
  usersGetRequests,
  type Scenario,
  type ScenarioSetup,
  type Session,
} from './scenarios.js';
import { measureWebClient } from './web-client.js';
import { CHROMIUM_PATH } from '../scripts/demo-server.js';
import { FULL_SCALE, QUICK_SCALE, worldRoles } from './world.js';
import { defaultConfig } from '../src/config.js';
import { ANSWER_BYTES_PER_REQUEST } from '../src/api/address-limits.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    seed: { type: 'string', default: 'game-platform-bench-1' },
    db: { type: 'string' },
    only: { type: 'string' },
    duration: { type: 'string' },
    server: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'ws-clients': { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    'no-redis': { type: 'boolean', default: false },
  },
});

const quick = args.quick!;
const scale = quick ? QUICK_SCALE : FULL_SCALE;
const seed = args.seed!;
const measureSeconds = Number(args.duration ?? (quick ? 3 : 8));
const warmupSeconds = quick ? 1 : 2;
/** The measurement alternates between server and baseline this many times, so both see the same machine. */
const rounds = quick ? 2 : 4;
const wsClients = Number(args['ws-clients'] ?? (quick ? 2000 : 10_000));
const only = args.only ? new Set(args.only.split(',')) : undefined;
const selected = (id: string) => !only || only.has(id);
const kinds: DbKind[] = args.db ? (args.db.split(',') as DbKind[]) : process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

const log = (line: string) => console.log(line);

const RATE_LIMIT_DEFAULTS = (() => {
  const { rateLimitPerIp: ip, rateLimitPerToken: token } = defaultConfig();
  return `${ip.max} requests per ${ip.windowSeconds} s per address, answers charged one more per ${ANSWER_BYTES_PER_REQUEST / 1024} kB, ${token.max} per ${token.windowSeconds} s per token`;
})();
const ANONYMOUS_ADDRESSES_NOTE = 'anonymous requests from 1,000 addresses; sign-ins and sign-ups one address each';

/**
 * On PostgreSQL the server runs as it is deployed to scale, with Redis (TEST_REDIS_URL)
 * carrying its bus: that is also what lets it keep profiles and relations in memory.
 */
function redisFor(kind: DbKind): string | undefined {
  return kind === 'postgres' && !args['no-redis'] ? process.env.TEST_REDIS_URL || undefined : undefined;
}

// ---------- child processes ----------

/** A forked TypeScript child that talks over IPC. */
class Child {
  private waiting: ((message: any) => void)[] = [];
  readonly process: ChildProcess;

  constructor(file: string) {
    this.process = fork(join(here, file), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.process.on('message', (message) => this.waiting.shift()?.(message));
  }

  next(): Promise<any> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async request(message: unknown): Promise<any> {
    const answer = this.next();
    this.process.send(message as never);
    return answer;
  }

  stop(): void {
    this.process.kill();
  }
}

class LoadGenerator {
  private readonly child = new Child('load.ts');
  readonly ready = this.child.next();

  async run(job: LoadJob): Promise<LoadResult> {
    const answer = await this.child.request(job);
    if (answer.error) throw new Error(`load generator: ${answer.error}`);
    return answer.result as LoadResult;
  }

  stop(): void {
    this.child.stop();
  }
}

/**
 * The bare Fastify route (`url`), the bare node:http server (`nodeUrl`) and the bare Fastify
 * route that first computes for a set time (`workedUrl`), in one process.
 */
class Baseline {
  private readonly child = new Child('baseline.ts');
  private port = 0;
  private workedPort = 0;
  private nodePort = 0;

  async start(): Promise<void> {
    const { port, workedPort, nodePort } = await this.child.next();
    this.port = port;
    this.workedPort = workedPort;
    this.nodePort = nodePort;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get workedUrl(): string {
    return `http://127.0.0.1:${this.workedPort}`;
  }

  get nodeUrl(): string {
    return `http://127.0.0.1:${this.nodePort}`;
  }

  get pid(): number {
    return this.child.process.pid!;
  }

  async setBody(body: string): Promise<void> {
    await this.child.request({ body });
  }

  /** Microseconds the route at `workedUrl` computes before each answer. */
  async setWork(work: number): Promise<void> {
    await this.child.request({ work });
  }

  stop(): void {
    this.child.stop();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** Resident memory of a process, in MB: current and peak (VmHWM). */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) / 1024;
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

/** CPU time a process has used so far (user + system), in µs; /proc counts in ticks of 10 ms. */
function cpuTimeOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): state is the 3rd field, utime the 14th, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

interface ServerUnderTest {
  url: string;
  pid: number;
  command: string;
  /** Highest VmRSS seen by polling, MB: since the start, and since the last markRss(). */
  peakRss(): number;
  markRss(): void;
  peakSinceMark(): number;
  stop(): Promise<void>;
}

/**
 * Builds dist/ (`npm run build`) so the server runs as in production, without the
 * TypeScript loader (whose worker thread would count in the server's memory).
 */
function buildServer(): boolean {
  if (args['no-build']) return existsSync(join(root, 'dist/cli/main.js'));
  log('building dist/ (tsc -p tsconfig.build.json)');
  try {
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
      cwd: root,
      stdio: 'pipe',
    });
  } catch (error) {
    // Type errors still emit JavaScript; only a missing entry point is fatal.
    log(`  tsc reported errors; running what it emitted (${String((error as { stdout?: Buffer }).stdout ?? '').split('\n')[0]})`);
  }
  return existsSync(join(root, 'dist/cli/main.js'));
}

let serverEntry: { args: string[]; command: string } | undefined;

function chooseServerEntry(): { args: string[]; command: string } {
  if (serverEntry) return serverEntry;
  const choice = args.server ?? 'dist';
  if (choice === 'dist' && buildServer())
    serverEntry = { args: [join(root, 'dist/cli/main.js'), 'serve'], command: 'node dist/cli/main.js serve' };
  else if (choice !== 'bench' && existsSync(join(root, 'src/cli/serve.ts')))
    serverEntry = { args: ['--import', 'tsx', join(root, 'src/cli/main.ts'), 'serve'], command: 'tsx src/cli/main.ts serve' };
  else serverEntry = { args: ['--import', 'tsx', join(here, 'server.ts')], command: 'bench/server.ts (createServer)' };
  return serverEntry;
}

/**
 * The settings of the server under test beyond its database and address. `default`: nothing
 * else, as `game-platform serve` starts (log level info, no access log, the request limits on
 * at their defaults), behind one proxy (`--trust-proxy`), so that the load comes from many
 * client addresses. `quiet`: the same with the log at warn and the request limits off.
 */
type ServerSettings = 'default' | 'quiet';
const QUIET_FLAGS = ['--log-level', 'warn', '--no-rate-limit'];

/** Starts `game-platform serve` (or bench/server.ts where the command does not exist yet). */
async function startServer(database: PreparedDatabase, label: string, mode: ServerSettings = 'default'): Promise<ServerUnderTest> {
  const port = await freePort();
  const entry = chooseServerEntry();
  const settings = ['--database', database.url, '--port', String(port), '--host', '127.0.0.1', '--trust-proxy'];
  const redis = redisFor(database.kind);
  if (redis && entry.command.includes('serve')) settings.push('--redis', redis, '--redis-prefix', 'gpbench:');
  if (mode === 'quiet' && entry.command.includes('serve')) settings.push(...QUIET_FLAGS);
  const profile = args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', join(CACHE_DIR, 'profiles', label)] : [];
  const logPath = join(CACHE_DIR, `server-${label}.log`);
  const out = openSync(logPath, 'w');
  const child = spawn(process.execPath, [...profile, ...entry.args, ...settings], {
    cwd: root,
    stdio: ['ignore', out, out],
    env: { ...process.env, NODE_ENV: 'production', SECRET_KEY: BENCH_SECRET_KEY },
  });
  const url = `http://127.0.0.1:${port}`;
  let exited = false;
  child.on('exit', () => (exited = true));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (exited) throw new Error(`the server exited while starting; see ${logPath}`);
    if (Date.now() > deadline) throw new Error(`the server did not become ready; see ${logPath}`);
    try {
      const response = await fetch(`${url}/readyz`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  let peak = 0;
  let peakSinceMark = 0;
  const poll = setInterval(() => {
    try {
      const { rss } = memoryOf(child.pid!);
      peak = Math.max(peak, rss);
      peakSinceMark = Math.max(peakSinceMark, rss);
    } catch {
      // exited
    }
  }, 100);
  return {
    url,
    pid: child.pid!,
    command: `${entry.command}${redis && entry.command.includes('serve') ? ' --redis' : ''}${mode === 'quiet' ? ` ${QUIET_FLAGS.join(' ')}` : ''}`,
    peakRss: () => peak,
    markRss: () => (peakSinceMark = 0),
    peakSinceMark: () => peakSinceMark,
    async stop() {
      clearInterval(poll);
      if (exited) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await gone;
      clearTimeout(timer);
    },
  };
}

// ---------- measurements ----------

interface Measured {
  scenario: Scenario | { id: string; title: string; target?: Scenario['target'] };
  result?: LoadResult;
  /** The bare Fastify route. */
  baseline?: LoadResult;
  /** The bare node:http server. */
  nodeBaseline?: LoadResult;
  /** The same requests to a server with quiet settings (the default-versus-quiet row). */
  quiet?: LoadResult;
  bytes?: number;
  skipped?: string;
  note?: string;
  /** Server's highest RSS while this scenario ran, MB. */
  rss?: number;
  /** The server process's CPU time per answered request while measured, µs. */
  cpuPerRequest?: number;
  /** The same for the baseline process (its Fastify route). */
  baselineCpuPerRequest?: number;
  /** The same for the quiet server. */
  quietCpuPerRequest?: number;
}

async function send(base: string, request: LoadRequest): Promise<{ status: number; text: string }> {
  const response = await fetch(base + request.path, {
    method: request.method,
    body: request.body,
    headers: { ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}), ...request.headers },
  });
  return { status: response.status, text: await response.text() };
}

/** Sends a request and its follow-up, if any: the first answer that is not code 0, else the first answer. */
async function probe(base: string, request: LoadRequest): Promise<{ status: number; text: string }> {
  const first = await send(base, request);
  const follow = first.text.startsWith('{"code":0') ? followUp(request, first.text) : undefined;
  if (!follow) return first;
  const second = await send(base, follow);
  return second.text.startsWith('{"code":0') ? first : second;
}

function describeAnswer(text: string): string {
  try {
    const body = JSON.parse(text) as { code?: number; description?: string };
    return `code ${body.code}${body.description ? `: ${body.description}` : ''}`;
  } catch {
    return text.slice(0, 120);
  }
}

/**
 * One scenario: warm-up, then `rounds` slices each of the server, the bare Fastify route
 * and the bare node:http server (and, with `quiet`, a server with quiet settings) in turn,
 * so all of them see the same machine.
 */
async function measureScenario(
  scenario: Scenario,
  server: ServerUnderTest,
  baseline: Baseline,
  load: LoadGenerator,
  quiet?: ServerUnderTest,
): Promise<Measured> {
  const pool = [...scenario.requests];
  const probeRequest = scenario.consumable ? pool.shift()! : pool[0];
  const probed = await probe(server.url, probeRequest);
  if (!probed.text.startsWith('{"code":0'))
    return { scenario, skipped: `probe answered HTTP ${probed.status}, ${describeAnswer(probed.text)}` };
  if (quiet) {
    const quietProbe = await probe(quiet.url, probeRequest);
    if (!quietProbe.text.startsWith('{"code":0')) return { scenario, skipped: `quiet server answered ${describeAnswer(quietProbe.text)}` };
  }
  const bytes = Buffer.byteLength(probed.text);
  await baseline.setBody(probed.text);
  const checkCodes = bytes < 64 * 1024;
  const job = (url: string, requests: LoadRequest[], seconds: number, once = false): LoadJob => ({
    url,
    requests,
    once,
    connections: scenario.connections,
    durationSeconds: seconds,
    checkCodes,
    keepLatencies: true,
  });
  let warmupPool = pool;
  let measurePool = pool;
  if (scenario.consumable) {
    // Warm-up and measurement never send the same request (each craft set is used once).
    const warmupShare = Math.floor(pool.length * (warmupSeconds / (warmupSeconds + measureSeconds)) * 0.8);
    warmupPool = pool.slice(0, warmupShare);
    measurePool = pool.slice(warmupShare);
  }
  server.markRss();
  await load.run(job(server.url, warmupPool, warmupSeconds, scenario.consumable));
  if (quiet) await load.run(job(quiet.url, warmupPool, warmupSeconds));
  await load.run(job(baseline.url, pool, warmupSeconds));
  await load.run(job(baseline.nodeUrl, pool, warmupSeconds));
  const parts: LoadResult[] = [];
  const quietParts: LoadResult[] = [];
  const baseParts: LoadResult[] = [];
  const nodeParts: LoadResult[] = [];
  const slice = Math.ceil(measurePool.length / rounds);
  let serverCpu = 0;
  let baselineCpu = 0;
  let quietCpu = 0;
  const slot = measureSeconds / rounds;
  for (let round = 0; round < rounds; round++) {
    const requests = scenario.consumable ? measurePool.slice(round * slice, (round + 1) * slice) : measurePool;
    const cpuBefore = cpuTimeOf(server.pid);
    parts.push(await load.run(job(server.url, requests, slot, scenario.consumable)));
    serverCpu += cpuTimeOf(server.pid) - cpuBefore;
    if (quiet) {
      const quietCpuBefore = cpuTimeOf(quiet.pid);
      quietParts.push(await load.run(job(quiet.url, requests, slot)));
      quietCpu += cpuTimeOf(quiet.pid) - quietCpuBefore;
    }
    const baselineCpuBefore = cpuTimeOf(baseline.pid);
    baseParts.push(await load.run(job(baseline.url, pool, slot)));
    baselineCpu += cpuTimeOf(baseline.pid) - baselineCpuBefore;
    nodeParts.push(await load.run(job(baseline.nodeUrl, pool, slot)));
  }
  const result = mergeResults(parts);
  const base = mergeResults(baseParts);
  const quietResult = quiet ? mergeResults(quietParts) : undefined;
  const rss = server.peakSinceMark();
  const note = result.exhausted ? 'ran out of prepared requests before the end' : undefined;
  return {
    scenario,
    result,
    baseline: base,
    nodeBaseline: mergeResults(nodeParts),
    quiet: quietResult,
    quietCpuPerRequest: quietResult ? quietCpu / Math.max(1, quietResult.requests) : undefined,
    bytes,
    note,
    rss,
    cpuPerRequest: serverCpu / Math.max(1, result.requests),
    baselineCpuPerRequest: baselineCpu / Math.max(1, base.requests),
  };
}

/** Extra work a request of the floor's rows, µs. */
const FLOOR_WORK = [2, 5, 10, 20, 40];

interface FloorRow {
  work: number;
  bare: LoadResult;
  worked: LoadResult;
  bareCpuPerRequest: number;
  workedCpuPerRequest: number;
}

/**
 * The floor of the ratios on this machine: the bare Fastify route against itself computing
 * `FLOOR_WORK` µs more a request, same requests and connections as users.get of one id, its
 * answer as the body, measured in turn. A server that does that much more work per answer
 * than bare Fastify cannot read a higher ratio than its row, whatever its code.
 */
async function measureFloor(
  requests: LoadRequest[],
  connections: number,
  server: ServerUnderTest,
  baseline: Baseline,
  load: LoadGenerator,
): Promise<FloorRow[]> {
  const probed = await probe(server.url, requests[0]!);
  await baseline.setBody(probed.text);
  const slot = measureSeconds / rounds / 2;
  const job = (url: string, seconds: number): LoadJob => ({ url, requests, connections, durationSeconds: seconds, checkCodes: true });
  const measured = async (url: string, pid: number) => {
    const before = cpuTimeOf(pid);
    const result = await load.run(job(url, slot));
    return { result, cpu: cpuTimeOf(pid) - before };
  };
  const rows: FloorRow[] = [];
  for (const work of FLOOR_WORK) {
    await baseline.setWork(work);
    await load.run(job(baseline.workedUrl, warmupSeconds / 2));
    const bareParts: LoadResult[] = [];
    const workedParts: LoadResult[] = [];
    let bareCpu = 0;
    let workedCpu = 0;
    for (let round = 0; round < rounds; round++) {
      const bare = await measured(baseline.url, baseline.pid);
      bareParts.push(bare.result);
      bareCpu += bare.cpu;
      const worked = await measured(baseline.workedUrl, baseline.pid);
      workedParts.push(worked.result);
      workedCpu += worked.cpu;
    }
    const bare = mergeResults(bareParts);
    const worked = mergeResults(workedParts);
    rows.push({
      work,
      bare,
      worked,
      bareCpuPerRequest: bareCpu / Math.max(1, bare.requests),
      workedCpuPerRequest: workedCpu / Math.max(1, worked.requests),
    });
  }
  return rows;
}

/** The extra work per request at which the floor's ratio falls to `ratio`, interpolated between its rows (none: beyond them). */
function workAllowedFor(rows: FloorRow[], ratio: number): number | undefined {
  let previous = { work: 0, ratio: 1 };
  for (const row of rows) {
    const current = { work: row.work, ratio: row.worked.rps / row.bare.rps };
    if (current.ratio <= ratio) {
      if (previous.ratio <= current.ratio) return current.work;
      return previous.work + ((previous.ratio - ratio) / (previous.ratio - current.ratio)) * (current.work - previous.work);
    }
    previous = current;
  }
  return undefined;
}

function floorReport(rows: FloorRow[]): string[] {
  const allowed = [0.85, 0.8, 0.6].map((ratio) => {
    const work = workAllowedFor(rows, ratio);
    return `${percent(ratio)}: ${work === undefined ? `more than ${FLOOR_WORK.at(-1)} µs` : `${work.toFixed(1)} µs`}`;
  });
  return [
    '### The floor on this machine',
    '',
    `The bare Fastify route of users.get of one id against the same route computing a set time more before each answer, measured in turn (${rounds} slices each). No server doing that much more work for an answer than bare Fastify reads a higher ratio here: compare the extra CPU a request of each row above (its server's CPU a request less its Fastify's) with the extra work of these rows.`,
    '',
    '| Extra work a request | Bare Fastify req/s | With the work req/s | Ratio | Bare CPU/req | With the work CPU/req |',
    '|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (row) =>
        `| ${row.work} µs | ${fmt(row.bare.rps)} | ${fmt(row.worked.rps)} | ${percent(row.worked.rps / row.bare.rps)} | ${cpu(row.bareCpuPerRequest)} | ${cpu(row.workedCpuPerRequest)} |`,
    ),
    '',
    `- Extra work a request at which the ratio falls to ${allowed.join(', ')}`,
    '',
  ];
}

/** users.get while other clients load the server (sign-ins, a flood): its p99 is what counts. */
async function measureBeside(
  scenario: Measured['scenario'],
  setup: ScenarioSetup,
  server: ServerUnderTest,
  baseline: Baseline,
  load: LoadGenerator,
  other: { load: LoadGenerator; job: LoadJob; describe: (result: LoadResult) => string },
): Promise<Measured> {
  const requests = usersGetRequests(setup, scenario.id);
  const probed = await send(server.url, requests[0]);
  if (!probed.text.startsWith('{"code":0')) return { scenario, skipped: `users.get answered ${describeAnswer(probed.text)}` };
  const otherProbe = await send(server.url, other.job.requests[0]);
  if (!otherProbe.text.startsWith('{"code":0')) return { scenario, skipped: `the other load answered ${describeAnswer(otherProbe.text)}` };
  await baseline.setBody(probed.text);
  const job = (url: string, seconds: number): LoadJob => ({ url, requests, connections: 10, durationSeconds: seconds, checkCodes: true });
  const running = other.load.run({ ...other.job, requests: other.job.requests.slice(1), durationSeconds: measureSeconds + 1 });
  server.markRss();
  await new Promise((r) => setTimeout(r, 500));
  const result = await load.run(job(server.url, measureSeconds));
  const otherResult = await running;
  const rss = server.peakSinceMark();
  const base = await load.run(job(baseline.url, measureSeconds));
  const nodeBase = await load.run(job(baseline.nodeUrl, measureSeconds));
  return {
    scenario,
    result,
    baseline: base,
    nodeBaseline: nodeBase,
    bytes: Buffer.byteLength(probed.text),
    rss,
    note: other.describe(otherResult),
  };
}

/** users.get while 50 clients sign in at once: the sign-ins must not stall the event loop. */
function measureUnderSignin(
  setup: ScenarioSetup,
  server: ServerUnderTest,
  baseline: Baseline,
  load: LoadGenerator,
  signinLoad: LoadGenerator,
) {
  const signins = signinRequests(setup.roles, 5000).map((r, i) => ({
    ...r,
    headers: { ...r.headers, 'x-forwarded-for': benchAddress(201, i + 1) },
  }));
  return measureBeside(
    { id: 'users.get-during-signin', title: 'users.get, 1 id, while 50 clients sign in', target: { kind: 'p99', maxMs: 50 } },
    setup,
    server,
    baseline,
    load,
    {
      load: signinLoad,
      job: { url: server.url, requests: signins, once: true, connections: 50, durationSeconds: 0, checkCodes: true },
      describe: (r) =>
        `${r.rps.toFixed(0)} sign-ins/s alongside (p99 ${r.p99.toFixed(0)} ms${r.failed ? `, ${r.failed} refused: ${describeAnswer(r.failedSample ?? '')}` : ''})`,
    },
  );
}

/**
 * Sign-ins of known users (an address and a device token they signed in with before) while 50
 * clients sign in with unknown e-mails from distinct addresses: the password checks anyone can
 * ask for must neither slow them much nor crowd them out (they wait in a queue of their own).
 */
async function measureKnownSigninBesideAnonymous(
  setup: ScenarioSetup,
  server: ServerUnderTest,
  baseline: Baseline,
  load: LoadGenerator,
  anonymousLoad: LoadGenerator,
): Promise<Measured> {
  const scenario = {
    id: 'auth.signin-known-during-anonymous',
    title: 'auth.signin of known users, one at a time, while 50 clients sign in with unknown e-mails',
  };
  const knownUsers = 10;
  const requests: LoadRequest[] = [];
  let answer = '';
  for (let n = 0; n < knownUsers; n++) {
    const first = await send(server.url, knownSigninRequest(setup.roles, n));
    const deviceToken = /"device_token":"([^"]+)"/.exec(first.text)?.[1];
    if (!deviceToken) return { scenario, skipped: `the first sign-in answered ${describeAnswer(first.text)}` };
    requests.push(...knownSigninRequests(setup.roles, n, deviceToken, 40));
    answer = first.text;
  }
  await baseline.setBody(answer);
  const anonymous = unknownSigninRequests(20_000);
  const running = anonymousLoad.run({
    url: server.url,
    requests: anonymous,
    once: true,
    connections: 50,
    durationSeconds: measureSeconds + 1,
    checkCodes: true,
  });
  server.markRss();
  await new Promise((r) => setTimeout(r, 500));
  const result = await load.run({ url: server.url, requests, connections: 1, durationSeconds: measureSeconds, checkCodes: true });
  const anonymousResult = await running;
  const rss = server.peakSinceMark();
  const job = (url: string): LoadJob => ({ url, requests, connections: 1, durationSeconds: measureSeconds, checkCodes: true });
  return {
    scenario,
    result,
    baseline: await load.run(job(baseline.url)),
    nodeBaseline: await load.run(job(baseline.nodeUrl)),
    bytes: Buffer.byteLength(answer),
    rss,
    note:
      `known: p50 ${result.p50.toFixed(0)} ms, p99 ${result.p99.toFixed(0)} ms${result.failed ? `, ${result.failed} refused: ${describeAnswer(result.failedSample ?? '')}` : ''}; ` +
      `${anonymousResult.rps.toFixed(0)} anonymous sign-ins/s alongside (p99 ${anonymousResult.p99.toFixed(0)} ms), ` +
      `${anonymousResult.failed} of them answered other than 0, as unknown e-mails do (1, or 7 past the queue)`,
  };
}

/**
 * users.get while 16 anonymous connections from a few addresses ask for 10,000-item
 * inventories in full: answers are charged by their size, so the flood soon meets its
 * addresses' limits and the other users keep their speed.
 */
function measureBesideFlood(
  setup: ScenarioSetup,
  server: ServerUnderTest,
  baseline: Baseline,
  load: LoadGenerator,
  floodLoad: LoadGenerator,
) {
  return measureBeside(
    {
      id: 'users.get-beside-flood',
      title: `users.get, 1 id, beside a flood of 10,000-item inventories in full (16 connections from ${FLOOD_ADDRESSES === 1 ? 'one address' : `${FLOOD_ADDRESSES} addresses`})`,
      target: { kind: 'p99', maxMs: 50 },
    },
    setup,
    server,
    baseline,
    load,
    {
      load: floodLoad,
      job: { url: server.url, requests: floodRequests(setup.roles), connections: 16, durationSeconds: 0, checkCodes: false },
      describe: (r) =>
        `the flood alongside: ${(r.requests - r.non2xx).toFixed(0)} full inventories answered (${((r.requests - r.non2xx) / r.seconds).toFixed(1)}/s), ${r.non2xx} refused by the limits (code 7) in ${r.seconds.toFixed(0)} s`,
    },
  );
}

interface WsMeasurement {
  clients: number;
  opened: number;
  before: number;
  after: number;
  error?: string;
}

/** Idle subscribers on a freshly started server, so memory freed by earlier scenarios cannot hide their cost. */
async function measureWebSockets(database: PreparedDatabase, label: string): Promise<WsMeasurement> {
  const server = await startServer(database, `${label}-ws`);
  const child = new Child('ws-clients.ts');
  await child.next();
  try {
    // Warm the server up a little (code paths loaded, pools opened) before the reference reading.
    for (let i = 0; i < 20; i++) await fetch(`${server.url}/api/gchat.get`).then((r) => r.arrayBuffer());
    await new Promise((r) => setTimeout(r, 1000));
    const before = memoryOf(server.pid).rss;
    const url = `${server.url.replace('http', 'ws')}/ws?subs=gchat`;
    const { result } = await child.request({ open: { url, count: wsClients, parallel: 100 } });
    await new Promise((r) => setTimeout(r, 3000));
    const after = memoryOf(server.pid).rss;
    const { status } = await child.request({ status: true });
    await child.request({ close: true });
    return {
      clients: wsClients,
      opened: status.open,
      before,
      after,
      error: result.failed ? `${result.failed} failed: ${result.error}` : undefined,
    };
  } finally {
    child.stop();
    await server.stop();
  }
}

// ---------- report ----------

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));
const cpu = (us: number | undefined) => (us === undefined ? '' : us >= 10_000 ? `${(us / 1000).toFixed(0)} ms` : `${us.toFixed(0)} µs`);

const percent = (n: number) => `${(n * 100).toFixed(0)}%`;

function verdict(m: Measured, all: Measured[], kind: DbKind): string {
  const target = m.scenario.target;
  if (!target || !m.result || !m.baseline) return '';
  const judged = (ok: boolean) => (ok ? 'ok' : '**missed**');
  switch (target.kind) {
    case 'ratio': {
      const ratio = m.result.rps / m.baseline.rps;
      return `≥ ${percent(target.min)} ${judged(ratio >= target.min)}`;
    }
    case 'latencyOf': {
      const other = all.find((x) => x.scenario.id === target.scenario)?.result;
      if (!other) return '';
      const factor = m.result.p50 / other.p50;
      return `p50 ≤ ${target.max}× ${target.scenario.replace('inventory.get-', '')} (${factor.toFixed(2)}×) ${judged(factor <= target.max)}`;
    }
    case 'rps': {
      const min = target.min[kind];
      return `≥ ${min}/s ${judged(m.result.rps >= min)}`;
    }
    case 'rpsOf': {
      const other = all.find((x) => x.scenario.id === target.scenario)?.result;
      if (!other) return '';
      const share = target.share ?? 1;
      const label = share === 1 ? target.scenario : `${percent(share)} of ${target.scenario}`;
      return `≥ ${label} (${fmt(other.rps)}/s, ${percent(m.result.rps / other.rps)}) ${judged(m.result.rps >= other.rps * share)}`;
    }
    case 'ofQuiet': {
      if (!m.quiet) return '';
      const ratio = m.result.rps / m.quiet.rps;
      return `≥ ${percent(target.min)} of quiet (quiet: ${fmt(m.quiet.rps)}/s, ${cpu(m.quietCpuPerRequest)}/req; default ${percent(ratio)}) ${judged(ratio >= target.min)}`;
    }
    case 'p99':
      return `p99 < ${target.maxMs} ms ${judged(m.result.p99 < target.maxMs)}`;
  }
}

function table(rows: Measured[], kind: DbKind): string {
  const lines = [
    '| Scenario | Answer | req/s | p50 ms | p99 ms | Fastify req/s | Fastify p99 | node:http req/s | Ratio to Fastify | Ratio to node:http | Target | Server CPU/req | Fastify CPU/req | Server RSS |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|',
  ];
  for (const m of rows) {
    if (m.skipped) {
      lines.push(`| ${m.scenario.title} | | | | | | | | | | not measured: ${m.skipped.replace(/\|/g, '/')} | | | |`);
      continue;
    }
    const r = m.result!;
    const b = m.baseline!;
    const n = m.nodeBaseline;
    const size =
      m.bytes! >= 1024 * 1024
        ? `${(m.bytes! / 1024 / 1024).toFixed(1)} MB`
        : m.bytes! >= 1024
          ? `${(m.bytes! / 1024).toFixed(1)} kB`
          : `${m.bytes} B`;
    const failures = r.failed || r.non2xx || r.errors ? ` (${r.failed + r.non2xx} failed, ${r.errors} errors)` : '';
    lines.push(
      `| ${m.scenario.title} | ${size} | ${fmt(r.rps)}${failures} | ${ms(r.p50)} | ${ms(r.p99)} | ${fmt(b.rps)} | ${ms(b.p99)} | ${n ? fmt(n.rps) : ''} | ${percent(r.rps / b.rps)} | ${n ? percent(r.rps / n.rps) : ''} | ${verdict(m, rows, kind)} | ${cpu(m.cpuPerRequest)} | ${cpu(m.baselineCpuPerRequest)} | ${fmt(m.rss ?? 0)} MB |`,
    );
  }
  return lines.join('\n');
}

async function databaseVersion(database: PreparedDatabase): Promise<string> {
  if (database.kind === 'sqlite') {
    const { default: SQLite } = await import('better-sqlite3');
    const db = new SQLite(':memory:');
    const version = (db.prepare('select sqlite_version() as v').get() as { v: string }).v;
    db.close();
    return `SQLite ${version} (better-sqlite3, WAL)`;
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const { rows } = await client.query('show server_version');
  await client.end();
  return `PostgreSQL ${rows[0].server_version}`;
}

function machine(startLoad: number): string {
  const cpu = cpus();
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    // not a checkout
  }
  return [
    `- Date: ${new Date().toISOString()}`,
    `- Machine: ${cpu.length} cores (${cpu[0]?.model.trim() ?? 'unknown'}), ${(totalmem() / 1024 ** 3).toFixed(1)} GB memory, ${platform()} ${release()}`,
    `- Node ${process.version}; commit ${commit}`,
    `- The load generator (autocannon, its own process) runs on the same machine as the server and the baseline.`,
    `- Load average (1 min) when the measurements started: ${startLoad.toFixed(1)}; when they ended: ${loadavg()[0].toFixed(1)} (other work on the machine skews every number; compare ratios, and rerun on a quiet machine)`,
  ].join('\n');
}

// ---------- main ----------

async function runOn(kind: DbKind): Promise<string> {
  log(`\n=== ${kind}: ${scale.name} world (${scale.users} users, ${scale.items} items), seed "${seed}" ===`);
  const roles = worldRoles(seed, scale);
  const started = performance.now();
  const database = await prepareDatabase(kind, seed, scale, log);
  log(database.fromCache ? '  using the cached world' : `  world built in ${database.importSeconds.toFixed(1)} s`);
  const toOpen = sessionsToOpen(roles);
  const sessions = new Map<number, Session[]>();
  for (const { userId, token, ip } of await createSessions(database.url, toOpen.wanted))
    sessions.set(userId, [...(sessions.get(userId) ?? []), { token, ip }]);
  const market = await seedMarket(database.url, roles, toOpen.viewers);
  const setup: ScenarioSetup = { roles, sessions, viewers: toOpen.viewers, market };
  const scenarios = buildScenarios(setup).filter((s) => selected(s.id));
  log(`  ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const server = await startServer(database, `${kind}${quick ? '-quick' : ''}`);
  const startLoad = loadavg()[0];
  log(`  server: ${server.command}, pid ${server.pid}`);
  const baseline = new Baseline();
  await baseline.start();
  let quietServer: ServerUnderTest | undefined;
  let freshServer: ServerUnderTest | undefined;
  const load = new LoadGenerator();
  const signinLoad = new LoadGenerator();
  await Promise.all([load.ready, signinLoad.ready]);

  const rows: Measured[] = [];
  let conservation: ConservationReport | undefined;
  let ws: WsMeasurement | undefined;
  let floor: FloorRow[] | undefined;
  let peakRss: number;
  let peakHwm: number;
  try {
    for (const scenario of scenarios) {
      const m = await measureScenario(scenario, server, baseline, load);
      rows.push(m);
      log(
        m.skipped
          ? `  ${scenario.id}: not measured (${m.skipped})`
          : `  ${scenario.id}: ${fmt(m.result!.rps)} req/s, p99 ${ms(m.result!.p99)} ms; baseline ${fmt(m.baseline!.rps)} req/s; server CPU ${cpu(m.cpuPerRequest)}/req, baseline ${cpu(m.baselineCpuPerRequest)}/req${m.result!.failed ? `; ${m.result!.failed} failed: ${m.result!.failedSample}` : ''}${m.note ? ` (${m.note})` : ''}`,
      );
    }
    for (const [id, measure] of [
      ['users.get-during-signin', measureUnderSignin],
      ['users.get-beside-flood', measureBesideFlood],
      ['auth.signin-known-during-anonymous', measureKnownSigninBesideAnonymous],
    ] as const) {
      if (!selected(id)) continue;
      const m = await measure(setup, server, baseline, load, signinLoad);
      rows.push(m);
      log(m.skipped ? `  ${id}: not measured (${m.skipped})` : `  ${id}: p99 ${ms(m.result!.p99)} ms (${m.note})`);
    }
    if (selected('floor')) {
      const usersGet = buildScenarios(setup).find((x) => x.id === 'users.get-1')!;
      floor = await measureFloor(usersGet.requests, usersGet.connections, server, baseline, load);
      const at = (ratio: number) => workAllowedFor(floor!, ratio);
      log(
        `  floor: ${floor.map((row) => `+${row.work} µs ${percent(row.worked.rps / row.bare.rps)}`).join(', ')} (85% at ${fmt(at(0.85) ?? NaN, 1)} µs, 60% at ${fmt(at(0.6) ?? NaN, 1)} µs)`,
      );
    }
    if (selected('users.get-1-quiet')) {
      const usersGet = buildScenarios(setup).find((x) => x.id === 'users.get-1')!;
      // What the scenarios before left behind (caches, heap, counters) shows in the same requests to the server that ran them.
      const cpuBefore = cpuTimeOf(server.pid);
      const afterAll = await load.run({
        url: server.url,
        requests: usersGet.requests,
        connections: usersGet.connections,
        durationSeconds: measureSeconds / 2,
        checkCodes: true,
      });
      const afterAllCpu = (cpuTimeOf(server.pid) - cpuBefore) / Math.max(1, afterAll.requests);
      // The default settings against quiet ones (log at warn, no request limits): two servers started for this row on the same
      // database, measured in turn, so that only their settings differ.
      freshServer = await startServer(database, `${kind}${quick ? '-quick' : ''}-default`);
      quietServer = await startServer(database, `${kind}${quick ? '-quick' : ''}-quiet`, 'quiet');
      const scenario: Scenario = {
        ...usersGet,
        id: 'users.get-1-quiet',
        title: `users.get, 1 id: default settings against quiet ones (${QUIET_FLAGS.join(' ')}), each freshly started`,
        target: { kind: 'ofQuiet', min: 0.95 },
      };
      const m = await measureScenario(scenario, freshServer, baseline, load, quietServer);
      m.note = `the server that had run every scenario above answered the same requests at ${fmt(afterAll.rps)}/s, ${cpu(afterAllCpu)} of CPU a request${afterAll.failed ? ` (${afterAll.failed} not code 0: ${afterAll.failedSample})` : ''}`;
      rows.push(m);
      log(
        m.skipped
          ? `  default vs quiet: not measured (${m.skipped})`
          : `  default vs quiet: ${fmt(m.result!.rps)} vs ${fmt(m.quiet!.rps)} req/s (${m.note})`,
      );
    }
    peakRss = server.peakRss();
    peakHwm = memoryOf(server.pid).hwm;
  } finally {
    load.stop();
    signinLoad.stop();
    baseline.stop();
    await quietServer?.stop();
    await freshServer?.stop();
    await server.stop();
  }
  if (selected('ws')) {
    ws = await measureWebSockets(database, `${kind}${quick ? '-quick' : ''}`);
    log(`  ${ws.opened} idle subscribers: RSS ${fmt(ws.before)} -> ${fmt(ws.after)} MB${ws.error ? ` (${ws.error})` : ''}`);
  }
  const crafted = rows.find((r) => ['inventory.craft', 'inventory.open', 'trades'].includes(r.scenario.id) && r.result);
  if (crafted) {
    conservation = await checkConservation(database.url, roles, market);
    log(
      `  conservation: ${conservation.ok ? 'holds' : 'BROKEN'} (${conservation.crafts} crafts, ${conservation.openings} openings, ${conservation.trades} trades; ${conservation.owned} owned, ${conservation.consumed} consumed, ${conservation.revoked} revoked)`,
    );
    for (const problem of conservation.problems) log(`    ${problem}`);
  }
  const version = await databaseVersion(database);
  await dropRunDatabase(kind, database.url);

  const memoryLines = [
    `- Server peak RSS during the scenarios: ${fmt(peakRss)} MB (VmHWM ${fmt(peakHwm)} MB); target < 300 MB: ${peakHwm < 300 ? 'ok' : '**missed**'}`,
    ws
      ? ws.opened > 0
        ? `- ${ws.opened} idle WebSocket subscribers (/ws?subs=gchat, on a freshly started server): RSS ${fmt(ws.before)} → ${fmt(ws.after)} MB, +${fmt(ws.after - ws.before)} MB; target < 100 MB: ${ws.after - ws.before < 100 && ws.opened === ws.clients ? 'ok' : '**missed**'}${ws.error ? ` (${ws.error})` : ''}`
        : `- WebSocket subscribers: not measured (${ws.error ?? 'none opened'})`
      : '',
    conservation
      ? `- Conservation after the run: ${conservation.ok ? 'holds' : '**BROKEN**'}: ${conservation.crafts} crafts, ${conservation.openings} openings, ${conservation.trades} trades accepted; ${conservation.itemsTotal} items = ${conservation.owned} owned + ${conservation.consumed} consumed + ${conservation.revoked} revoked${conservation.problems.length ? `; ${conservation.problems.join('; ')}` : ''}`
      : '',
  ].filter(Boolean);

  const report = [
    `## ${kind === 'sqlite' ? 'SQLite' : redisFor(kind) ? 'PostgreSQL, with Redis' : 'PostgreSQL'}`,
    '',
    machine(startLoad),
    `- Database: ${version}; server: ${server.command} with its default settings (log level info, no access log, request limits on at ${RATE_LIMIT_DEFAULTS}) behind one proxy (\`--trust-proxy\`): every request carries X-Forwarded-For, and the load comes from ${toOpen.wanted.length} sessions (1 to 50 per user), each used from an address of its own, and ${ANONYMOUS_ADDRESSES_NOTE}`,
    `- World: ${scale.name} (${scale.users} users, ${scale.protos} prototypes, ${scale.items} items; ${roles.bigUsers.length} inventories of ${scale.bigInventory}, ${scale.friendHeavyUsers} users with ${scale.friendsPerHeavyUser} friends, ${scale.messages} chat messages), seed "${seed}"${database.fromCache ? ', from cache' : `, built in ${database.importSeconds.toFixed(1)} s through importWorld`}`,
    `- Each scenario: ${warmupSeconds} s warm-up, then ${measureSeconds} s measured in ${rounds} slices alternating with the baselines (bare Fastify and bare node:http returning the scenario's answer as a fixed body, same requests, same connections)`,
    '',
    table(rows, kind),
    '',
    ...memoryLines,
    ...rows.filter((r) => r.note).map((r) => `- ${r.scenario.title}: ${r.note}`),
    '',
    ...(floor ? floorReport(floor) : []),
  ].join('\n');
  return report;
}

/** `base`.md, or after the day's earlier complete runs `base`-N.md, N one more than the highest kept (a missing one is not filled in). */
function nextResultName(dir: string, base: string): string {
  let highest = 0;
  for (const name of readdirSync(dir)) {
    if (name === `${base}.md`) highest = Math.max(highest, 1);
    const numbered = name.startsWith(`${base}-`) ? /^(\d+)\.md$/.exec(name.slice(base.length + 1)) : null;
    if (numbered) highest = Math.max(highest, Number(numbered[1]));
  }
  return highest === 0 ? `${base}.md` : `${base}-${highest + 1}.md`;
}

async function main(): Promise<void> {
  mkdirSync(CACHE_DIR, { recursive: true });
  const date = new Date().toISOString().slice(0, 10);
  // Only complete runs go to bench/results/; quick and partial (--only) runs stay in the cache.
  const partial = quick || only !== undefined;
  const dir = partial ? join(CACHE_DIR, 'results') : join(here, 'results');
  mkdirSync(dir, { recursive: true });
  for (const kind of kinds) {
    const text = await runOn(kind);
    const name = `${kind}${redisFor(kind) ? '-redis' : ''}`;
    // A later complete run of the same day is kept beside the earlier one (-2, -3...).
    const base = `${date}-${name}${quick ? '-quick' : ''}${only ? '-partial' : ''}`;
    const file = join(dir, partial ? `${base}.md` : nextResultName(dir, base));
    writeFileSync(file, `# Benchmark ${date}, ${name}${quick ? ' (quick)' : ''}\n\n${text}`);
    console.log(`\n${text}\nwritten to ${file}`);
  }
  // The web client in Chromium, once: it does not depend on the database.
  if (selected('web.home') && existsSync(CHROMIUM_PATH)) {
    const text = await measureWebClient(log);
    const file = join(dir, `${date}-web-client${quick ? '-quick' : ''}${only ? '-partial' : ''}.md`);
    writeFileSync(file, `# Benchmark ${date}, web client\n\n${text}`);
    console.log(`\n${text}\nwritten to ${file}`);
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
