import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/connection.js';
import type { RedisBus } from '../src/infra/bus.js';
import {
  DB_KIND,
  REDIS_URL,
  TEST_SECRET_KEY,
  newDatabaseLocation,
  ok,
  processDatabaseEnv,
  startTestServer,
  type DatabaseLocation,
} from './helpers.js';
import { missing } from './components.js';
import { WORLD_CHANGED } from '../src/infra/channels.js';

const MAIN = new URL('../src/cli/main.ts', import.meta.url).pathname;

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The program as a separate process, the way an operator runs it. */
function start(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    // Settings of the surrounding shell must not leak into the process under test.
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '',
      REDIS_URL: '',
      WORLD: '',
      ADMIN_KEY: '',
      SECRET_KEY: '',
      RATE_LIMIT: '',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const finished = new Promise<Finished>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  /** Resolves with the first match of `pattern` in the output so far or to come. */
  const waitFor = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(stdout);
        if (match) {
          child.stdout.off('data', check);
          resolve(match);
        }
      };
      child.stdout.on('data', check);
      child.on('close', () => reject(new Error(`exited before printing ${pattern}:\n${stdout}\n${stderr}`)));
      check();
    });
  return { child, finished, waitFor };
}

const run = (args: string[], env: NodeJS.ProcessEnv = {}) => start(args, env).finished;

const PASSWORD = 'cli-test-password';
/** A small world whose one account has a plain password (hashed on import). */
const world = {
  item_protos: [{ item_proto_id: 1, type: 0, title: 'Card', quality_id: 1, monopoly_id: 1 }],
  users: [
    { user_id: 1, email: 'cli@example.com', password: PASSWORD, domain: 'cli', nick: 'Cli' },
    { user_id: 2, domain: 'clibot', nick: 'Cli bot', bot_owner: 1 },
  ],
  items: [{ user_id: 1, item_proto_id: 1, copies: 2, ts_owned: 1_767_000_000 }],
  gchat: { messages: [{ type: 1 as const, user_id: 1, ts: 1_767_000_000, text: 'from the command line' }] },
};

