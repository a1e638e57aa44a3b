import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { Writable } from 'node:stream';
import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { createServer, loggerOptions } from '../src/app.js';
import { defaultConfig } from '../src/config.js';
import { openDatabase, type Database } from '../src/db/connection.js';
import { SCHEMA_CHANGE_LOCK } from '../src/db/migrate.js';
import { newDatabaseLocation, ok, startTestServer, type TestServer } from './helpers.js';
import { form, json, listen, signIn, transportWorld, wire } from './transport-support.js';
import { missing, REDIS_SERVER } from './components.js';

/** The transport over real sockets: methods, bodies, envelopes, statuses and headers. */
describe('transport over HTTP', () => {
  let server: TestServer;
  let base: string;

  before(async () => {
    server = await startTestServer({ world: transportWorld() });
    base = await listen(server);
  });
  after(async () => {
    await server.close();
  });

  const ids = (answer: { body: any }) => (answer.body.data.item_protos as { item_proto_id: number }[]).map((p) => p.item_proto_id);

  test('every method answers GET with query parameters and POST with a JSON or form body alike', async () => {
    const byGet = await wire(`${base}/api/data.getItemProtos?item_proto_ids=3,1,2`);
    const byJson = await wire(`${base}/api/data.getItemProtos`, json({ item_proto_ids: '3,1,2' }));
    const byForm = await wire(`${base}/api/data.getItemProtos`, form({ item_proto_ids: '3,1,2' }));
    for (const answer of [byGet, byJson, byForm]) {
      assert.equal(answer.status, 200);
      assert.equal(answer.body.code, 0);
    }
    assert.deepEqual(ids(byGet).sort(), [1, 2, 3]);
    assert.deepEqual(byJson.body, byGet.body);
    assert.deepEqual(byForm.body, byGet.body);

    const chatByGet = await wire(`${base}/api/gchat.get`);
    const chatByPost = await wire(`${base}/api/gchat.get`, { method: 'POST' });
    assert.equal(chatByGet.body.code, 0);
    assert.deepEqual(chatByPost.body, chatByGet.body);
  });

  test('query and body parameters merge, and the body wins a clash', async () => {
    // type=short from the query applies together with user_id from the body.
    const merged = await wire(`${base}/api/users.get?type=short`, json({ user_id: 2 }));
    assert.equal(merged.body.code, 0);
    assert.equal(merged.body.data[0].user_id, 2);
    assert.equal('nicks_old' in merged.body.data[0], false, 'short form from the query parameter');
    const full = await wire(`${base}/api/users.get`, json({ user_id: 2 }));
    assert.ok('nicks_old' in full.body.data[0], 'the full form has nicks_old');

    const jsonWins = await wire(`${base}/api/data.getItemProtos?item_proto_ids=1`, json({ item_proto_ids: '2' }));
    assert.deepEqual(ids(jsonWins), [2]);
    const formWins = await wire(`${base}/api/data.getItemProtos?item_proto_ids=1`, form({ item_proto_ids: '5' }));
    assert.deepEqual(ids(formWins), [5]);
  });

  test('a malformed JSON body, a body that is not an object and an unsupported content type answer 2', async () => {
    const broken = await wire(`${base}/api/gchat.get`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' });
    assert.equal(broken.status, 200);
    assert.equal(broken.body.code, 2);
    assert.match(broken.body.description, /JSON/);

    const array = await wire(`${base}/api/gchat.get`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1,2]' });
    assert.equal(array.body.code, 2);

    const text = await wire(`${base}/api/gchat.get`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    assert.equal(text.status, 200);
    assert.equal(text.body.code, 2);

    const xml = await wire(`${base}/api/data.getItemProtos`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: '<a/>',
    });
    assert.equal(xml.body.code, 2);

    // JSON with a charset parameter is still JSON.
    const charset = await wire(`${base}/api/data.getItemProtos`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ item_proto_ids: '4' }),
    });
    assert.deepEqual(ids(charset), [4]);
  });

  test('a body over the size limit answers 2 with HTTP 413', async () => {
    const limit = server.services.config.bodyLimit;
    const big = await wire(`${base}/api/gchat.get`, json({ padding: 'x'.repeat(limit + 10) }));
    assert.equal(big.status, 413);
    assert.equal(big.body.code, 2);
    assert.equal(typeof big.body.description, 'string');
    const bigForm = await wire(`${base}/api/gchat.get`, form({ padding: 'x'.repeat(limit + 10) }));
    assert.equal(bigForm.status, 413);
    assert.equal(bigForm.body.code, 2);
    // Just under the limit is fine.
    const fits = await wire(`${base}/api/gchat.get`, json({ padding: 'x'.repeat(limit - 100) }));
    assert.equal(fits.status, 200);
    assert.equal(fits.body.code, 0);
  });

  test('an unknown method answers 5 on GET and POST', async () => {
    for (const answer of [
      await wire(`${base}/api/users.nope`),
      await wire(`${base}/api/users.nope`, json({})),
      await wire(`${base}/api/nothing`),
      await wire(`${base}/api/users.get/extra`),
      await wire(`${base}/api/`),
      await wire(`${base}/api`),
      await wire(`${base}/api?user_ids=1`),
      await wire(`${base}/api/users.nope`, { method: 'PUT' }),
    ]) {
      assert.equal(answer.status, 200);
      assert.equal(answer.body.code, 5);
      assert.equal(typeof answer.body.description, 'string');
    }
  });

  test('a path the router cannot read answers like an unknown method, in the envelope', async () => {
    for (const answer of [
      await wire(`${base}/api/users%2`),
      await wire(`${base}/api/users%zz.get`, json({})),
      await wire(`${base}/api/${'x'.repeat(201)}`),
    ]) {
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.body, { code: 5, description: 'unknown method' });
      assert.ok(answer.headers.get('x-request-id'));
    }
    const outside = await wire(`${base}/files%2`);
    assert.equal(outside.status, 404);
    assert.deepEqual(outside.body, { code: 5, description: 'not found' });
  });

  test('a request target in absolute form (as sent to a proxy) is answered as its path', async () => {
    const absolute = (path: string, method = 'GET') =>
      new Promise<{ status: number; allow?: string; body: unknown }>((resolve, reject) => {
        const { hostname, port } = new URL(base);
        const request = httpRequest({ host: hostname, port, method, path: `http://game.example${path}` }, (response) => {
          let text = '';
          response.on('data', (chunk) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, allow: response.headers.allow, body: JSON.parse(text) }));
        });
        request.on('error', reject).end();
      });
    assert.deepEqual(await absolute('/api/users%2'), { status: 200, allow: undefined, body: { code: 5, description: 'unknown method' } });
    assert.deepEqual(await absolute('/api'), { status: 200, allow: undefined, body: { code: 5, description: 'unknown method' } });
    assert.deepEqual(await absolute('/api/users.get?user_ids=1', 'PUT'), {
      status: 200,
      allow: 'GET, POST',
      body: { code: 2, description: 'users.get is called with GET or POST' },
    });
  });

  test('a method called with another HTTP method than GET or POST answers 2 and says which', async () => {
    for (const [verb, path] of [
      ['PUT', 'users.get'],
      ['DELETE', 'users.get'],
      ['PATCH', 'users.get'],
      ['PUT', 'users%2Eget'],
    ]) {
      const answer = await wire(`${base}/api/${path}?user_ids=1`, { method: verb });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('allow'), 'GET, POST');
      assert.deepEqual(answer.body, { code: 2, description: 'users.get is called with GET or POST' });
    }
  });

  test('unknown extra parameters are ignored', async () => {
    const get = await wire(`${base}/api/gchat.get?foo=1&bar=&baz=x,y`);
    assert.equal(get.body.code, 0);
    const post = await wire(`${base}/api/data.getItemProtos`, json({ item_proto_ids: '1', nested: { a: [1, 2] }, flag: true }));
    assert.deepEqual(ids(post), [1]);
  });

  test('envelopes: data on success, no data key for void methods, code and description on errors', async () => {
    const success = await wire(`${base}/api/data.getItemProtos?item_proto_ids=1`);
    assert.deepEqual(Object.keys(success.body).sort(), ['code', 'data']);
    assert.equal(success.body.code, 0);

    const token = await signIn(server, 'carol@example.com');
    const voidAnswer = await wire(`${base}/api/friends.add`, json({ access_token: token, user_id: 2 }));
    assert.equal(voidAnswer.status, 200);
    assert.deepEqual(voidAnswer.body, { code: 0 }, 'a void method answers exactly {"code":0}');
    assert.equal(voidAnswer.text.includes('data'), false);

    const failure = await wire(`${base}/api/data.getItemProtos`);
    assert.equal(failure.body.code, 2);
    assert.equal(typeof failure.body.description, 'string');
    for (const key of Object.keys(failure.body)) assert.ok(['code', 'description', 'data'].includes(key), `unexpected key ${key}`);
  });

  test('the token travels as access_token (query, JSON, form) or as a Bearer header', async () => {
    const token = await signIn(server, 'alice@example.com');
    const me = (answer: { body: any }) => {
      assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
      assert.equal(answer.body.data.length, 1);
      return answer.body.data[0].user_id;
    };
    assert.equal(me(await wire(`${base}/api/users.get?access_token=${encodeURIComponent(token)}`)), 1);
    assert.equal(me(await wire(`${base}/api/users.get`, json({ access_token: token }))), 1);
    assert.equal(me(await wire(`${base}/api/users.get`, form({ access_token: token }))), 1);
    assert.equal(me(await wire(`${base}/api/users.get`, { headers: { authorization: `Bearer ${token}` } })), 1);
    // The scheme's name is case-insensitive (RFC 9110).
    for (const scheme of ['bearer', 'BEARER', 'bEaReR'])
      assert.equal(me(await wire(`${base}/api/users.get`, { headers: { authorization: `${scheme} ${token}` } })), 1, scheme);
    assert.equal((await wire(`${base}/api/users.get`, { headers: { authorization: `Basic ${token}` } })).body.code, 1);
    assert.equal((await wire(`${base}/api/users.get`, { headers: { authorization: `Bearer${token}` } })).body.code, 1);

    // Without a token there is no current user; a wrong token on a method that takes one is 1.
    assert.equal((await wire(`${base}/api/users.get`)).body.code, 1);
    assert.equal((await wire(`${base}/api/users.get`, { headers: { authorization: 'Bearer not-a-real-token-at-all' } })).body.code, 1);
    assert.equal((await wire(`${base}/api/users.get?user_id=2&access_token=not-a-real-token-at-all`)).body.code, 1);
    assert.equal((await wire(`${base}/api/friends.add`, json({ user_id: 3 }))).body.code, 1);
    // A token given twice, or not as text, is refused rather than taken for none.
    const refusedToken = async (answer: Promise<{ body: any }>, problem: string) =>
      assert.deepEqual((await answer).body, { code: 2, description: `parameter access_token: ${problem}` });
    const quoted = encodeURIComponent(token);
    await refusedToken(wire(`${base}/api/users.get?user_id=2&access_token=${quoted}&access_token=${quoted}`), 'given more than once');
    await refusedToken(wire(`${base}/api/users.get`, json({ user_id: 2, access_token: [token] })), 'given more than once');
    await refusedToken(wire(`${base}/api/users.get`, json({ user_id: 2, access_token: 12345 })), 'must be a string');
    await refusedToken(wire(`${base}/api/friends.add`, json({ user_id: 3, access_token: { token } })), 'must be a string');
    // Methods that take no token ignore one, even a wrong one.
    assert.equal((await wire(`${base}/api/gchat.get?access_token=not-a-real-token-at-all`)).body.code, 0);
    assert.equal(
      (await wire(`${base}/api/data.getItemProtos?item_proto_ids=1`, { headers: { authorization: 'Bearer nonsense-nonsense' } })).body.code,
      0,
    );
  });

  test('a bot token calls only the methods its declaration opens to bots; others answer 4', async () => {
    const ownerToken = await signIn(server, 'alice@example.com');
    const session = ok(await server.call('bots.getToken', { user_id: 4 }, { token: ownerToken }));
    const botToken = session.access_token as string;
    // friends.add is open to bots; account.setPrivacy is not.
    assert.deepEqual((await server.call('friends.add', { user_id: 3 }, { token: botToken })).body, { code: 0 });
    const refused = await server.call('account.setPrivacy', { inventory: 'friends' }, { token: botToken });
    assert.equal(refused.status, 200);
    assert.equal(refused.body.code, 4);
    // The same method with a user's token works.
    assert.equal((await server.call('account.setPrivacy', { inventory: 'everyone' }, { token: ownerToken })).body.code, 0);
  });

  test('every answer carries a distinct x-request-id, errors and health checks included', async () => {
    const answers = [
      await wire(`${base}/api/gchat.get`),
      await wire(`${base}/api/gchat.get`),
      await wire(`${base}/api/unknown.method`),
      await wire(`${base}/api/data.getItemProtos`),
      await wire(`${base}/healthz`),
      await wire(`${base}/api/gchat.get`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }),
    ];
    const requestIds = answers.map((a) => a.headers.get('x-request-id'));
    for (const id of requestIds) assert.match(id ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(new Set(requestIds).size, requestIds.length);
  });

  test('/healthz answers while the process runs; /readyz while the database answers', async () => {
    const health = await wire(`${base}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(health.body, { status: 'ok' });
    const ready = await wire(`${base}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, { status: 'ok' });
  });
});

