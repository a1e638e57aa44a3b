import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { WebSocket } from 'ws';
import { Redis } from 'ioredis';
import { MemoryCounterStore } from '../src/infra/counters.js';
import { grantItems } from '../src/inventory/grants.js';
import { REDIS_URL, startTestServer, type TestServer } from './helpers.js';
import { catalogWorld, user } from './item-fixtures.js';
import { listen, transportWorld, wire } from './transport-support.js';
import { missing } from './components.js';

/**
 * What one client address may take of the server: per-address tables stay bounded however
 * many addresses a flood brings, connections per address are capped with a clean refusal,
 * WebSocket connects count as requests, and answers weigh by their size.
 */

/** Opens a raw TCP connection from `localAddress` (any 127.x address reaches the server on loopback). */
function rawConnection(
  url: string,
  localAddress = '127.0.0.1',
): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = connect({ port: Number(port), host: hostname, localAddress }, () => resolve({ socket, received: () => text, closed }));
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('error', reject);
  });
}

/** GET over a new connection from `localAddress`. */
function getFrom(url: string, localAddress: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress, agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Opens a WebSocket; resolves with it once open, or with the HTTP status that refused it. */
function openSocket(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ socket?: WebSocket; status?: number; body?: any; error?: string }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url.replace('http', 'ws') + '/ws?subs=gchat', { headers });
    socket.once('open', () => resolve({ socket }));
    socket.once('unexpected-response', (_req, res) => {
      let text = '';
      const done = () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: the body stays the text
        }
        resolve({ status: res.statusCode, body });
      };
      res.on('data', (c) => (text += c));
      res.on('end', done);
      res.on('close', done);
    });
    socket.once('error', (error) => resolve({ error: error.message }));
  });
}

describe('per-address tables are bounded', () => {
  for (const redis of [false, true]) {
    test(
      `unique forwarded addresses never hold more entries than the table has slots (${redis ? 'Redis' : 'memory'})`,
      { skip: redis && missing.redis },
      async () => {
        const slots = 64;
        const server = await startTestServer({ redis, config: { trustProxy: true, addressSlots: slots } });
        try {
          for (let batch = 0; batch < 10; batch++)
            await Promise.all(
              Array.from({ length: 50 }, (_, i) =>
                server
                  .call('gchat.get', {}, { headers: { 'x-forwarded-for': `10.${batch}.${i}.7` } })
                  .then((a) => assert.equal(a.body.code, 0)),
              ),
            );
          // IPv6 clients count by their /64: a host rotating through its addresses is one client.
          for (let i = 0; i < 20; i++)
            await server.call('gchat.get', {}, { headers: { 'x-forwarded-for': `2001:db8:1:2::${i.toString(16)}` } });
          if (redis) {
            const client = new Redis(REDIS_URL);
            try {
              const keys = await client.keys(`${server.location.redisPrefix}count:rl:ip:*`);
              assert.ok(keys.length > 0 && keys.length <= slots, `${keys.length} keys`);
            } finally {
              client.disconnect();
            }
          } else {
            const counters = server.services.counters as MemoryCounterStore;
            assert.ok(counters.size > 0 && counters.size <= slots, `${counters.size} entries`);
          }
        } finally {
          await server.close();
        }
      },
    );
  }

  test('a host rotating through the addresses of its IPv6 /64 is held to one budget', async () => {
    const server = await startTestServer({ config: { trustProxy: true, rateLimitPerIp: { max: 5, windowSeconds: 60 } } });
    try {
      const codes: number[] = [];
      for (let i = 1; i <= 7; i++)
        codes.push((await server.call('gchat.get', {}, { headers: { 'x-forwarded-for': `2001:db8:5:6::${i}` } })).body.code);
      assert.deepEqual(codes, [0, 0, 0, 0, 0, 7, 7]);
      assert.equal((await server.call('gchat.get', {}, { headers: { 'x-forwarded-for': '2001:db8:5:7::1' } })).body.code, 0);
    } finally {
      await server.close();
    }
  });
});

