import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DELAY_LIMITS, SIGNIN_LIMITS, TOTP_LIMITS } from '../src/auth/defence.js';
import { startTestServer, type TestServer } from './helpers.js';
import {
  ALICE,
  BOB,
  CAPTCHA_ALWAYS,
  PASSWORD,
  TOTP_USER,
  assertSession,
  assertTotpPending,
  authWorld,
  signin,
  totpCode,
} from './auth-fixtures.js';
import { listen, wire, type WireAnswer } from './transport-support.js';
import { missing } from './components.js';

/**
 * Sign-in cannot be turned against its owner: failures an attacker causes from elsewhere never
 * keep the owner out of a place (address or device) the owner signed in from before, an
 * address's failures never block the accounts that use it, and without a captcha verifier the
 * guesser waits (growing delays) instead of everyone being refused for good.
 */

const WRONG = 'definitely the wrong password';

describe('sign-in lockouts without a captcha verifier', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ world: await authWorld(), config: { captcha: { testVerifier: false } } });
  });
  after(() => server.close());
  const fresh = () => server.clock.advance(2 * 3600);

  test('failures from other addresses never keep the owner out of an address or device known to the account', async () => {
    fresh();
    const first = await signin(server, BOB.email, PASSWORD, {}, { ip: '10.50.0.1' });
    assertSession(first.body.data);
    const device = first.body.data.device_token as string;
    assert.match(device, /^[A-Za-z0-9_-]{43}$/);
    // Six guesses every 15 minutes used to keep the account out for good.
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 6; i++) {
        const code = (await signin(server, BOB.email, WRONG, {}, { ip: `10.51.${round}.${i}` })).body.code;
        assert.ok(code === 1 || code === 7, `guess ${i}: ${code}`);
      }
      assertSession((await signin(server, BOB.email, PASSWORD, {}, { ip: '10.50.0.1' })).body.data);
      // From a new address, the device token the server issued lets the owner in too.
      const elsewhere = await signin(server, BOB.email, PASSWORD, { device_token: device }, { ip: `10.52.${round}.1` });
      assertSession(elsewhere.body.data);
      assert.equal(elsewhere.body.data.device_token, device, 'the device keeps its token');
      server.clock.advance(15 * 60);
    }
    // A device token of another account is worth nothing for this one.
    const alice = (await signin(server, ALICE.email, PASSWORD, {}, { ip: '10.53.0.1' })).body.data;
    for (let i = 0; i < 6; i++) await signin(server, BOB.email, WRONG, {}, { ip: `10.54.0.${i}` });
    assert.equal((await signin(server, BOB.email, PASSWORD, { device_token: alice.device_token }, { ip: '10.53.0.1' })).body.code, 7);
  });

  test('past the budget, the guesser waits a delay that doubles with every failure, and nobody gets code 8', async () => {
    fresh();
    const ip = (i: number) => `10.55.${i >> 8}.${i & 255}`;
    for (let i = 0; i < SIGNIN_LIMITS.captchaAfterEmailFailures; i++)
      assert.equal((await signin(server, BOB.email, WRONG, {}, { ip: ip(i) })).body.code, 1);
    // The first attempt past the budget is judged at once; each one after waits.
    assert.equal((await signin(server, BOB.email, WRONG, {}, { ip: ip(100) })).body.code, 1);
    let expected: number = DELAY_LIMITS.firstSeconds;
    for (let i = 0; i < 4; i++) {
      const held = await signin(server, BOB.email, PASSWORD, {}, { ip: ip(200 + i) });
      assert.equal(held.body.code, 7, JSON.stringify(held.body));
      assert.equal(held.status, 429);
      assert.equal(held.body.data.retry_after, expected);
      server.clock.advance(expected);
      assert.equal((await signin(server, BOB.email, WRONG, {}, { ip: ip(300 + i) })).body.code, 1);
      expected = Math.min(DELAY_LIMITS.maxSeconds, expected * 2);
    }
    server.clock.advance(expected);
    // The owner from a new address gets in once the delay is over.
    assertSession((await signin(server, BOB.email, PASSWORD, {}, { ip: ip(400) })).body.data);
  });

  test("an address's failures never block accounts that signed in from it before", async () => {
    fresh();
    const nat = '10.56.0.1';
    assertSession((await signin(server, ALICE.email, PASSWORD, {}, { ip: nat })).body.data);
    for (let i = 0; i < SIGNIN_LIMITS.captchaAfterIpFailures + 5; i++) {
      const code = (await signin(server, `nobody${i}@example.com`, WRONG, {}, { ip: nat })).body.code;
      assert.ok(code === 1 || code === 7, `guess ${i}: ${code}`);
    }
    assertSession((await signin(server, ALICE.email, PASSWORD, {}, { ip: nat })).body.data);
    // An account new to that address waits (code 7), it is not refused with a captcha nobody can solve.
    const newcomer = await signin(server, BOB.email, PASSWORD, {}, { ip: nat });
    assert.equal(newcomer.body.code, 7);
    server.clock.advance(newcomer.body.data.retry_after);
    assertSession((await signin(server, BOB.email, PASSWORD, {}, { ip: nat })).body.data);
  });

  test('a known source is judged on its own failures: past its allowance it counts as unknown', async () => {
    fresh();
    const home = '10.57.0.1';
    assertSession((await signin(server, BOB.email, PASSWORD, {}, { ip: home })).body.data);
    const codes: number[] = [];
    for (let i = 0; i < SIGNIN_LIMITS.knownSourceFailures + SIGNIN_LIMITS.captchaAfterEmailFailures + 2; i++)
      codes.push((await signin(server, BOB.email, WRONG, {}, { ip: home })).body.code);
    const judged = SIGNIN_LIMITS.knownSourceFailures + SIGNIN_LIMITS.captchaAfterEmailFailures + 1;
    assert.deepEqual(codes, [...Array(judged).fill(1), 7]);
  });

  test('an account marked "captcha always" answers 8 only once the password is right, as unknown e-mails answer 1', async () => {
    fresh();
    assert.equal((await signin(server, CAPTCHA_ALWAYS.email, WRONG, {}, { ip: '10.58.0.1' })).body.code, 1);
    assert.equal((await signin(server, 'nobody-at-all@example.com', WRONG, {}, { ip: '10.58.0.1' })).body.code, 1);
    assert.equal((await signin(server, CAPTCHA_ALWAYS.email, PASSWORD, {}, { ip: '10.58.0.1' })).body.code, 8);
  });
});

