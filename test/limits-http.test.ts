import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { startTestServer, type TestServer } from './helpers.js';
import { listen, transportWorld, wire } from './transport-support.js';
import { SERVER_SETTINGS, loadConfig, parseArgsOptions } from '../src/cli/settings.js';

/**
 * Limits against abuse over a real listening socket: body, header and parameter sizes, idle
 * connections, keep-alive and slow requests. Every refusal that gets an answer is the API's
 * envelope with code 2.
 */

const LIMITS = {
  bodyLimit: 4096,
  http: { maxHeaderBytes: 2048, connectionTimeoutMs: 120_000, keepAliveTimeoutMs: 120_000, requestTimeoutMs: 120_000 },
};

/** Short enough to wait for, long enough that a loaded machine does not reach them by accident. */
const SHORT_TIMEOUTS = { connectionTimeoutMs: 2000, keepAliveTimeoutMs: 2000, requestTimeoutMs: 5000 };

/** A raw TCP connection to the server; resolves with everything it received once the server closes it. */
function rawConnection(url: string): { socket: Socket; closed: Promise<string> } {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString()));
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
  socket.on('error', () => {});
  return { socket, closed };
}

/** The status line and JSON body of the one answer in `raw`. */
function parseAnswer(raw: string): { status: number; body: any } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1]);
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  return { status, body: JSON.parse(body) };
}

describe('limits over a real socket', () => {
  let server: TestServer;
  let url: string;
  before(async () => {
    server = await startTestServer({ world: transportWorld(), config: { ...LIMITS, http: { ...LIMITS.http } } });
    url = await listen(server);
  });
  after(() => server.close());

  test('a body over the limit answers code 2 with HTTP 413, with a length given or streamed in chunks', async () => {
    const big = JSON.stringify({ message: 'x'.repeat(LIMITS.bodyLimit) });
    const declared = await wire(`${url}/api/gchat.get`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    assert.equal(declared.status, 413);
    assert.equal(declared.body.code, 2);
    const chunks = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 8; i++) controller.enqueue(new TextEncoder().encode(i === 0 ? '{"message":"' : 'y'.repeat(1024)));
        controller.close();
      },
    });
    const streamed = await wire(`${url}/api/gchat.get`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: chunks,
      duplex: 'half',
    } as RequestInit);
    assert.equal(streamed.status, 413);
    assert.equal(streamed.body.code, 2);
  });

  test('headers or a query string over the limit answer code 2 with HTTP 431', async () => {
    const header = rawConnection(url);
    header.socket.write(`GET /api/gchat.get HTTP/1.1\r\nHost: x\r\nX-Filler: ${'h'.repeat(LIMITS.http.maxHeaderBytes)}\r\n\r\n`);
    const byHeader = parseAnswer(await header.closed);
    assert.deepEqual(byHeader, { status: 431, body: { code: 2, description: 'the request line and headers are too large' } });

    const query = await wire(`${url}/api/users.get?user_ids=${'1,'.repeat(LIMITS.http.maxHeaderBytes)}1`);
    assert.equal(query.status, 431);
    assert.equal(query.body.code, 2);
  });

  test('parameters: text over its length answers 2 naming it, a set over 50 answers 6, repeated keys answer 2', async () => {
    const token = (
      await wire(`${url}/api/auth.signin`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'alice@example.com', password: 'transport-test-password' }),
      })
    ).body.data.access_token;
    const long = await wire(`${url}/api/gchat.send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ message: 'm'.repeat(3000) }),
    });
    assert.equal(long.body.code, 2);
    assert.match(long.body.description, /message/);
    const many = await wire(`${url}/api/users.get?user_ids=${Array.from({ length: 51 }, (_, i) => i + 1).join(',')}`);
    assert.equal(many.body.code, 6);
    const repeated = await wire(`${url}/api/data.searchItemProtos?count=1&count=2`);
    assert.equal(repeated.body.code, 2);
    assert.match(repeated.body.description, /count/);
  });

  test('garbage that is not HTTP answers code 2 with HTTP 400', async () => {
    const garbage = rawConnection(url);
    garbage.socket.write('\u0000\u0001 NOT HTTP AT ALL\r\n\r\n');
    assert.deepEqual(parseAnswer(await garbage.closed), { status: 400, body: { code: 2, description: 'malformed HTTP request' } });
  });
});

describe('idle and slow connections', () => {
  let server: TestServer;
  let url: string;
  before(async () => {
    server = await startTestServer({ world: transportWorld(), config: { ...LIMITS, http: { ...LIMITS.http, ...SHORT_TIMEOUTS } } });
    url = await listen(server);
  });
  after(() => server.close());

  test('a connection that sends nothing is closed', async () => {
    const idle = rawConnection(url);
    assert.equal(await idle.closed, '');
  });

  test('a request trickling in byte by byte is cut off with code 2 and HTTP 408', async () => {
    const slow = rawConnection(url);
    const request = `POST /api/gchat.get HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${LIMITS.bodyLimit - 100}\r\n\r\n{"x":"`;
    slow.socket.write(request);
    // A byte more often than the idle timeout, so only the request timeout can end it.
    const trickle = setInterval(() => slow.socket.writable && slow.socket.write('a'), SHORT_TIMEOUTS.connectionTimeoutMs / 4);
    const received = await slow.closed;
    clearInterval(trickle);
    assert.deepEqual(parseAnswer(received), { status: 408, body: { code: 2, description: 'the request did not arrive in time' } });
  });
});

describe('keep-alive', () => {
  test('a keep-alive connection is closed once it has been idle after its answer', async () => {
    // Only the keep-alive timeout is short: nothing else can close the connection.
    const http = { maxHeaderBytes: 16 * 1024, connectionTimeoutMs: 600_000, keepAliveTimeoutMs: 300, requestTimeoutMs: 600_000 };
    const server = await startTestServer({ config: { http } });
    try {
      const kept = rawConnection(await listen(server));
      kept.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
      const received = await kept.closed;
      assert.match(received, /^HTTP\/1\.1 200 OK/);
      assert.match(received, /Keep-Alive: timeout=\d+/i);
      assert.equal(received.match(/HTTP\/1\.1/g)!.length, 1);
    } finally {
      await server.close();
    }
  });
});

describe('limit settings', () => {
  test('every limit is a flag and a variable of serve', () => {
    const argv = [
      '--body-limit',
      '2048',
      '--max-header-bytes',
      '4096',
      '--connection-timeout',
      '5',
      '--keep-alive-timeout',
      '7',
      '--request-timeout',
      '9',
      '--ws-max-frame',
      '512',
    ];
    const { values } = parseArgs({ args: argv, options: parseArgsOptions(SERVER_SETTINGS), strict: true });
    const config = loadConfig(SERVER_SETTINGS, values, { WS_MAX_QUEUE: '65536', REQUEST_TIMEOUT: '99' });
    assert.equal(config.bodyLimit, 2048);
    assert.deepEqual(
      { ...config.http },
      { maxHeaderBytes: 4096, connectionTimeoutMs: 5000, keepAliveTimeoutMs: 7000, requestTimeoutMs: 9000 },
    );
    assert.equal(config.ws.maxFrameBytes, 512);
    assert.equal(config.ws.maxQueueBytes, 65536);
    assert.throws(() => loadConfig(SERVER_SETTINGS, {}, { MAX_HEADER_BYTES: '10' }), /MAX_HEADER_BYTES/);
    assert.throws(() => loadConfig(SERVER_SETTINGS, {}, { CONNECTION_TIMEOUT: '0' }), /CONNECTION_TIMEOUT/);
  });
});
