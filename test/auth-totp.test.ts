import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TOTP_LIMITS } from '../src/auth/defence.js';
import { startTestServer, type TestServer } from './helpers.js';
import { BANNED_TOTP, TOTP_USER, assertSession, assertTotpPending, authWorld, probe, signin, totpCode } from './auth-fixtures.js';

describe('auth.totpVerify', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ world: await authWorld() });
  });
  after(() => server.close());

  /**
   * Every test starts in a fresh 30-second step, so codes of earlier tests are behind it, and
   * in a fresh window of the account's wrong codes.
   */
  async function challenge(email = TOTP_USER.email, ip = '127.0.0.1'): Promise<string> {
    server.clock.advance(TOTP_LIMITS.windowSeconds);
    const answer = await signin(server, email, undefined, {}, { ip });
    assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
    return assertTotpPending(answer.body.data);
  }
  const verify = (token: string, code: string, ip = '127.0.0.1') =>
    server.call('auth.totpVerify', { totp_session_token: token, code }, { ip });

  test('the current code completes the sign-in with a Session', async () => {
    const token = await challenge();
    const answer = await verify(token, totpCode(server.clock.now()));
    assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
    assertSession(answer.body.data);
    assert.equal(answer.body.data.user_id, TOTP_USER.user_id);
    assert.equal(await probe(server, answer.body.data.access_token), 1801);
  });

  test('a used token answers 413', async () => {
    const token = await challenge();
    assert.equal((await verify(token, totpCode(server.clock.now()))).body.code, 0);
    server.clock.advance(30);
    assert.equal((await verify(token, totpCode(server.clock.now()))).body.code, 413);
  });

  test('an unknown token answers 413', async () => {
    assert.equal((await verify('A'.repeat(43), totpCode(server.clock.now()))).body.code, 413);
  });

  test('a token expires after 5 minutes', async () => {
    const token = await challenge();
    server.clock.advance(299);
    assert.equal((await verify(token, '12345x')).body.code, 2, 'still alive just before its end');
    server.clock.advance(1);
    assert.equal((await verify(token, totpCode(server.clock.now()))).body.code, 413);
  });

  test('codes one step off either way are accepted, two steps off are not', async () => {
    for (const offset of [-30, 30]) {
      const token = await challenge();
      const answer = await verify(token, totpCode(server.clock.now() + offset * 1000));
      assert.equal(answer.body.code, 0, `offset ${offset}: ${JSON.stringify(answer.body)}`);
    }
    for (const offset of [-60, 60]) {
      const token = await challenge();
      assert.equal((await verify(token, totpCode(server.clock.now() + offset * 1000))).body.code, 2, `offset ${offset}`);
    }
  });

  test('a wrong code answers 2; after 5 wrong codes the token answers 414 and is dead', async () => {
    const token = await challenge();
    const right = totpCode(server.clock.now());
    const wrong = right === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      const answer = await verify(token, i === 4 ? 'abcdef' : wrong);
      assert.equal(answer.body.code, 2, `attempt ${i + 1}`);
    }
    assert.equal((await verify(token, right)).body.code, 414);
    assert.equal((await verify(token, right)).body.code, 414);
    // A new sign-in is not affected.
    assert.equal((await verify(await challenge(), totpCode(server.clock.now()))).body.code, 0);
  });

  test('concurrent guesses cannot exceed the allowance of one token', async () => {
    const token = await challenge();
    const right = totpCode(server.clock.now());
    const wrong = right === '000000' ? '111111' : '000000';
    const answers = await Promise.all(Array.from({ length: 20 }, () => verify(token, wrong)));
    const codes = answers.map((a) => a.body.code);
    assert.equal(codes.filter((c) => c === 2).length, 5, codes.join(','));
    assert.equal(codes.filter((c) => c === 414).length, 15, codes.join(','));
    assert.equal((await verify(token, right)).body.code, 414);
  });

  test('a code once accepted is never accepted again for that user', async () => {
    const first = await challenge();
    const code = totpCode(server.clock.now());
    assert.equal((await verify(first, code)).body.code, 0);
    const second = await challengeWithoutAdvancing();
    assert.equal((await verify(second, code)).body.code, 2, 'the same code again');
    // Nor an older one still inside the drift window.
    assert.equal((await verify(second, totpCode(server.clock.now() - 30_000))).body.code, 2, 'an earlier step');
    server.clock.advance(30);
    assert.equal((await verify(second, totpCode(server.clock.now()))).body.code, 0, 'the next step');
  });

  test('two sign-ins racing with one code: exactly one succeeds', async () => {
    const tokens = await Promise.all([challenge(), challengeWithoutAdvancing(), challengeWithoutAdvancing()]);
    const code = totpCode(server.clock.now());
    const answers = await Promise.all(tokens.map((t) => verify(t, code)));
    assert.deepEqual(answers.map((a) => a.body.code).sort(), [0, 2, 2]);
  });

  test('the token is bound to the address of the password step', async () => {
    const token = await challenge(TOTP_USER.email, '10.9.0.1');
    assert.equal((await verify(token, totpCode(server.clock.now()), '10.9.0.2')).body.code, 413);
    assert.equal((await verify(token, totpCode(server.clock.now()), '10.9.0.1')).body.code, 0);
  });

  test('a globally blocked account answers 412', async () => {
    const token = await challenge();
    await server.db.kysely.updateTable('users').set({ global_ban: 1 }).where('user_id', '=', TOTP_USER.user_id).execute();
    try {
      assert.equal((await verify(token, totpCode(server.clock.now()))).body.code, 412);
    } finally {
      await server.db.kysely.updateTable('users').set({ global_ban: 0 }).where('user_id', '=', TOTP_USER.user_id).execute();
    }
    // A banned account with TOTP is refused at the password step already.
    assert.equal((await signin(server, BANNED_TOTP.email)).body.code, 412);
  });

  test('missing parameters answer 2', async () => {
    assert.equal((await server.call('auth.totpVerify', { code: '123456' })).body.code, 2);
    assert.equal((await server.call('auth.totpVerify', { totp_session_token: 'x'.repeat(43) })).body.code, 2);
  });

  async function challengeWithoutAdvancing(): Promise<string> {
    const answer = await signin(server, TOTP_USER.email);
    return assertTotpPending(answer.body.data);
  }
});
