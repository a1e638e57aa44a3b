import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SECOND_FACTOR_LIMIT } from '../src/auth/second-factor.js';
import type { World } from '../src/world/schema.js';
import { startTestServer, type TestServer } from './helpers.js';
import { ALICE, BOB, PASSWORD, TOTP_SECRET, authWorld, probe, sessionOf, signin, totpCode } from './auth-fixtures.js';
import { MailCatcher, mailConfig, tokenIn } from './mail-support.js';

const NEW_PASSWORD = 'a brand new secret';
const NOT_AN_ADDRESS = { code: 2, description: 'parameter email: is not an e-mail address' };

/** A confirmed address with two-factor sign-in, and two addresses stored before their syntax was checked. */
const CONFIRMED_TOTP = { user_id: 20, email: 'confirmed-totp@example.com' };
const LISTED_ADDRESS = { user_id: 21, email: 'x,victim@example.com' };
const NAMED_ADDRESS = { user_id: 22, email: '"x"<victim@example.com>' };
/** An address a world file spells in fullwidth letters: stored as the mailbox it reaches. */
const FULLWIDTH_ADDRESS = { user_id: 23, email: '\uFF43\uFF41\uFF52\uFF4F\uFF4C@example.com', stored: 'carol@example.com' };

/** Addresses nodemailer reads as another recipient (or several). */
const SMUGGLING_ADDRESSES = [
  'x,victim@example.com',
  '"x"<victim@example.com>',
  '(c)victim@example.com',
  'victim@example.com>',
  '<victim@example.com',
  'attacker@evil.com;victim',
  'victim@example.com\u0085',
];

async function hardeningWorld(): Promise<World> {
  const world = await authWorld();
  const users = world.users!;
  const password_hash = users[0]!.password_hash;
  users.push(
    { ...CONFIRMED_TOTP, password_hash, totp_secret: TOTP_SECRET, email_verified: 1, nick: 'Confirmed' },
    { ...LISTED_ADDRESS, password_hash, nick: 'Listed' },
    { ...NAMED_ADDRESS, password_hash, nick: 'Named' },
    { user_id: FULLWIDTH_ADDRESS.user_id, email: FULLWIDTH_ADDRESS.email, password_hash, nick: 'Wide' },
  );
  return world;
}

