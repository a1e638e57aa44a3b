import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer } from './helpers.js';
import { ALICE, BOB, CAPTCHA_ALWAYS, PASSWORD, assertSession, authWorld, signin } from './auth-fixtures.js';
import { missing } from './components.js';

const WRONG = 'definitely the wrong password';

describe('sign-in defence', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ world: await authWorld() });
  });
  after(() => server.close());

  /** Every test starts in fresh counting windows. */
  const freshWindows = () => server.clock.advance(2 * 3600);

  test('after 5 failures for one e-mail a captcha is required, from any address', async () => {
    freshWindows();
    for (let i = 0; i < 5; i++) assert.equal((await signin(server, BOB.email, WRONG, {}, { ip: `10.20.0.${i}` })).body.code, 1);
    const refused = await signin(server, BOB.email, PASSWORD, {}, { ip: '10.20.1.1' });
    assert.equal(refused.status, 200);
    assert.equal(refused.body.code, 8);
    assert.match(refused.body.description!, /captcha/);
    assert.equal((await signin(server, BOB.email, PASSWORD, { captcha: 'not-solved' }, { ip: '10.20.1.1' })).body.code, 8);
    assert.equal((await signin(server, BOB.email, WRONG, { captcha: 'test-pass' }, { ip: '10.20.1.1' })).body.code, 1);
    assertSession((await signin(server, BOB.email, PASSWORD, { captcha: 'test-pass' }, { ip: '10.20.1.1' })).body.data);
    // Other accounts are not affected.
    assertSession((await signin(server, ALICE.email, PASSWORD, {}, { ip: '10.20.1.1' })).body.data);
    // The window ends after 15 minutes.
    server.clock.advance(15 * 60);
    assertSession((await signin(server, BOB.email, PASSWORD, {}, { ip: '10.20.1.1' })).body.data);
  });

  test('right passwords and refused attempts do not count as failures', async () => {
    freshWindows();
    for (let i = 0; i < 4; i++) assert.equal((await signin(server, BOB.email, WRONG, {}, { ip: '10.21.0.1' })).body.code, 1);
    // Each right password comes from a new address (a known one would be judged on its own).
    for (let i = 0; i < 3; i++) assertSession((await signin(server, BOB.email, PASSWORD, {}, { ip: `10.21.1.${i}` })).body.data);
    assert.equal((await signin(server, BOB.email, WRONG, {}, { ip: '10.21.0.1' })).body.code, 1);
    for (let i = 0; i < 3; i++) assert.equal((await signin(server, BOB.email, PASSWORD, {}, { ip: `10.21.2.${i}` })).body.code, 8);
    // Still exactly 5 failures: the captcha is needed, and a solved one lets the right password in.
    assertSession((await signin(server, BOB.email, PASSWORD, { captcha: 'test-pass' }, { ip: '10.21.3.1' })).body.data);
  });

  test('after 20 failures from one address a captcha is required there, before the password is checked', async () => {
    freshWindows();
    for (let i = 0; i < 20; i++) {
      const answer = await signin(server, `nobody${i}@example.com`, WRONG, {}, { ip: '10.22.0.1' });
      assert.equal(answer.body.code, 1, `failure ${i + 1}`);
    }
    // Even the right password of an account never attacked is refused without a captcha.
    assert.equal((await signin(server, ALICE.email, PASSWORD, {}, { ip: '10.22.0.1' })).body.code, 8);
    assertSession((await signin(server, ALICE.email, PASSWORD, { captcha: 'test-pass' }, { ip: '10.22.0.1' })).body.data);
    assertSession((await signin(server, ALICE.email, PASSWORD, {}, { ip: '10.22.0.2' })).body.data);
  });

  test('IPv4-mapped IPv6 counts as the same address', async () => {
    freshWindows();
    for (let i = 0; i < 20; i++) {
      const ip = i % 2 === 0 ? '10.23.0.1' : '::ffff:10.23.0.1';
      assert.equal((await signin(server, `nobody${i}@example.com`, WRONG, {}, { ip })).body.code, 1);
    }
    assert.equal((await signin(server, ALICE.email, PASSWORD, {}, { ip: '10.23.0.1' })).body.code, 8);
  });

  test('accounts marked captcha "always" need one on every sign-in', async () => {
    freshWindows();
    assert.equal((await signin(server, CAPTCHA_ALWAYS.email, PASSWORD, {}, { ip: '10.24.0.1' })).body.code, 8);
    assert.equal((await signin(server, CAPTCHA_ALWAYS.email, PASSWORD, { captcha: '' }, { ip: '10.24.0.1' })).body.code, 8);
    // A wrong password answers 1, as for any account: the mark is not disclosed to guessers.
    assert.equal((await signin(server, CAPTCHA_ALWAYS.email, WRONG, {}, { ip: '10.24.0.1' })).body.code, 1);
    assert.equal((await signin(server, CAPTCHA_ALWAYS.email, WRONG, { captcha: 'test-pass' }, { ip: '10.24.0.1' })).body.code, 1);
    assertSession((await signin(server, CAPTCHA_ALWAYS.email, PASSWORD, { captcha: 'test-pass' }, { ip: '10.24.0.1' })).body.data);
  });

  test('a burst of simultaneous guesses gets no more than 5 past the password check', async () => {
    freshWindows();
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => signin(server, BOB.email, WRONG, {}, { ip: `10.25.0.${i}` })));
    const codes = answers.map((a) => a.body.code);
    assert.equal(codes.filter((c) => c === 1).length, 5, codes.join(','));
    assert.equal(codes.filter((c) => c === 8).length, 25, codes.join(','));
  });

  test('past 100 failures for one e-mail in an hour, sign-in answers 7 with retry_after', async () => {
    freshWindows();
    const email = 'target@example.com';
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => signin(server, email, WRONG, { captcha: 'test-pass' }, { ip: `10.26.${batch}.${i}` })),
      );
      assert.deepEqual(
        answers.map((a) => a.body.code),
        Array(10).fill(1),
        `batch ${batch}`,
      );
    }
    server.clock.advance(60);
    const refused = await signin(server, email, WRONG, { captcha: 'test-pass' }, { ip: '10.26.20.1' });
    assert.equal(refused.body.code, 7);
    assert.equal(refused.status, 429);
    const retryAfter = refused.body.data.retry_after;
    assert.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 3600 - 60, String(retryAfter));
    assert.equal(refused.headers['retry-after'], String(retryAfter));
    // Other e-mails are unaffected; this one opens again when the hour is over.
    assertSession((await signin(server, ALICE.email, PASSWORD, {}, { ip: '10.26.20.2' })).body.data);
    server.clock.advance(retryAfter);
    assert.equal((await signin(server, email, WRONG, {}, { ip: '10.26.20.3' })).body.code, 1);
  });
});

