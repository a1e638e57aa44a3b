import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RESET_ANSWER_MS, RESET_REQUEST_LIMITS } from '../src/accounts/reset.js';
import { startTestServer, type TestServer } from './helpers.js';
import { ALICE, BOB, PASSWORD, TOTP_USER, authWorld, probe, sessionOf, signin, totpCode } from './auth-fixtures.js';
import { MailCatcher, mailConfig, tokenIn } from './mail-support.js';

const NEW_PASSWORD = 'a brand new secret';

describe('auth.requestPasswordReset and auth.resetPassword', () => {
  let server: TestServer;
  let mail: MailCatcher;
  before(async () => {
    mail = await MailCatcher.start();
    const world = await authWorld();
    // A reset asks for the second factor of a confirmed address (an unconfirmed one loses it).
    world.users!.find((user) => user.user_id === TOTP_USER.user_id)!.email_verified = 1;
    server = await startTestServer({ world, config: mailConfig(mail) });
  });
  after(async () => {
    await server.close();
    await mail.close();
  });

  const request = async (email: string, ip = '10.2.0.1') => {
    const started = performance.now();
    const answer = await server.call('auth.requestPasswordReset', { email }, { ip });
    return { answer, ms: performance.now() - started };
  };

  test('known and unknown addresses answer the same, no sooner than the floor; only the known one gets mail', async () => {
    const known = await request(BOB.email.toUpperCase());
    const unknown = await request('nobody-here@example.com');
    assert.deepEqual(known.answer.body, { code: 0 });
    assert.deepEqual(unknown.answer.body, { code: 0 });
    assert.equal(known.answer.status, unknown.answer.status);
    assert.ok(known.ms >= RESET_ANSWER_MS - 1 && unknown.ms >= RESET_ANSWER_MS - 1, `${known.ms} ${unknown.ms}`);
    const message = await mail.next(BOB.email);
    assert.equal(message.subject, 'Reset your password');
    await server.services.mail.drained();
    assert.equal(mail.to('nobody-here@example.com').length, 0);
  });

  test('a reset sets the password, ends every session everywhere, and the token works once', async () => {
    const old = await sessionOf(server, BOB.email);
    assert.equal((await request(BOB.email, '10.2.0.2')).answer.body.code, 0);
    const token = tokenIn(await mail.next(BOB.email));
    const weak = await server.call('auth.resetPassword', { token, password: '1234567890' });
    assert.equal(weak.body.code, 2, 'a common password is refused (and the token is not spent)');
    assert.deepEqual((await server.call('auth.resetPassword', { token, password: PASSWORD })).body, {
      code: 2,
      description: "parameter password: is the account's current password: choose another",
    });
    assert.equal((await signin(server, BOB.email)).body.code, 0, 'the current password still works');
    assert.deepEqual((await server.call('auth.resetPassword', { token, password: NEW_PASSWORD })).body, { code: 0 });
    assert.equal(await probe(server, old.access_token), 1, 'the old session ended');
    assert.equal((await server.call('auth.refresh', { refresh_token: old.refresh_token })).body.code, 1);
    assert.equal((await signin(server, BOB.email)).body.code, 1, 'the old password no longer works');
    assert.equal((await signin(server, BOB.email, NEW_PASSWORD)).body.code, 0);
    assert.equal((await server.call('auth.resetPassword', { token, password: 'yet another secret' })).body.code, 1604);
    assert.equal((await server.call('auth.resetPassword', { token: 'y'.repeat(43), password: 'yet another secret' })).body.code, 1604);
  });

  test('a newer token replaces an older one; a token expires after 24 hours', async () => {
    await request(ALICE.email, '10.2.0.3');
    const first = tokenIn(await mail.next(ALICE.email));
    await request(ALICE.email, '10.2.0.3');
    const second = tokenIn(await mail.next(ALICE.email));
    assert.equal((await server.call('auth.resetPassword', { token: first, password: NEW_PASSWORD })).body.code, 1604);
    server.clock.advance(24 * 3600);
    assert.equal((await server.call('auth.resetPassword', { token: second, password: NEW_PASSWORD })).body.code, 1604);
  });

  test('two-factor accounts: no code 12, a wrong code 2, a recovery code or the authenticator code passes', async () => {
    await request(TOTP_USER.email, '10.2.0.4');
    const token = tokenIn(await mail.next(TOTP_USER.email));
    assert.equal((await server.call('auth.resetPassword', { token, password: NEW_PASSWORD })).body.code, 12);
    const right = totpCode(server.clock.now());
    const wrong = right === '000000' ? '111111' : '000000';
    assert.deepEqual((await server.call('auth.resetPassword', { token, password: NEW_PASSWORD, code: wrong })).body, {
      code: 2,
      description: 'parameter code: wrong code',
    });
    assert.equal((await server.call('auth.resetPassword', { token, password: NEW_PASSWORD, code: right })).body.code, 0);
    // The code's time step is used up: the same code does not sign in.
    const challenge = await signin(server, TOTP_USER.email, NEW_PASSWORD);
    const again = await server.call('auth.totpVerify', { totp_session_token: challenge.body.data.totp_session_token, code: right });
    assert.equal(again.body.code, 2);
  });

  test('limits: per e-mail and per client address, for known and unknown addresses alike', async () => {
    for (const email of ['carol-unknown@example.com', ALICE.email]) {
      const codes: number[] = [];
      for (let i = 0; i <= RESET_REQUEST_LIMITS.perEmail; i++) codes.push((await request(email, `10.3.${i}.1`)).answer.body.code);
      assert.deepEqual(codes, [...Array(RESET_REQUEST_LIMITS.perEmail).fill(0), 7], email);
    }
    const codes: number[] = [];
    for (let i = 0; i <= RESET_REQUEST_LIMITS.perAddress; i++)
      codes.push((await request(`someone${i}@example.com`, '10.4.0.1')).answer.body.code);
    assert.deepEqual(codes, [...Array(RESET_REQUEST_LIMITS.perAddress).fill(0), 7]);
  });
});