describe('connections per address', () => {
  let server: TestServer;
  let url: string;
  before(async () => {
    server = await startTestServer({ world: transportWorld(), config: { maxConnectionsPerIp: 5 } });
    url = await listen(server);
  });
  after(() => server.close());

  test('past the cap a new connection is refused with code 7, others are served, and a closed one frees its place', async () => {
    const held = await Promise.all(Array.from({ length: 5 }, () => rawConnection(url, '127.0.0.3')));
    const refused = await rawConnection(url, '127.0.0.3');
    await refused.closed;
    const answer = refused.received();
    assert.match(answer, /^HTTP\/1\.1 429 /);
    assert.deepEqual(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), {
      code: 7,
      description: 'too many connections from this address',
      data: { retry_after: 1 },
    });
    // Another client is not affected.
    assert.equal((await getFrom(`${url}/api/gchat.get`, '127.0.0.4')).body.code, 0);
    held[0]!.socket.destroy();
    await held[0]!.closed;
    // The server frees the place once it sees the connection close.
    let code = 7;
    for (let tries = 0; tries < 50 && code === 7; tries++) {
      code = (await getFrom(`${url}/api/gchat.get`, '127.0.0.3')).body.code;
      if (code === 7) await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(code, 0);
    for (const connection of held) connection.socket.destroy();
  });
});

describe('WebSockets behind a proxy', () => {
  test('open WebSockets count against the connection cap of their client address', async () => {
    const server = await startTestServer({ world: transportWorld(), config: { trustProxy: true, maxConnectionsPerIp: 3 } });
    const sockets: WebSocket[] = [];
    try {
      const url = await listen(server);
      const from = (ip: string) => ({ 'x-forwarded-for': ip });
      for (let i = 0; i < 3; i++) {
        const opened = await openSocket(url, from('203.0.113.5'));
        assert.ok(opened.socket, `socket ${i + 1}: ${JSON.stringify(opened)}`);
        sockets.push(opened.socket!);
      }
      const refused = await openSocket(url, from('203.0.113.5'));
      assert.equal(refused.status, 429);
      assert.deepEqual(refused.body, { code: 7, description: 'too many connections from this address', data: { retry_after: 1 } });
      const other = await openSocket(url, from('203.0.113.6'));
      assert.ok(other.socket);
      sockets.push(other.socket!);
      const closed = new Promise((r) => sockets[0]!.once('close', r));
      sockets[0]!.close();
      await closed;
      // The server frees the place when it sees the close.
      let reopened: Awaited<ReturnType<typeof openSocket>> = {};
      for (let tries = 0; tries < 50 && !reopened.socket; tries++) {
        reopened = await openSocket(url, from('203.0.113.5'));
        if (!reopened.socket) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(reopened.socket);
      sockets.push(reopened.socket!);
    } finally {
      for (const socket of sockets) socket.terminate();
      await server.close();
    }
  });

  test('WebSocket connects count in the request limit of their address', async () => {
    const server = await startTestServer({
      world: transportWorld(),
      config: { trustProxy: true, rateLimitPerIp: { max: 3, windowSeconds: 60 } },
    });
    const sockets: WebSocket[] = [];
    try {
      const url = await listen(server);
      const headers = { 'x-forwarded-for': '203.0.113.8' };
      for (let i = 0; i < 3; i++) sockets.push((await openSocket(url, headers)).socket!);
      assert.ok(sockets.every(Boolean));
      const refused = await openSocket(url, headers);
      assert.equal(refused.status, 429);
      assert.equal(refused.body.code, 7);
      const api = await wire(`${url}/api/gchat.get`, { headers });
      assert.equal(api.body.code, 7);
    } finally {
      for (const socket of sockets) socket?.terminate();
      await server.close();
    }
  });

  test('requests no method answers count in the request limit of their address', async () => {
    const server = await startTestServer({
      world: transportWorld(),
      config: { trustProxy: true, rateLimitPerIp: { max: 5, windowSeconds: 60 } },
    });
    try {
      const url = await listen(server);
      const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });
      const methodless = [
        ['/api/users%2', 'GET', 200, 5],
        ['/api/' + 'x'.repeat(201), 'GET', 200, 5],
        ['/api/a/b', 'POST', 200, 5],
        ['/api/users.get?user_ids=1', 'PUT', 200, 2],
        ['/favicon.ico', 'GET', 404, 5],
      ] as const;
      for (const [path, method, status, code] of methodless) {
        const answer = await wire(url + path, { method, ...from('203.0.113.9') });
        assert.deepEqual([answer.status, answer.body.code], [status, code], `${method} ${path}`);
      }
      // The five above spent the address's budget: every kind of request is now refused, methodless or not.
      for (const [path, method] of [...methodless.map(([p, m]) => [p, m] as const), ['/api/gchat.get', 'GET'] as const]) {
        const refused = await wire(url + path, { method, ...from('203.0.113.9') });
        assert.equal(refused.status, 429, `${method} ${path}`);
        assert.equal(refused.body.code, 7);
        assert.ok(Number(refused.headers.get('retry-after')) > 0);
        assert.ok(refused.headers.get('x-request-id'));
      }
      // Another address is untouched; one that is not an IP address is refused as on every path.
      assert.equal((await wire(`${url}/api/users%2`, from('203.0.113.10'))).body.code, 5);
      assert.deepEqual((await wire(`${url}/api/users%2`, from('not-an-address'))).body, {
        code: 2,
        description: 'X-Forwarded-For: the client address is not an IP address',
      });
    } finally {
      await server.close();
    }
  });
});

