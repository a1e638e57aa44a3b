import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { startTestServer, type TestServer } from './helpers.js';
import { listen, transportWorld, wire } from './transport-support.js';

/** Smaller leaks: secrets in logged URLs under any spelling, and answers without the JSON envelope. */

describe('log redaction', () => {
  test('parameters whose decoded names are secrets are redacted from the log, however they are spelled', async () => {
    const logLines: string[] = [];
    const server = await startTestServer({ world: transportWorld(), logLines, logLevel: 'info', config: { accessLog: 1 } });
    try {
      const url =
        '/api/auth.signin?email=alice%40example.com&pass%77ord=hunter2-in-clear&access%5Ftoken=tok-in-clear-123&PASSWORD=upper-in-clear&my_secret=s3cr3t-in-clear';
      const answer = await server.app.inject({ method: 'POST', url });
      assert.equal(answer.json().code, 1);
      const logged = logLines.join('\n');
      assert.ok(logged.includes('pass%77ord=[redacted]'), logged);
      for (const secret of ['hunter2-in-clear', 'tok-in-clear-123', 'upper-in-clear', 's3cr3t-in-clear'])
        assert.ok(!logged.includes(secret), secret);
      assert.ok(logged.includes('email=alice%40example.com'), 'other parameters stay');
    } finally {
      await server.close();
    }
  });
});

describe('every HTTP answer has a JSON envelope', () => {
  let server: TestServer;
  let url: string;
  before(async () => {
    server = await startTestServer({ world: transportWorld() });
    url = await listen(server);
  });
  after(() => server.close());

  test('GET /ws without an upgrade answers 426 with code 2', async () => {
    const answer = await wire(`${url}/ws?subs=gchat`);
    assert.equal(answer.status, 426);
    assert.equal(answer.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.deepEqual(answer.body, { code: 2, description: 'this is the WebSocket endpoint: connect with an Upgrade: websocket request' });
  });

  test('an Expect header the server does not meet answers 417 with code 2', async () => {
    const answer = await new Promise<{ status: number; type: string; body: any }>((resolve, reject) => {
      const req = httpRequest(`${url}/api/gchat.get`, { headers: { expect: 'foo' } }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, type: String(res.headers['content-type']), body: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(answer.status, 417);
    assert.equal(answer.type, 'application/json; charset=utf-8');
    assert.deepEqual(answer.body, { code: 2, description: 'unsupported Expect header: only 100-continue is understood' });
  });
});
