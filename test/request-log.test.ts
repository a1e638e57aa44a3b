import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createServer, loggerOptions } from '../src/app.js';
import { defaultConfig, type Config } from '../src/config.js';
import { openDatabase } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { importWorld } from '../src/world/import.js';
import { ConfigError, SERVER_SETTINGS, loadConfig, parseArgsOptions } from '../src/cli/settings.js';
import { newDatabaseLocation } from './helpers.js';
import { PASSWORD, json, transportWorld, wire, type WireAnswer } from './transport-support.js';

interface Line {
  level: number;
  msg: string;
  reqId?: string;
  req?: { method: string; url: string; ip: string };
  res?: { statusCode: number };
  responseTime?: number;
}

/** A server on a fresh database whose log lines (JSON) are collected; `run` gets its base URL. */
async function withLoggedServer(settings: Partial<Config>, run: (base: string, lines: Line[]) => Promise<void>): Promise<void> {
  const location = await newDatabaseLocation();
  const db = await openDatabase(location.url, { schema: location.schema, poolSize: 2, secretKey: location.secretKey });
  await migrateToLatest(db);
  await importWorld(db, transportWorld(), { mode: 'merge', now: Math.floor(Date.now() / 1000) });
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const text of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(text) as Line);
      done();
    },
  });
  const config: Config = { ...defaultConfig(), databaseUrl: location.url, ...settings };
  const { app } = await createServer(config, { db, logger: { ...(loggerOptions(config.logLevel, false) as object), stream } });
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    await run(`http://127.0.0.1:${port}`, lines);
  } finally {
    await app.close();
    await db.close();
    await location.dispose();
  }
}

const requestLines = (lines: Line[]) => lines.filter((l) => l.msg === 'request completed' || l.msg === 'slow request');

test('by default answered requests are not logged', async () => {
  await withLoggedServer({ slowRequestMs: 60_000 }, async (base, lines) => {
    for (let i = 0; i < 20; i++) assert.equal((await wire(`${base}/healthz`)).status, 200);
    assert.equal((await wire(`${base}/api/auth.signin`, json({ email: 'alice@example.com', password: PASSWORD }))).body.code, 0);
    assert.equal((await wire(`${base}/api/gchat.get`)).body.code, 0);
    assert.deepEqual(requestLines(lines), []);
  });
});

test('a slow request is logged whatever the access log says, with its request id', async () => {
  // The threshold is low enough that a sign-in (argon2 takes tens of milliseconds) is always slow.
  await withLoggedServer({ slowRequestMs: 5 }, async (base, lines) => {
    const signin = await wire(`${base}/api/auth.signin`, json({ email: 'alice@example.com', password: PASSWORD }));
    assert.equal(signin.body.code, 0);
    const slow = requestLines(lines).filter((l) => l.reqId === signin.headers.get('x-request-id'));
    assert.equal(slow.length, 1);
    assert.equal(slow[0].msg, 'slow request');
    assert.equal(slow[0].level, 40, 'warn');
    assert.deepEqual(slow[0].req, { method: 'POST', url: '/api/auth.signin', ip: '127.0.0.1' });
    assert.equal(slow[0].res?.statusCode, 200);
    assert.ok(slow[0].responseTime! >= 5);
  });
});

test('--access-log logs one line per request with its request id; secrets in the URL are hidden', async () => {
  await withLoggedServer({ accessLog: 1, slowRequestMs: 60_000 }, async (base, lines) => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await wire(`${base}/api/gchat.get?access_token=s3cr3t-t0ken`)).headers.get('x-request-id')!);
    const logged = requestLines(lines);
    assert.deepEqual(
      logged.map((l) => l.reqId),
      ids,
    );
    for (const line of logged) {
      assert.equal(line.msg, 'request completed');
      assert.equal(line.level, 30, 'info');
      assert.equal(line.req?.url, '/api/gchat.get?access_token=[redacted]');
      assert.equal(line.res?.statusCode, 200);
    }
    assert.equal(JSON.stringify(lines).includes('s3cr3t-t0ken'), false);
  });
});

const ADMIN_KEY = 'request-log-admin-key';
const URL_PASSWORD = 'URL-PASSWORD-in-clear-1';
const URL_TOTP_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
/** A world file with a plain password and a TOTP secret, as a query parameter's value. */
const worldInUrl = encodeURIComponent(
  JSON.stringify({ users: [{ user_id: 90, email: 'url@example.com', password: URL_PASSWORD, totp_secret: URL_TOTP_SECRET, nick: 'Url' }] }),
);
const asAdmin = { headers: { 'x-admin-key': ADMIN_KEY } };