describe('answers weigh by their size', () => {
  let server: TestServer;
  let url: string;
  before(async () => {
    server = await startTestServer({
      world: { ...catalogWorld, users: [user(1), user(2)] },
      config: { trustProxy: true, rateLimitPerIp: { max: 60, windowSeconds: 60 } },
    });
    await grantItems(server.services, { userId: 1, itemProtoId: 101, copies: 3000 });
    url = await listen(server);
  });
  after(() => server.close());

  test('an address asking for large inventories runs out of its budget long before one asking for small answers', async () => {
    const flooder = { 'x-forwarded-for': '203.0.113.20' };
    let served = 0;
    let bytes = 0;
    for (let i = 0; i < 60; i++) {
      const answer = await wire(`${url}/api/inventory.get?user_id=1`, { headers: flooder });
      if (answer.body.code !== 0) {
        assert.equal(answer.body.code, 7);
        break;
      }
      served++;
      bytes += answer.text.length;
    }
    const perAnswer = bytes / served;
    assert.ok(perAnswer > 3 * 64 * 1024, `answers of ${perAnswer} bytes`);
    // Each answer costs one request plus one per 64 KiB it sends.
    const expected = Math.ceil(60 / (1 + Math.floor(perAnswer / (64 * 1024))));
    assert.ok(served >= expected - 1 && served <= expected + 1, `served ${served}, expected about ${expected}`);
    // Another address is unaffected.
    assert.equal((await wire(`${url}/api/users.get?user_ids=1`, { headers: { 'x-forwarded-for': '203.0.113.21' } })).body.code, 0);
  });
});

describe('costly answers are charged before they are built', () => {
  for (const redis of [false, true]) {
    test(
      `of ten requests at once for a 3,000-item inventory, the two the budget pays for are answered, the others refused (${redis ? 'Redis' : 'memory'})`,
      { skip: redis && missing.redis },
      async () => {
        const server = await startTestServer({
          redis,
          world: { ...catalogWorld, users: [user(1)] },
          config: { trustProxy: true, rateLimitPerIp: { max: 60, windowSeconds: 60 } },
        });
        try {
          await grantItems(server.services, { userId: 1, itemProtoId: 101, copies: 3000 });
          const url = await listen(server);
          const headers = { 'x-forwarded-for': '203.0.113.30' };
          // Each answer is estimated at 22 requests (3,000 items of about 500 bytes, a request per
          // 64 KiB): with the ten requests themselves, two fit in 60 and a third never does.
          const answers = await Promise.all(Array.from({ length: 10 }, () => wire(`${url}/api/inventory.get?user_id=1`, { headers })));
          assert.deepEqual(answers.map((answer) => answer.body.code).sort(), [0, 0, 7, 7, 7, 7, 7, 7, 7, 7]);
          for (const answer of answers) {
            if (answer.body.code === 0) assert.equal(answer.body.data.count, 3000);
            else assert.equal(answer.status, 429);
          }
        } finally {
          await server.close();
        }
      },
    );
  }

  test('an inventory the caller may not read is refused for its privacy, never for its size', async () => {
    const server = await startTestServer({
      world: { ...catalogWorld, users: [user(1), user(2, { inventory_privacy: 'nobody' })] },
      config: { trustProxy: true, rateLimitPerIp: { max: 60, windowSeconds: 60 } },
    });
    try {
      await grantItems(server.services, { userId: 1, itemProtoId: 101, copies: 3000 });
      await grantItems(server.services, { userId: 2, itemProtoId: 101, copies: 3000 });
      const url = await listen(server);
      const headers = { 'x-forwarded-for': '203.0.113.31' };
      for (let i = 0; i < 45; i++) assert.equal((await wire(`${url}/api/users.get?user_ids=1`, { headers })).body.code, 0);
      // 15 requests left: not enough for either inventory (22 each).
      assert.equal((await wire(`${url}/api/inventory.get?user_id=2`, { headers })).body.code, 701);
      assert.equal((await wire(`${url}/api/inventory.get?user_id=1`, { headers })).body.code, 7);
      assert.equal((await wire(`${url}/api/users.get?user_ids=1`, { headers })).body.code, 0);
    } finally {
      await server.close();
    }
  });
});
