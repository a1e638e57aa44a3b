import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SIGNIN_LIMITS } from '../src/auth/defence.js';
import { defaultConfig } from '../src/config.js';
import { ALICE, BOB, PASSWORD, assertSession, authWorld } from './auth-fixtures.js';
import { wire, type WireAnswer } from './transport-support.js';
import { startProcesses, type Processes } from './race-support.js';
import { missing } from './components.js';

/**
 * Sign-in brute force from many connections at once (on PostgreSQL spread over two processes
 * sharing the database and Redis): no more guesses reach the password check than the defence
 * allows, and its counters still hold once the burst is over.
 */

const WRONG = 'definitely the wrong password';

describe('sign-in brute force from many connections', { skip: missing.redis }, () => {
  let processes: Processes;
  let urls: string[];

  before(async () => {
    processes = await startProcesses({
      world: await authWorld(),
      config: {
        rateLimit: false,
        trustProxy: true,
        http: { ...defaultConfig().http, connectionTimeoutMs: 120_000, requestTimeoutMs: 120_000 },
      },
    });
    urls = processes.urls;
  });
  after(() => processes.close());

  /** A sign-in over its own connection, from `address` (X-Forwarded-For), through `urls[index % 2]`. */
  const signin = (index: number, address: string, email: string, password: string, captcha?: string): Promise<WireAnswer> =>
    wire(`${urls[index % 2]}/api/auth.signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address, connection: 'close' },
      body: JSON.stringify({ email, password, ...(captcha ? { captcha } : {}) }),
    });

  const tally = (answers: WireAnswer[]) => {
    const codes = new Map<number, number>();
    for (const a of answers) {
      assert.ok(a.status === 200 || (a.status === 429 && a.body?.code === 7), `HTTP ${a.status}: ${a.text}`);
      codes.set(a.body.code, (codes.get(a.body.code) ?? 0) + 1);
    }
    return Object.fromEntries([...codes].sort(([a], [b]) => a - b));
  };

  test('guesses at one account from many addresses: only the allowed few reach the password check', async () => {
    const burst = 60;
    const answers = await Promise.all(Array.from({ length: burst }, (_, i) => signin(i, `10.30.${i >> 8}.${i & 255}`, BOB.email, WRONG)));
    const allowed = SIGNIN_LIMITS.captchaAfterEmailFailures;
    assert.deepEqual(tally(answers), { 1: allowed, 8: burst - allowed });
    // The counter holds: even the right password now needs the captcha, in every process.
    for (let i = 0; i < 2; i++) assert.equal((await signin(i, '10.31.0.1', BOB.email, PASSWORD)).body.code, 8);
    assertSession((await signin(0, '10.31.0.1', BOB.email, PASSWORD, 'test-pass')).body.data);
  });

  test('with solved captchas a burst stops at the hourly ceiling of failures for one e-mail', async () => {
    const email = 'target@example.com';
    const burst = SIGNIN_LIMITS.ceilingEmailFailures + 30;
    const answers = await Promise.all(
      Array.from({ length: burst }, (_, i) => signin(i, `10.32.${i >> 8}.${i & 255}`, email, WRONG, 'test-pass')),
    );
    assert.deepEqual(tally(answers), { 1: SIGNIN_LIMITS.ceilingEmailFailures, 7: burst - SIGNIN_LIMITS.ceilingEmailFailures });
    const refused = await signin(1, '10.33.0.1', email, WRONG, 'test-pass');
    assert.equal(refused.body.code, 7);
    assert.equal(refused.headers.get('retry-after'), String(refused.body.data.retry_after));
  });

  test('one address guessing many accounts at once is held to its own allowance', async () => {
    const burst = SIGNIN_LIMITS.captchaAfterIpFailures + 25;
    const address = '10.34.0.1';
    const answers = await Promise.all(Array.from({ length: burst }, (_, i) => signin(i, address, `nobody${i}@example.com`, WRONG)));
    assert.deepEqual(tally(answers), { 1: SIGNIN_LIMITS.captchaAfterIpFailures, 8: burst - SIGNIN_LIMITS.captchaAfterIpFailures });
    // That address now needs a captcha for every account; other addresses do not.
    assert.equal((await signin(1, address, ALICE.email, PASSWORD)).body.code, 8);
    assertSession((await signin(0, '10.35.0.1', ALICE.email, PASSWORD)).body.data);
  });
});