test('at debug level with --access-log, world files and promo codes in the URL are not logged, however their names are spelled', async () => {
  await withLoggedServer({ logLevel: 'debug', accessLog: 1, slowRequestMs: 60_000, adminKey: ADMIN_KEY }, async (base, lines) => {
    const urls = [
      `/api/admin.importWorld?world=${worldInUrl}`,
      `/api/admin.importWorld?wor%6Cd=${worldInUrl}`,
      '/api/wallet.promocodeActivate?promocode=PROMO-in-clear-7',
      '/api/wallet.promocodeActivate?promocode%5B%5D=PROMO-in-clear-8&code[0]=PROMO-in-clear-9',
    ];
    const answers: WireAnswer[] = [];
    for (const url of urls) answers.push(await wire(`${base}${url}`, asAdmin));
    assert.deepEqual(
      answers.map((a) => a.body.code),
      [0, 0, 1, 1],
    );
    for (const [i, logged] of [
      '/api/admin.importWorld?world=[redacted]',
      '/api/admin.importWorld?wor%6Cd=[redacted]',
      '/api/wallet.promocodeActivate?promocode=[redacted]',
      '/api/wallet.promocodeActivate?promocode%5B%5D=[redacted]&code[0]=[redacted]',
    ].entries()) {
      const ofRequest = lines.filter((l) => l.reqId === answers[i].headers.get('x-request-id'));
      assert.deepEqual(
        ofRequest.map((l) => [l.msg, l.req?.url]),
        [
          ['incoming request', logged],
          ['request completed', logged],
        ],
      );
    }
    const text = JSON.stringify(lines);
    for (const secret of [URL_PASSWORD, URL_TOTP_SECRET, 'PROMO-in-clear-7', 'PROMO-in-clear-8', 'PROMO-in-clear-9'])
      assert.equal(text.includes(secret), false, secret);
  });
});

test('a slow request at info level is logged without the world file in its URL', async () => {
  // An import hashes the plain password with argon2: tens of milliseconds, always slow here.
  await withLoggedServer({ slowRequestMs: 5, adminKey: ADMIN_KEY }, async (base, lines) => {
    const answer = await wire(`${base}/api/admin.importWorld?world=${worldInUrl}`, asAdmin);
    assert.equal(answer.body.code, 0);
    const slow = requestLines(lines).filter((l) => l.reqId === answer.headers.get('x-request-id'));
    assert.deepEqual(
      slow.map((l) => [l.msg, l.level, l.req]),
      [['slow request', 40, { method: 'GET', url: '/api/admin.importWorld?world=[redacted]', ip: '127.0.0.1' }]],
    );
    const text = JSON.stringify(lines);
    for (const secret of [URL_PASSWORD, URL_TOTP_SECRET]) assert.equal(text.includes(secret), false, secret);
  });
});

test('a sampled access log logs some requests, not all', async () => {
  await withLoggedServer({ accessLog: 0.5, slowRequestMs: 60_000 }, async (base, lines) => {
    const count = 200;
    for (let i = 0; i < count; i++) await wire(`${base}/healthz`);
    const logged = requestLines(lines).length;
    // Each request is logged with probability 1/2: all or none of 200 would take odds of 2^-199.
    assert.ok(logged > 0 && logged < count, `${logged} of ${count} logged`);
  });
});

test('the log settings: --access-log, --access-log-sample, --slow-request-ms and their variables', () => {
  const load = (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const { values } = parseArgs({ args, options: parseArgsOptions(SERVER_SETTINGS), strict: true });
    return loadConfig(SERVER_SETTINGS, values as Record<string, string | boolean | undefined>, env);
  };
  assert.equal(load([]).accessLog, 0);
  assert.equal(load([]).slowRequestMs, 1000);
  assert.equal(load(['--access-log']).accessLog, 1);
  assert.equal(load([], { ACCESS_LOG: 'on' }).accessLog, 1);
  assert.equal(load([], { ACCESS_LOG: 'off' }).accessLog, 0);
  assert.equal(load(['--access-log-sample', '0.25']).accessLog, 0.25);
  assert.equal(load([], { ACCESS_LOG_SAMPLE: '1%' }).accessLog, 0.01);
  assert.equal(load(['--slow-request-ms', '250']).slowRequestMs, 250);
  assert.equal(load([], { SLOW_REQUEST_MS: '40' }).slowRequestMs, 40);
  assert.throws(() => load(['--access-log-sample', '2']), ConfigError);
  assert.throws(() => load(['--access-log-sample', '0']), ConfigError);
  assert.throws(() => load(['--slow-request-ms', '0']), ConfigError);
});

test('log lines are JSON unless standard output is a terminal', () => {
  assert.equal((loggerOptions('info', false) as { transport?: unknown }).transport, undefined);
  assert.deepEqual((loggerOptions('info', true) as { transport?: { target: string } }).transport?.target, 'pino-pretty');
});