describe('sign-in attempts count once judged', () => {
  let server: TestServer;
  let url: string;
  before(async () => {
    server = await startTestServer({ world: await authWorld(), config: { rateLimit: false, trustProxy: true } });
    url = await listen(server);
  });
  after(() => server.close());

  const attempt = (address: string, email: string, password: string, extra: Record<string, string> = {}): Promise<WireAnswer> =>
    wire(`${url}/api/auth.signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address, connection: 'close' },
      body: JSON.stringify({ email, password, ...extra }),
    });

  test('attempts held in flight with unsolved captchas cannot push the account past its ceiling', async () => {
    // A verifier that holds every robot's answer until the owner has been answered: all of
    // them are in flight while the owner's attempt is judged.
    const burst = SIGNIN_LIMITS.ceilingEmailFailures + 40;
    let robotsHeld = 0;
    let allHeld!: () => void;
    const robotsInFlight = new Promise<void>((resolve) => (allHeld = resolve));
    let releaseRobots!: () => void;
    const ownerAnswered = new Promise<void>((resolve) => (releaseRobots = resolve));
    const verifier = createHttpServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += chunk;
      const human = new URLSearchParams(body).get('response') === 'solved-by-a-human';
      if (!human && ++robotsHeld === burst) allHeld();
      if (!human) await ownerAnswered;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ success: human }));
    });
    await new Promise<void>((resolve) => verifier.listen(0, '127.0.0.1', resolve));
    const verifyUrl = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/siteverify`;
    const slow = await startTestServer({
      world: await authWorld(),
      config: { rateLimit: false, captcha: { verifyUrl, secret: 'site-secret', testVerifier: false } },
    });
    try {
      for (let i = 0; i < SIGNIN_LIMITS.captchaAfterEmailFailures; i++)
        assert.equal((await signin(slow, BOB.email, WRONG, {}, { ip: `10.60.0.${i}` })).body.code, 1);
      const flood = Promise.all(
        Array.from({ length: burst }, (_, i) =>
          signin(slow, BOB.email, WRONG, { captcha: 'a-robot' }, { ip: `10.60.${1 + (i >> 8)}.${i & 255}` }),
        ),
      );
      await robotsInFlight;
      const owner = await signin(slow, BOB.email, PASSWORD, { captcha: 'solved-by-a-human' }, { ip: '10.61.0.1' });
      releaseRobots();
      assert.equal(owner.body.code, 0, JSON.stringify(owner.body));
      const codes = (await flood).map((a) => a.body.code);
      assert.deepEqual([...new Set(codes)], [8]);
    } finally {
      releaseRobots();
      await slow.close();
      await new Promise<void>((resolve) => verifier.close(() => resolve()));
    }
  });

  test('past the ceiling of judged failures, the owner still gets in from a known address', async () => {
    server.clock.advance(2 * 3600);
    assert.equal((await attempt('10.62.0.1', ALICE.email, PASSWORD)).body.code, 0);
    const burst = SIGNIN_LIMITS.ceilingEmailFailures + 10;
    const answers = await Promise.all(
      Array.from({ length: burst }, (_, i) => attempt(`10.63.${i >> 8}.${i & 255}`, ALICE.email, WRONG, { captcha: 'test-pass' })),
    );
    const codes = answers.map((a) => a.body.code);
    assert.equal(codes.filter((c) => c === 1).length, SIGNIN_LIMITS.ceilingEmailFailures, codes.join(','));
    assert.equal((await attempt('10.64.0.1', ALICE.email, PASSWORD, { captcha: 'test-pass' })).body.code, 7);
    assert.equal((await attempt('10.62.0.1', ALICE.email, PASSWORD)).body.code, 0);
  });
});

