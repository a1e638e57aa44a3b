import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { newDatabaseLocation, processDatabaseEnv, startTestServer } from './helpers.js';
import { runCli } from './process-support.js';
import { openDatabase } from '../src/db/connection.js';
import type { World } from '../src/world/schema.js';
import { CLIENT_DIR, CLIENT_ROUTES } from '../src/web/index.js';

const built = existsSync(`${CLIENT_DIR}index.html`);
const page = built ? readFileSync(`${CLIENT_DIR}index.html`, 'utf8') : '';
const script = /<script type="module" crossorigin src="(\/assets\/index-[\w-]+\.js)"><\/script>/.exec(page)?.[1];

test('the web client is built (npm ci and npm run build build it)', () => {
  assert.ok(built, `${CLIENT_DIR}index.html is missing: run npm run build`);
  assert.ok(script, page);
});

test('every client route answers the client page, with a strict Content-Security-Policy and no inline script', async () => {
  const server = await startTestServer();
  try {
    const paths = CLIENT_ROUTES.map((route) => route.replace(':id', '7').replace(':domain', 'someone').replace('*', '1/2'));
    for (const path of [...paths, '/trades/new?to=7', '/confirm-email?token=abc']) {
      const answer = await server.app.inject({ method: 'GET', url: path });
      assert.equal(answer.statusCode, 200, path);
      assert.equal(answer.body, page, path);
      assert.equal(answer.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(answer.headers['cache-control'], 'no-cache');
      const policy = String(answer.headers['content-security-policy']);
      assert.match(policy, /script-src 'self'(;|$)/);
      assert.match(policy, /default-src 'self'/);
      assert.doesNotMatch(policy, /unsafe-inline|unsafe-eval/);
      assert.match(policy, /frame-ancestors 'none'/);
    }
    assert.doesNotMatch(page, /<script(?![^>]*\ssrc=)[^>]*>/, 'no inline script');
    assert.doesNotMatch(page, /\sstyle=|<style/, 'no inline style');
  } finally {
    await server.close();
  }
});

test('assets have hashed names, are cached for good, and are sent compressed as the client accepts', async () => {
  const server = await startTestServer();
  try {
    const original = readFileSync(`${CLIENT_DIR}${script!.slice(1)}`);
    const plain = await server.app.inject({ method: 'GET', url: script!, headers: { 'accept-encoding': 'identity' } });
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(plain.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers.vary, 'accept-encoding');
    assert.deepEqual(plain.rawPayload, original);

    const br = await server.app.inject({ method: 'GET', url: script!, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.deepEqual(brotliDecompressSync(br.rawPayload), original);
    assert.ok(br.rawPayload.length < original.length / 2);

    const gzip = await server.app.inject({ method: 'GET', url: script!, headers: { 'accept-encoding': 'gzip, br;q=0' } });
    assert.equal(gzip.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(gzip.rawPayload), original);

    const missingAsset = await server.app.inject({ method: 'GET', url: '/assets/index-nothere.js' });
    assert.equal(missingAsset.statusCode, 404);
  } finally {
    await server.close();
  }
});

test('the server information page moves to /about; /docs, /openapi.json, /healthz and /api answer as before', async () => {
  const server = await startTestServer();
  try {
    const about = await server.app.inject({ method: 'GET', url: '/about' });
    assert.equal(about.statusCode, 200);
    assert.match(about.body, /<a href="\/docs">API reference<\/a>/);
    assert.equal((await server.app.inject({ method: 'GET', url: '/docs/' })).statusCode, 200);
    assert.equal((await server.app.inject({ method: 'GET', url: '/openapi.json' })).json().openapi, '3.1.0');
    assert.deepEqual((await server.app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' });
    assert.equal((await server.call('gchat.get', {}, { http: 'GET' })).body.code, 0);
    const unknown = await server.app.inject({ method: 'GET', url: '/no-such-page' });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 5);
  } finally {
    await server.close();
  }
});

test('CORS is off by default: no header, and a preflight is not answered as one', async () => {
  const server = await startTestServer();
  try {
    const origin = 'https://app.example.com';
    const call = await server.app.inject({
      method: 'POST',
      url: '/api/gchat.get',
      headers: { origin, 'content-type': 'application/json' },
      payload: '{}',
    });
    assert.equal(call.headers['access-control-allow-origin'], undefined);
    const preflight = await server.app.inject({
      method: 'OPTIONS',
      url: '/api/gchat.get',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    assert.equal(preflight.headers['access-control-allow-origin'], undefined);
    assert.equal(preflight.headers['access-control-allow-methods'], undefined);
  } finally {
    await server.close();
  }
});

test('with an allow-list, its origins get CORS answers and preflights; other origins get none', async () => {
  const server = await startTestServer({ config: { corsOrigins: ['https://app.example.com', 'http://localhost:5173'] } });
  try {
    const preflight = await server.app.inject({
      method: 'OPTIONS',
      url: '/api/account.info',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    assert.equal(preflight.statusCode, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], 'https://app.example.com');
    assert.equal(preflight.headers['access-control-allow-methods'], 'GET, POST');
    assert.equal(preflight.headers['access-control-allow-headers'], 'authorization, content-type');
    assert.equal(preflight.headers['access-control-max-age'], '600');
    assert.match(String(preflight.headers.vary), /origin/i);

    const call = await server.app.inject({
      method: 'POST',
      url: '/api/gchat.get',
      headers: { origin: 'http://localhost:5173', 'content-type': 'application/json' },
      payload: '{}',
    });
    assert.equal(call.json().code, 0);
    assert.equal(call.headers['access-control-allow-origin'], 'http://localhost:5173');

    for (const origin of ['https://evil.example.com', 'https://app.example.com.evil.example', 'null']) {
      const refused = await server.app.inject({
        method: 'OPTIONS',
        url: '/api/account.info',
        headers: { origin, 'access-control-request-method': 'POST' },
      });
      assert.equal(refused.headers['access-control-allow-origin'], undefined, origin);
      const other = await server.app.inject({
        method: 'POST',
        url: '/api/gchat.get',
        headers: { origin, 'content-type': 'application/json' },
        payload: '{}',
      });
      assert.equal(other.headers['access-control-allow-origin'], undefined, origin);
    }
  } finally {
    await server.close();
  }
});

test('the demo world names its images by paths of this server, which draws each one; made absolute by --media-url on import', async () => {
  const demo = JSON.parse(readFileSync(new URL('../worlds/demo.json', import.meta.url), 'utf8')) as World;
  const images = [...demo.item_protos!.map((p) => p.image), ...demo.users!.flatMap((u) => [u.avatar, u.profile_cover])].filter(
    (image): image is string => image !== undefined,
  );
  assert.ok(images.length > 200);
  assert.deepEqual(
    images.filter((image) => !/^\/media\/demo\/[a-z-]+\/[a-z0-9-]+\.svg$/.test(image)),
    [],
  );
  const server = await startTestServer();
  try {
    for (const image of new Set(images)) {
      const answer = await server.app.inject({ method: 'GET', url: image });
      assert.equal(answer.statusCode, 200, image);
      assert.equal(answer.headers['content-type'], 'image/svg+xml');
      assert.match(answer.body, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"[^]*<\/svg>$/);
      assert.doesNotMatch(answer.body, /<script|on\w+=/);
    }
    for (const bad of ['/media/demo/cards/../x.svg', '/media/demo/cards/X.svg', '/media/demo/cards/a.png', '/media/demo/a%3Cb.svg'])
      assert.equal((await server.app.inject({ method: 'GET', url: bad })).statusCode, 404, bad);
  } finally {
    await server.close();
  }

  const location = await newDatabaseLocation();
  // Opened first: on PostgreSQL that creates the test's schema the command imports into.
  const db = await openDatabase(location.url, { schema: location.schema, secretKey: location.secretKey });
  try {
    const env = { ...processDatabaseEnv(location), MEDIA_URL: 'https://media.example.org/' };
    const imported = await runCli(['import', fileURLToPath(new URL('../worlds/demo.json', import.meta.url))], env);
    assert.equal(imported.code, 0, imported.stderr);
    const alice = await db.kysely.selectFrom('users').select(['avatar']).where('user_id', '=', 1).executeTakeFirstOrThrow();
    assert.equal(alice.avatar, 'https://media.example.org/media/demo/avatars/alice.svg');
  } finally {
    await db.close();
    await location.dispose();
  }
});