describe('account hardening', () => {
  let server: TestServer;
  let mail: MailCatcher;
  let serial = 0;
  /** A client address of its own per call that the per-address limits count. */
  const freshIp = () => `10.9.${++serial >> 8}.${serial & 255}`;

  before(async () => {
    mail = await MailCatcher.start();
    server = await startTestServer({ world: await hardeningWorld(), config: { ...mailConfig(mail), accounts: { signup: 'open' } } });
  });
  after(async () => {
    await server.close();
    await mail.close();
  });

  const resetToken = async (email: string) => {
    assert.deepEqual((await server.call('auth.requestPasswordReset', { email }, { ip: freshIp() })).body, { code: 0 });
    return tokenIn(await mail.next(email));
  };

  /** An attacker with a stolen session and the password asks to move the account to their address. */
  const changeToAttacker = async (email: string, attacker: string) => {
    const stolen = (await sessionOf(server, email)).access_token;
    const asked = await server.call('account.updateEmail', { email: attacker, password: PASSWORD }, { token: stolen });
    assert.deepEqual(asked.body, { code: 0 });
    assert.equal((await mail.next(email)).subject, 'Your account e-mail address is being changed');
    return tokenIn(await mail.next(attacker));
  };

  test('a password reset ends a pending e-mail change: its token answers 1604 and the address stays', async () => {
    const attackerToken = await changeToAttacker(BOB.email, 'attacker@evil.example');
    const reset = await resetToken(BOB.email);
    assert.deepEqual((await server.call('auth.resetPassword', { token: reset, password: NEW_PASSWORD })).body, { code: 0 });
    assert.deepEqual((await server.call('account.verifyEmail', { token: attackerToken })).body, {
      code: 1604,
      description: 'the token is unknown, used or expired',
    });
    assert.equal((await signin(server, 'attacker@evil.example', NEW_PASSWORD)).body.code, 1);
    const owner = (await signin(server, BOB.email, NEW_PASSWORD)).body.data.access_token;
    assert.equal((await server.call('account.info', {}, { token: owner })).body.data.email, BOB.email);
  });

  test('a password change ends a pending e-mail change; a confirmation of the current address stays', async () => {
    const attackerToken = await changeToAttacker(ALICE.email, 'thief@evil.example');
    const owner = (await sessionOf(server, ALICE.email)).access_token;
    const changed = await server.call(
      'account.updatePassword',
      { password_current: PASSWORD, password_new: NEW_PASSWORD },
      { token: owner },
    );
    assert.equal(changed.body.code, 0);
    assert.equal((await server.call('account.verifyEmail', { token: attackerToken })).body.code, 1604);
    const fresh = changed.body.data.access_token;
    assert.equal((await server.call('account.info', {}, { token: fresh })).body.data.email, ALICE.email);
    // Sent again for the current, unconfirmed address, the confirmation survives the next change.
    assert.equal((await server.call('account.updateEmail', { email: ALICE.email, password: NEW_PASSWORD }, { token: fresh })).body.code, 0);
    const confirmation = tokenIn(await mail.next(ALICE.email));
    const again = await server.call('account.updatePassword', { password_current: NEW_PASSWORD, password_new: PASSWORD }, { token: fresh });
    assert.equal(again.body.code, 0);
    assert.deepEqual((await server.call('account.verifyEmail', { token: confirmation })).body, { code: 0 });
  });

  test('addresses mail software reads as other recipients are refused by auth.signup and account.updateEmail', async () => {
    const token = (await signin(server, BOB.email, NEW_PASSWORD)).body.data.access_token;
    for (const email of SMUGGLING_ADDRESSES) {
      const signup = await server.call('auth.signup', { email, password: NEW_PASSWORD, nick: 'Smuggler' }, { ip: freshIp() });
      assert.deepEqual(signup.body, NOT_AN_ADDRESS, `auth.signup ${JSON.stringify(email)}`);
      const change = await server.call('account.updateEmail', { email, password: NEW_PASSWORD }, { token });
      assert.deepEqual(change.body, NOT_AN_ADDRESS, `account.updateEmail ${JSON.stringify(email)}`);
    }
    await server.services.mail.drained();
    assert.equal(mail.to('victim@example.com').length, 0);
    const international = await server.call(
      'auth.signup',
      { email: 'Jörg.O+Tag@Bücher.example', password: NEW_PASSWORD, nick: 'Jörg' },
      { ip: freshIp() },
    );
    assert.equal(international.body.code, 0, JSON.stringify(international.body));
  });

  test('spellings of a taken mailbox are that mailbox: fullwidth letters, invisible characters, another case', async () => {
    const taken = { code: 1601, description: 'the e-mail address belongs to another account' };
    for (const email of [
      'alice@\uFF45\uFF58\uFF41\uFF4D\uFF50\uFF4C\uFF45.com',
      'alice@example.com\u034F',
      'alice@example.com\uFE0F',
      'alice@exa\u200Bmple.com',
      '\uFF41lice@example.com',
      'ALICE@EXAMPLE.COM',
    ]) {
      const signup = await server.call('auth.signup', { email, password: NEW_PASSWORD, nick: 'Twin' }, { ip: freshIp() });
      assert.deepEqual(signup.body, taken, JSON.stringify(email));
    }
    const invisible = await server.call(
      'auth.signup',
      { email: 'ali\u034Fce@example.com', password: NEW_PASSWORD, nick: 'Twin' },
      { ip: freshIp() },
    );
    assert.deepEqual(invisible.body, NOT_AN_ADDRESS);
    // An address in its ASCII form (punycode) is the same mailbox as in Unicode.
    const punycode = await server.call(
      'auth.signup',
      { email: 'jörg.o+tag@xn--bcher-kva.example', password: NEW_PASSWORD, nick: 'Twin' },
      { ip: freshIp() },
    );
    assert.deepEqual(punycode.body, taken);
  });

  test('an account signs in under any spelling of its mailbox; a world file spelling one oddly holds that mailbox', async () => {
    const ip = freshIp();
    assert.equal(
      (await server.call('auth.signup', { email: 'zed@xn--bcher-kva.example', password: PASSWORD, nick: 'Zed' }, { ip })).body.code,
      0,
    );
    // Mail names the domain in ASCII, for relays that do not speak SMTPUTF8.
    assert.equal((await mail.next('zed@bücher.example')).subject, 'Confirm your e-mail address');
    assert.ok(mail.rcptCommands.includes('RCPT TO:<zed@xn--bcher-kva.example>'), mail.rcptCommands.join('; '));
    // Any domain IDNA writes is one, symbols included.
    assert.equal(
      (await server.call('auth.signup', { email: 'fan@xn--ls8h.la', password: PASSWORD, nick: 'Fan' }, { ip: freshIp() })).body.code,
      0,
    );
    for (const email of ['zed@xn--bcher-kva.example', 'ZED@Bücher.example', '\uFF5A\uFF45\uFF44@bücher.example'])
      assert.equal((await signin(server, email, PASSWORD)).body.code, 0, email);
    const stored = await server.db.kysely
      .selectFrom('users')
      .select('email')
      .where('user_id', '=', FULLWIDTH_ADDRESS.user_id)
      .executeTakeFirstOrThrow();
    assert.equal(stored.email, FULLWIDTH_ADDRESS.stored);
    assert.equal((await signin(server, FULLWIDTH_ADDRESS.stored, PASSWORD)).body.code, 0);
    const twin = await server.call(
      'auth.signup',
      { email: FULLWIDTH_ADDRESS.stored, password: NEW_PASSWORD, nick: 'Twin' },
      { ip: freshIp() },
    );
    assert.equal(twin.body.code, 1601);
  });

  test('mail to a stored address goes to that one address, never to one parsed out of it', async () => {
    for (const [index, owner] of [LISTED_ADDRESS, NAMED_ADDRESS].entries()) {
      const token = (await sessionOf(server, owner.email)).access_token;
      const next = `moved-${index}@example.com`;
      assert.equal((await server.call('account.updateEmail', { email: next, password: PASSWORD }, { token })).body.code, 0);
      await mail.next(next);
    }
    await server.services.mail.drained();
    assert.equal(mail.to('victim@example.com').length, 0);
    assert.equal(mail.to('x').length, 0);
  });

  test('an unconfirmed account: a reset asks no second factor and ends the two-factor sign-in someone switched on', async () => {
    const owned = 'owner@victim.example';
    const ip = freshIp();
    const squatter = await server.call('auth.signup', { email: owned, password: PASSWORD, nick: 'Squatter' }, { ip });
    assert.equal(squatter.body.code, 0);
    assert.equal((await mail.next(owned)).subject, 'Confirm your e-mail address');
    const token = squatter.body.data.access_token;
    const userId: number = squatter.body.data.user_id;
    const setup = (await server.call('account.totpSetup', {}, { token, ip })).body.data;
    const enabled = await server.call('account.totpEnable', { code: totpCode(server.clock.now(), setup.secret) }, { token, ip });
    assert.equal(enabled.body.code, 0);
    assert.equal((await server.call('account.totpSetup', {}, { token, ip })).body.code, 1606);
    assert.equal(
      (await server.call('auth.signup', { email: owned, password: NEW_PASSWORD, nick: 'Rightful' }, { ip: freshIp() })).body.code,
      1601,
    );
    assert.equal((await mail.next(owned)).subject, 'Someone tried to sign up with your address');

    const reset = await resetToken(owned);
    assert.deepEqual((await server.call('auth.resetPassword', { token: reset, password: NEW_PASSWORD })).body, { code: 0 });
    assert.equal(await probe(server, token, ip), 1, "the squatter's session ended");
    const session = (await signin(server, owned, NEW_PASSWORD)).body;
    assert.equal(session.code, 0);
    assert.ok('access_token' in session.data, 'a Session, not a TOTP challenge');
    const info = (await server.call('account.info', {}, { token: session.data.access_token })).body.data;
    assert.equal(info.hasTotp, 0);
    assert.equal(info.email_verified, 1);
    const row = await server.db.kysely
      .selectFrom('users')
      .select(['totp_secret', 'totp_pending'])
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, { totp_secret: null, totp_pending: null });
    const codes = await server.db.kysely.selectFrom('recovery_codes').select('code_hash').where('user_id', '=', userId).execute();
    assert.equal(codes.length, 0);
  });

  test('a confirmed account: a reset without a code answers 12 without using up the allowance of wrong codes', async () => {
    const reset = await resetToken(CONFIRMED_TOTP.email);
    for (let i = 0; i <= SECOND_FACTOR_LIMIT.max + 1; i++) {
      const code = i % 2 === 0 ? undefined : ' ';
      const answer = await server.call('auth.resetPassword', {
        token: reset,
        password: NEW_PASSWORD,
        ...(code === undefined ? {} : { code }),
      });
      assert.equal(answer.body.code, 12, `attempt ${i + 1}`);
    }
    const right = totpCode(server.clock.now());
    assert.deepEqual((await server.call('auth.resetPassword', { token: reset, password: NEW_PASSWORD, code: right })).body, { code: 0 });
  });

  test('account.totpDisable without a code answers 12 without using up the allowance of wrong codes', async () => {
    server.clock.advance(30);
    const challenge = (await signin(server, CONFIRMED_TOTP.email, NEW_PASSWORD)).body.data.totp_session_token;
    const verified = await server.call('auth.totpVerify', { totp_session_token: challenge, code: totpCode(server.clock.now()) });
    const token = verified.body.data.access_token;
    for (let i = 0; i <= SECOND_FACTOR_LIMIT.max + 1; i++)
      assert.equal(
        (await server.call('account.totpDisable', { password: NEW_PASSWORD, code: '' }, { token })).body.code,
        12,
        `attempt ${i + 1}`,
      );
    server.clock.advance(30);
    const right = totpCode(server.clock.now());
    assert.deepEqual((await server.call('account.totpDisable', { password: NEW_PASSWORD, code: right }, { token })).body, { code: 0 });
  });

  test('account.sessionsRevoke: a session that has ended already answers 1607', async () => {
    const ip = '10.8.0.1';
    const phone = (await signin(server, BOB.email, NEW_PASSWORD, {}, { ip })).body.data;
    const desk = (await signin(server, BOB.email, NEW_PASSWORD, {}, { ip })).body.data;
    const revoke = async (sessionId: number) =>
      (await server.call('account.sessionsRevoke', { session_id: sessionId }, { token: desk.access_token, ip })).body;
    const idOf = async (accessToken: string) => {
      const listed = (await server.call('account.sessionsGet', {}, { token: accessToken, ip })).body.data.sessions;
      return listed.find((s: { current: number }) => s.current === 1).session_id as number;
    };
    const phoneId = await idOf(phone.access_token);
    assert.deepEqual((await server.call('auth.signout', {}, { token: phone.access_token, ip })).body, { code: 0 });
    assert.deepEqual(await revoke(phoneId), { code: 1607, description: 'the caller has no such session' }, 'signed out');

    const tablet = (await signin(server, BOB.email, NEW_PASSWORD, {}, { ip })).body.data;
    const tabletId = await idOf(tablet.access_token);
    assert.deepEqual(await revoke(tabletId), { code: 0 });
    assert.equal(await probe(server, tablet.access_token, ip), 1);
    assert.equal((await revoke(tabletId)).code, 1607, 'revoked');
    assert.equal(await probe(server, desk.access_token, ip), 1801);
  });
});