/**
 * Drops tables to make every query on them fail. On PostgreSQL under the lock migrations take:
 * other test files migrating at the same moment read the tables of every schema.
 */
async function dropTables(db: Database, tables: string[]): Promise<void> {
  const postgres = db.dialect === 'postgres';
  await db.kysely.connection().execute(async (connection) => {
    if (postgres) await sql`select pg_advisory_lock(${SCHEMA_CHANGE_LOCK})`.execute(connection);
    try {
      for (const table of tables) await sql`drop table ${sql.table(table)}`.execute(connection);
    } finally {
      if (postgres) await sql`select pg_advisory_unlock(${SCHEMA_CHANGE_LOCK})`.execute(connection);
    }
  });
}

describe('unexpected failures', () => {
  test('answer code 3 with HTTP 500 and no internals', async () => {
    const server = await startTestServer({ world: transportWorld() });
    try {
      const base = await listen(server);
      // A database that lost its tables: every query fails in the driver.
      await dropTables(server.db, ['items', 'equipped', 'friendships', 'blocks']);
      const answer = await wire(`${base}/api/inventory.get?user_id=1`);
      assert.equal(answer.status, 500);
      assert.deepEqual(answer.body, { code: 3, description: 'internal server error' });
      assert.doesNotMatch(answer.text, /items|table|relation|select|sqlite|postgres|at .*\.ts/i);
      assert.ok(answer.headers.get('x-request-id'));
    } finally {
      await server.close();
    }
  });

  test('are logged with the request id; secrets in URLs are not logged', async () => {
    const location = await newDatabaseLocation();
    const db = await openDatabase(location.url, { schema: location.schema, poolSize: 2, secretKey: location.secretKey });
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    const { app } = await createServer(
      { ...defaultConfig(), databaseUrl: location.url },
      { db, logger: { ...(loggerOptions('info') as object), stream } },
    );
    try {
      await app.ready();
      await dropTables(db, ['items', 'users']);
      const secret = 'SeCrEtToKeN-0123456789abcdef';
      const answer = await app.inject({ method: 'GET', url: '/api/inventory.get?user_id=1' });
      assert.equal(answer.statusCode, 500);
      await app.inject({ method: 'GET', url: `/api/gchat.get?access_token=${secret}&password=${secret}` });
      await app.inject({ method: 'GET', url: '/api/gchat.get', headers: { authorization: `Bearer ${secret}` } });
      const requestId = answer.headers['x-request-id'];
      const entries = lines.map((line) => JSON.parse(line) as { reqId?: string; level: number; err?: { message: string } });
      const logged = entries.find((e) => e.level >= 50 && e.reqId === requestId);
      assert.ok(logged, 'the failure is logged at error level with the request id');
      assert.ok(logged.err?.message, 'the log keeps the cause');
      assert.equal(
        lines.some((line) => line.includes(secret)),
        false,
        'the token never reaches the log',
      );
    } finally {
      await app.close();
      await db.close();
      await location.dispose();
    }
  });

  test('/readyz answers 503 when the database is gone', async () => {
    const server = await startTestServer();
    const base = await listen(server);
    await server.db.close();
    const ready = await wire(`${base}/readyz`);
    assert.equal(ready.status, 503);
    assert.deepEqual(ready.body, { status: 'unavailable' });
    assert.equal((await wire(`${base}/healthz`)).status, 200);
    await server.app.close();
    await server.location.dispose();
  });

  test('/readyz answers 503 while Redis does not answer, and 200 again once it does', { skip: missing.redisServer }, async () => {
    // A Redis of this test's own, so stopping it touches nobody else.
    const port = await new Promise<number>((resolve) => {
      const probe = createTcpServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const startRedis = async () => {
      const redis = spawn(REDIS_SERVER!, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      await new Promise<void>((resolve) => {
        let output = '';
        redis.stdout.on('data', (chunk) => {
          output += chunk;
          if (/Ready to accept connections/.test(output)) resolve();
        });
      });
      return redis;
    };
    const stopRedis = (redis: ReturnType<typeof spawn>) =>
      new Promise<void>((resolve) => {
        redis.on('close', () => resolve());
        redis.kill('SIGTERM');
      });

    let redis = await startRedis();
    const server = await startTestServer({ config: { redisUrl: `redis://127.0.0.1:${port}`, redisPrefix: 'gp:readyz:' } });
    try {
      const base = await listen(server);
      assert.equal((await wire(`${base}/readyz`)).status, 200);
      await stopRedis(redis);
      const down = await wire(`${base}/readyz`);
      assert.equal(down.status, 503);
      assert.deepEqual(down.body, { status: 'unavailable' });
      assert.equal((await wire(`${base}/healthz`)).status, 200, 'the process itself is up');
      redis = await startRedis();
      // The client reconnects on its own; readiness follows without a restart.
      let again = await wire(`${base}/readyz`);
      while (again.status !== 200) again = await wire(`${base}/readyz`);
      assert.deepEqual(again.body, { status: 'ok' });
    } finally {
      await server.close();
      await stopRedis(redis);
    }
  });
});