describe('the game-platform command', () => {
  let dir: string;
  let location: DatabaseLocation;
  /** DATABASE_URL (a SQLite file, or a PostgreSQL schema picked by search_path) and SECRET_KEY for the processes. */
  let databaseEnv: { DATABASE_URL: string; SECRET_KEY: string };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gp-cli-'));
    location = await newDatabaseLocation();
    if (DB_KIND === 'postgres')
      await (await openDatabase(location.url, { schema: location.schema, secretKey: location.secretKey })).close();
    databaseEnv = processDatabaseEnv(location);
    writeFileSync(join(dir, 'world.json'), JSON.stringify(world));
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await location.dispose();
  });

  test('--help on every command, --version, and exit codes: 2 for usage errors, 1 for failed work', async () => {
    const general = await run(['--help']);
    assert.equal(general.code, 0);
    for (const name of ['serve', 'migrate', 'import', 'export', 'admin']) assert.match(general.stdout, new RegExp(`\\n  ${name} `));
    for (const name of ['serve', 'migrate', 'import', 'export']) {
      const help = await run([name, '--help']);
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, new RegExp(`^Usage: game-platform ${name}`));
    }
    const serveHelp = (await run(['serve', '--help'])).stdout;
    for (const option of [
      '--host',
      'HOST',
      '--port',
      'PORT',
      '--database',
      'DATABASE_URL',
      '--redis',
      'REDIS_URL',
      '--admin-key',
      'ADMIN_KEY',
      '--trust-proxy',
      'TRUST_PROXY',
      '--no-rate-limit',
      'RATE_LIMIT=off',
      '--world',
    ])
      assert.ok(serveHelp.includes(option), `serve --help mentions ${option}`);
    assert.match((await run(['import', '--help'])).stdout, /--mode/);

    const unknown = await run(['launch']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown command "launch"/);
    const badFlag = await run(['migrate', '--colour']);
    assert.equal(badFlag.code, 2);
    assert.match(badFlag.stderr, /--colour/);
    const badValue = await run(['serve'], { PORT: 'eighty' });
    assert.equal(badValue.code, 2);
    assert.match(badValue.stderr, /PORT/);

    const version = await run(['--version']);
    assert.equal(version.code, 0);
    assert.equal(version.stdout.trim(), JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version);
    // Work that fails exits 1 with one line naming the cause, and without the password of the URL.
    const unreachable = await run(['migrate', '--database', 'postgres://someone:hunter2-secret@127.0.0.1:1/nothing'], {
      SECRET_KEY: TEST_SECRET_KEY,
    });
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /^game-platform: .*ECONNREFUSED/);
    assert.equal(unreachable.stderr.includes('hunter2-secret'), false);
  });

  test('serve names what it cannot open: the metrics listener, the TLS files', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const metrics = await run(['serve', '--port', '0', '--metrics-host', '127.0.0.1', '--metrics-port', String(port)], databaseEnv);
      assert.equal(metrics.code, 1);
      assert.match(metrics.stderr, new RegExp(`^cannot listen for metrics on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`, 'm'));
    } finally {
      taken.close();
    }
    const notPem = join(dir, 'not-a-certificate.pem');
    writeFileSync(notPem, 'not a certificate\n');
    const tls = await run(['serve', '--port', '0', '--tls-cert', notPem, '--tls-key', notPem], databaseEnv);
    assert.equal(tls.code, 1);
    assert.ok(tls.stderr.includes(`the TLS certificate ${notPem} and key ${notPem} are not a PEM certificate and its key`), tls.stderr);
  });

  test('migrate, import, export and a bad import that changes nothing', async () => {
    const env = databaseEnv;
    const migrated = await run(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, /applied 001_initial|up to date/);
    assert.match((await run(['migrate'], env)).stdout, /up to date/);

    const imported = await run(['import', join(dir, 'world.json'), '--mode', 'replace'], env);
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stdout, /2 users, 1 item prototypes, 2 items/);

    const exportFile = join(dir, 'export.json');
    const exported = await run(['export', exportFile], env);
    assert.equal(exported.code, 0, exported.stderr);
    const exportedWorld = JSON.parse(readFileSync(exportFile, 'utf8'));
    assert.equal(exportedWorld.users.length, 2);
    assert.match(exportedWorld.users[0].password_hash, /^\$argon2id\$/);
    assert.equal(JSON.stringify(exportedWorld).includes(PASSWORD), false);

    // Re-importing the export gives the same world, written to standard output this time.
    assert.equal((await run(['import', exportFile, '--mode', 'replace'], env)).code, 0);
    const again = await run(['export'], env);
    assert.equal(again.code, 0);
    assert.deepEqual(JSON.parse(again.stdout), exportedWorld);

    // A bad file: exit 1, the entry named, nothing changed.
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ ...world, items: [{ user_id: 42, item_proto_id: 1 }] }));
    const bad = await run(['import', join(dir, 'bad.json')], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /items\[0\]\.user_id: unknown user 42/);
    writeFileSync(join(dir, 'broken.json'), '{ "users": [');
    const broken = await run(['import', join(dir, 'broken.json')], env);
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /not valid JSON/);
    assert.equal((await run(['import', exportFile, '--mode', 'overwrite'], env)).code, 2);
    assert.deepEqual(JSON.parse((await run(['export'], env)).stdout), exportedWorld);
  });

  test('serve imports the world into an empty database, prints the URL, and stops gracefully', async () => {
    const fresh = await newDatabaseLocation();
    if (DB_KIND === 'postgres') await (await openDatabase(fresh.url, { schema: fresh.schema, secretKey: fresh.secretKey })).close();
    const freshEnv = processDatabaseEnv(fresh);
    try {
      // At debug level the server logs each request as it arrives.
      const server = start(['serve', '--port', '0', '--world', join(dir, 'world.json'), '--log-level', 'debug'], freshEnv);
      const [, base] = await server.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/);

      const health = await fetch(`${base}/healthz`);
      assert.equal(health.status, 200);
      assert.equal((await (await fetch(`${base}/readyz`)).json()).status, 'ok');
      const chat = await (await fetch(`${base}/api/gchat.get`)).json();
      assert.equal(chat.code, 0);
      assert.equal(chat.data.messages[0].text, 'from the command line');
      const signin = await (
        await fetch(`${base}/api/auth.signin`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'cli@example.com', password: PASSWORD }),
        })
      ).json();
      assert.equal(signin.code, 0, 'the plain password of the world file was hashed and works');

      // A request in flight when the signal arrives is answered before the process ends.
      const body = JSON.stringify({ item_proto_ids: '1' });
      const inFlight = new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request(
          `${base}/api/data.getItemProtos`,
          { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
          (res) => {
            let text = '';
            res.on('data', (chunk) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          },
        );
        req.on('error', reject);
        req.write(body.slice(0, 5));
        // The rest of the body follows once the server has begun shutting down.
        server.waitFor(/shutting down/).then(() => req.end(body.slice(5)), reject);
      });
      // The server has logged the request's arrival: it is in flight.
      await server.waitFor(/"url":"\/api\/data\.getItemProtos"/);
      server.child.kill('SIGTERM');
      const answer = await inFlight;
      assert.equal(answer.status, 200);
      assert.equal(JSON.parse(answer.text).code, 0);
      const done = await server.finished;
      assert.equal(done.code, 0, `${done.stdout.slice(-1500)}\n${done.stderr}`);
      assert.match(done.stdout, /"msg":"stopped"/);
      // Not the shipped demo world, and not a terminal: its plain passwords are never printed.
      assert.doesNotMatch(done.stdout + done.stderr, new RegExp(PASSWORD));
      await assert.rejects(fetch(`${base}/healthz`), 'no longer listening');

      // A second start on the same database leaves the world as it is.
      const second = start(['serve', '--port', '0', '--world', join(dir, 'world.json')], freshEnv);
      await second.waitFor(/listening on/);
      second.child.kill('SIGINT');
      const secondDone = await second.finished;
      assert.equal(secondDone.code, 0, secondDone.stderr);
      assert.doesNotMatch(secondDone.stdout, /imported /);
      assert.match(done.stdout, /imported .*world\.json: 2 users/);
    } finally {
      await fresh.dispose();
    }
  });

  // The time limit only keeps a missing announcement from hanging the suite.
  test(
    'import --redis makes running servers answer from the imported world at once',
    { timeout: 120_000, skip: missing.redis },
    async () => {
      const shared = await newDatabaseLocation();
      const server = await startTestServer({ location: shared, redis: true, world });
      try {
        const title = async () =>
          ok(await server.call('data.getItemProtos', { item_proto_ids: '1' }, { http: 'GET' })).item_protos[0].title;
        const nick = async () => ok(await server.call('users.get', { user_id: 1 }, { http: 'GET' }))[0].nick;
        // Both are now held in the server's memory.
        assert.equal(await title(), 'Card');
        assert.equal(await nick(), 'Cli');

        const bus = server.services.bus as RedisBus;
        await bus.ready([WORLD_CHANGED]);
        const announced = new Promise<void>((resolve) => {
          const stop = bus.subscribe(WORLD_CHANGED, () => {
            stop();
            resolve();
          });
        });
        const renamed = {
          item_protos: [{ ...world.item_protos[0], title: 'Renamed card' }],
          users: [{ ...world.users[0], nick: 'Renamed' }],
        };
        writeFileSync(join(dir, 'renamed.json'), JSON.stringify(renamed));
        const imported = await run(
          ['import', join(dir, 'renamed.json'), '--redis', REDIS_URL, '--redis-prefix', shared.redisPrefix],
          processDatabaseEnv(shared),
        );
        assert.equal(imported.code, 0, imported.stderr);
        await announced;
        assert.equal(await title(), 'Renamed card');
        assert.equal(await nick(), 'Renamed');
      } finally {
        await server.close();
        await shared.dispose();
      }
    },
  );
});
