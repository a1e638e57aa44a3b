import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { SIGNUP_LIMITS } from '../src/auth/defence.js';
import { RESET_REQUEST_LIMITS } from '../src/accounts/reset.js';
import { startTestServer, type TestServer } from './helpers.js';
import { BOB, CAPTCHA_ALWAYS, PASSWORD, assertSession, authWorld, signin } from './auth-fixtures.js';
import { missing } from './components.js';

const WRONG = 'definitely the wrong password';

/**
 * A siteverify endpoint on loopback that behaves as reCAPTCHA, hCaptcha and Turnstile do: it
 * hands out solved captchas, and accepts each one once.
 */
class OnceOnlyVerifier {
  private readonly unused = new Set<string>();
  /** How many times each value was asked about. */
  readonly asked = new Map<string, number>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<OnceOnlyVerifier> {
    const holder: { verifier?: OnceOnlyVerifier } = {};
    const server = createServer(async (request: IncomingMessage, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      const form = new URLSearchParams(body);
      const success = holder.verifier!.spend(form.get('response') ?? '') && form.get('secret') === 'site-secret';
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/siteverify`;
    holder.verifier = new OnceOnlyVerifier(server, url);
    return holder.verifier;
  }

  /** A captcha as a human solving one gets it. */
  solve(): string {
    const value = `solved-${randomBytes(8).toString('hex')}`;
    this.unused.add(value);
    return value;
  }

  private spend(value: string): boolean {
    this.asked.set(value, (this.asked.get(value) ?? 0) + 1);
    return this.unused.delete(value);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('a solved captcha is verified once per request', () => {
  let verifier: OnceOnlyVerifier;
  let server: TestServer;
  before(async () => {
    verifier = await OnceOnlyVerifier.start();
    server = await startTestServer({
      world: await authWorld(),
      config: { captcha: { verifyUrl: verifier.url, secret: 'site-secret', testVerifier: false } },
    });
  });
  after(async () => {
    await server.close();
    await verifier.close();
  });

  test('an account marked "always captcha", past its failures, signs in from a new address with one solved captcha', async () => {
    for (let i = 1; i <= 5; i++)
      assert.equal((await signin(server, CAPTCHA_ALWAYS.email, WRONG, {}, { ip: `10.150.0.${i}` })).body.code, 1, `failure ${i}`);
    const solved = verifier.solve();
    const answer = await signin(server, CAPTCHA_ALWAYS.email, PASSWORD, { captcha: solved }, { ip: '10.150.1.1' });
    assertSession(answer.body.data);
    assert.equal(verifier.asked.get(solved), 1);
    // The verifier accepts a value once: the same captcha again is refused.
    assert.equal((await signin(server, CAPTCHA_ALWAYS.email, PASSWORD, { captcha: solved }, { ip: '10.150.1.2' })).body.code, 8);
  });
});

describe('sign-up and reset limits count an IPv6 address by its /64', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ config: { trustProxy: true } });
  });
  after(() => server.close());

  let serial = 0;
  const viaProxy = (address: string) => ({ ip: '127.0.0.1', headers: { 'x-forwarded-for': address } });
  const signup = (address: string, captcha?: string) =>
    server.call(
      'auth.signup',
      { email: `newcomer${++serial}@example.com`, password: 'a long enough secret', nick: 'Newcomer', captcha },
      viaProxy(address),
    );

  test('sign-ups from many addresses of one /64 meet the captcha and the ceiling as one address does', async () => {
    const codes: number[] = [];
    for (let i = 0; i < SIGNUP_LIMITS.ceilingAddressAttempts + 2; i++)
      codes.push((await signup(`2001:db8:5:6::${(i + 1).toString(16)}`, i >= 4 ? 'test-pass' : undefined)).body.code);
    assert.deepEqual(codes, [0, 0, 0, 8, ...Array(SIGNUP_LIMITS.ceilingAddressAttempts - 3).fill(0), 7]);
    assert.equal((await signup('2001:db8:5:7::1')).body.code, 0, 'another /64 is not affected');
  });

  test('password reset requests from many addresses of one /64 meet the limit as one address does', async () => {
    const request = (address: string) =>
      server.call('auth.requestPasswordReset', { email: `nobody${++serial}@example.com` }, viaProxy(address));
    const codes: number[] = [];
    for (let i = 0; i <= RESET_REQUEST_LIMITS.perAddress; i++) codes.push((await request(`2001:db8:9:a:${i + 1}::1`)).body.code);
    assert.deepEqual(codes, [...Array(RESET_REQUEST_LIMITS.perAddress).fill(0), 7]);
    assert.equal((await request('2001:db8:9:b::1')).body.code, 0, 'another /64 is not affected');
  });
});

/**
 * Without a captcha verifier, past the budgets: an attempt that must wait for its address's turn
 * takes no turn of the account's, which stays free for its owner.
 */
async function attackerWaitingOnItsAddress(server: TestServer, run: string): Promise<void> {
  const attacker = '10.160.0.1';
  for (let i = 0; i <= 20; i++)
    assert.equal((await signin(server, `nobody-${run}-${i}@example.com`, WRONG, {}, { ip: attacker })).body.code, 1, `failure ${i + 1}`);
  for (let i = 1; i <= 5; i++) assert.equal((await signin(server, BOB.email, WRONG, {}, { ip: `10.161.0.${i}` })).body.code, 1);
  for (let i = 0; i < 3; i++) assert.equal((await signin(server, BOB.email, WRONG, {}, { ip: attacker })).body.code, 7);
  assertSession((await signin(server, BOB.email, PASSWORD, {}, { ip: '10.162.0.1' })).body.data);
}

describe('without a captcha verifier a refused attempt takes no turn', () => {
  test('in memory', async () => {
    const server = await startTestServer({ world: await authWorld(), config: { captcha: { testVerifier: false } } });
    try {
      await attackerWaitingOnItsAddress(server, 'memory');
    } finally {
      await server.close();
    }
  });

  test('with Redis', { skip: missing.redis }, async () => {
    const server = await startTestServer({ world: await authWorld(), redis: true, config: { captcha: { testVerifier: false } } });
    try {
      // Redis outlives test runs: names no earlier run has used.
      await attackerWaitingOnItsAddress(server, randomBytes(4).toString('hex'));
    } finally {
      await server.close();
    }
  });
});