describe('captcha verifiers', () => {
  test('with no verifier configured a required captcha cannot be passed', async () => {
    const server = await startTestServer({ world: await authWorld(), config: { captcha: { testVerifier: false } } });
    try {
      assert.equal((await signin(server, CAPTCHA_ALWAYS.email, PASSWORD, { captcha: 'test-pass' })).body.code, 8);
      // Sign-in without a captcha requirement works as usual.
      assertSession((await signin(server, ALICE.email)).body.data);
    } finally {
      await server.close();
    }
  });

  describe('the siteverify verifier', () => {
    let verifier: Server;
    let url: string;
    const received: Record<string, string>[] = [];
    let behaviour: 'answer' | 'error' | 'garbage' = 'answer';

    before(async () => {
      verifier = createServer(async (request: IncomingMessage, response) => {
        let body = '';
        for await (const chunk of request) body += chunk;
        const form = Object.fromEntries(new URLSearchParams(body));
        received.push({ ...form, method: request.method!, type: String(request.headers['content-type']) });
        if (behaviour === 'error') return response.writeHead(500).end('{"success":true}');
        if (behaviour === 'garbage') return response.writeHead(200, { 'content-type': 'application/json' }).end('{success');
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ success: form.secret === 'site-secret' && form.response === 'solved-by-a-human' }));
      });
      await new Promise<void>((resolve) => verifier.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/siteverify`;
    });
    after(() => new Promise<void>((resolve) => verifier.close(() => resolve())));

    test('posts secret, response and remoteip form-encoded and honours success', async () => {
      const server = await startTestServer({
        world: await authWorld(),
        config: { captcha: { verifyUrl: url, secret: 'site-secret', testVerifier: false } },
      });
      try {
        received.length = 0;
        behaviour = 'answer';
        assert.equal((await signin(server, CAPTCHA_ALWAYS.email, PASSWORD, {}, { ip: '10.30.0.1' })).body.code, 8);
        assert.equal(received.length, 0, 'no captcha sent, nothing to verify');
        const accepted = await signin(server, CAPTCHA_ALWAYS.email, PASSWORD, { captcha: 'solved-by-a-human' }, { ip: '10.30.0.1' });
        assertSession(accepted.body.data);
        assert.deepEqual(received[0], {
          secret: 'site-secret',
          response: 'solved-by-a-human',
          remoteip: '10.30.0.1',
          method: 'POST',
          type: 'application/x-www-form-urlencoded',
        });
        assert.equal((await signin(server, CAPTCHA_ALWAYS.email, PASSWORD, { captcha: 'a-robot' }, { ip: '10.30.0.1' })).body.code, 8);
        // The test value means nothing to this verifier.
        assert.equal((await signin(server, CAPTCHA_ALWAYS.email, PASSWORD, { captcha: 'test-pass' }, { ip: '10.30.0.1' })).body.code, 8);
        behaviour = 'error';
        assert.equal((await signin(server, CAPTCHA_ALWAYS.email, PASSWORD, { captcha: 'solved-by-a-human' })).body.code, 8);
        behaviour = 'garbage';
        assert.equal((await signin(server, CAPTCHA_ALWAYS.email, PASSWORD, { captcha: 'solved-by-a-human' })).body.code, 8);
      } finally {
        behaviour = 'answer';
        await server.close();
      }
    });

    test('an unreachable verifier accepts nothing', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const server = await startTestServer({
        world: await authWorld(),
        config: { captcha: { verifyUrl: `http://127.0.0.1:${port}/siteverify`, secret: 'site-secret', testVerifier: false } },
      });
      try {
        assert.equal((await signin(server, CAPTCHA_ALWAYS.email, PASSWORD, { captcha: 'solved-by-a-human' })).body.code, 8);
      } finally {
        await server.close();
      }
    });
  });
});

describe('sign-in counters with Redis', { skip: missing.redis }, () => {
  test('failures counted in one process require a captcha in another', async () => {
    const first = await startTestServer({ world: await authWorld(), redis: true });
    const second = await startTestServer({ redis: true, location: first.location });
    try {
      // Redis outlives test runs: names no earlier run has used.
      const run = randomBytes(4).toString('hex');
      const email = `nobody-${run}@example.com`;
      for (let i = 0; i < 5; i++) assert.equal((await signin(first, email, WRONG, {}, { ip: `10.40.${i}.1` })).body.code, 1);
      assert.equal((await signin(second, email, WRONG, {}, { ip: '10.40.9.1' })).body.code, 8);
      assert.equal((await signin(second, email, WRONG, { captcha: 'test-pass' }, { ip: '10.40.9.1' })).body.code, 1);
    } finally {
      await second.close();
      await first.close();
    }
  });
});