describe('wrong TOTP codes are counted per account across challenges', () => {
  test('10 wrong codes in 15 minutes, then 414 for every challenge until the window passes, with an alert in the log', async () => {
    const logLines: string[] = [];
    const server = await startTestServer({ world: await authWorld(), logLines });
    try {
      const wrongFor = (right: string) => (right === '000000' ? '111111' : '000000');
      const challenge = async () => assertTotpPending((await signin(server, TOTP_USER.email)).body.data);
      const verify = (token: string, code: string) => server.call('auth.totpVerify', { totp_session_token: token, code });
      for (let i = 0; i < TOTP_LIMITS.wrongCodes; i++) {
        // A new challenge for every code: the per-challenge allowance alone never stops this.
        const answer = await verify(await challenge(), wrongFor(totpCode(server.clock.now())));
        assert.equal(answer.body.code, 2, `wrong code ${i + 1}`);
      }
      const alerts = logLines.map((l) => JSON.parse(l)).filter((l) => l.event === 'totp_guessing');
      assert.equal(alerts.length, 1);
      assert.equal(alerts[0].user_id, TOTP_USER.user_id);
      const refused = await verify(await challenge(), totpCode(server.clock.now()));
      assert.equal(refused.body.code, 414);
      assert.match(refused.body.description!, /try again in \d+ seconds/);
      server.clock.advance(TOTP_LIMITS.windowSeconds);
      const accepted = await verify(await challenge(), totpCode(server.clock.now()));
      assert.equal(accepted.body.code, 0, JSON.stringify(accepted.body));
      // The replay rule holds: the same code is not accepted twice.
      assert.equal((await verify(await challenge(), totpCode(server.clock.now()))).body.code, 2);
    } finally {
      await server.close();
    }
  });

  test('with Redis, wrong codes sent to two processes count together', { skip: missing.redis }, async () => {
    const first = await startTestServer({ world: await authWorld(), redis: true });
    const second = await startTestServer({ redis: true, location: first.location, clock: first.clock });
    try {
      const servers = [first, second];
      const challenge = async (i: number) => assertTotpPending((await signin(servers[i % 2]!, TOTP_USER.email)).body.data);
      const right = totpCode(first.clock.now());
      const wrong = right === '000000' ? '111111' : '000000';
      const codes: number[] = [];
      for (let i = 0; i < TOTP_LIMITS.wrongCodes + 2; i++)
        codes.push((await servers[i % 2]!.call('auth.totpVerify', { totp_session_token: await challenge(i), code: wrong })).body.code);
      assert.deepEqual(codes, [...Array(TOTP_LIMITS.wrongCodes).fill(2), 414, 414]);
    } finally {
      await second.close();
      await first.close();
    }
  });
});

describe('sign-in budgets with Redis', { skip: missing.redis }, () => {
  test("an account's failures from two processes count together, and its known address stays open in both", async () => {
    const first = await startTestServer({ world: await authWorld(), redis: true, config: { captcha: { testVerifier: false } } });
    const second = await startTestServer({
      redis: true,
      location: first.location,
      clock: first.clock,
      config: { captcha: { testVerifier: false } },
    });
    try {
      const servers = [first, second];
      assertSession((await signin(first, BOB.email, PASSWORD, {}, { ip: '10.70.0.1' })).body.data);
      const codes: number[] = [];
      for (let i = 0; i < SIGNIN_LIMITS.captchaAfterEmailFailures + 2; i++)
        codes.push((await signin(servers[i % 2]!, BOB.email, WRONG, {}, { ip: `10.71.0.${i}` })).body.code);
      assert.deepEqual(codes, [...Array(SIGNIN_LIMITS.captchaAfterEmailFailures + 1).fill(1), 7]);
      for (const server of servers) assertSession((await signin(server, BOB.email, PASSWORD, {}, { ip: '10.70.0.1' })).body.data);
    } finally {
      await second.close();
      await first.close();
    }
  });
});
