import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Secret, TOTP } from 'otpauth';
import { CONFIRM_PASSWORD_LIMIT } from '../src/accounts/confirm-password.js';
import { EMAIL_CHANGE_LIMITS } from '../src/accounts/credentials.js';
import { NICK_CHANGE_LIMIT } from '../src/accounts/profile.js';
import { startTestServer, type TestServer } from './helpers.js';
import { ALICE, ALICE_BOT, BOB, CAPTCHA_ALWAYS, PASSWORD, authWorld, probe, sessionOf, signin } from './auth-fixtures.js';
import { tokenFor } from './item-fixtures.js';
import { MailCatcher, mailConfig, tokenIn } from './mail-support.js';

const ACCOUNT_METHODS = [
  'account.info',
  'account.updateInfo',
  'account.updatePassword',
  'account.updateEmail',
  'account.totpSetup',
  'account.totpEnable',
  'account.totpDisable',
  'account.sessionsGet',
  'account.sessionsRevoke',
];

const ADMIN_KEY = 'accounts-admin-key-0123456789';

const codeAt = (secret: string, ms: number) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: ms });

describe("managing one's own account", () => {
  let server: TestServer;
  let mail: MailCatcher;
  before(async () => {
    mail = await MailCatcher.start();
    server = await startTestServer({ world: await authWorld(), config: { ...mailConfig(mail), adminKey: ADMIN_KEY } });
  });
  after(async () => {
    await server.close();
    await mail.close();
  });

  test('account.info: the full user plus email, email_verified, hasTotp, hasPassword', async () => {
    const { access_token } = await sessionOf(server, BOB.email);
    const info = await server.call('account.info', {}, { token: access_token, http: 'GET' });
    const profile = await server.call('users.get', { user_ids: String(BOB.user_id) }, { token: access_token });
    assert.deepEqual(info.body.data, {
      ...profile.body.data[0],
      email: BOB.email,
      email_verified: 0,
      hasTotp: 0,
      hasPassword: 1,
      balance: 0,
    });
  });

  test('bots may call none of the account methods', async () => {
    const bot = await tokenFor(server, ALICE_BOT.user_id, { bot: true });
    for (const method of ACCOUNT_METHODS) {
      const answer = await server.call(method, {}, { token: bot });
      assert.equal(answer.body.code, 4, method);
    }
  });

  test('account.updateInfo: nick into nicks_old, gender, domain; every cache sees it at once; nick changes limited', async () => {
    const token = await tokenFor(server, CAPTCHA_ALWAYS.user_id);
    // Warm the profile cache, then change.
    await server.call('users.get', { user_ids: String(CAPTCHA_ALWAYS.user_id) });
    assert.deepEqual(
      (await server.call('account.updateInfo', { nick: '  Very   Careful ', gender: 1, domain: 'Careful.One' }, { token })).body,
      { code: 0 },
    );
    const shown = (await server.call('users.get', { user_ids: 'careful.one' })).body.data[0];
    assert.equal(shown.user_id, CAPTCHA_ALWAYS.user_id);
    assert.equal(shown.nick, 'Very Careful');
    assert.equal(shown.gender, 1);
    assert.deepEqual(shown.nicks_old, ['Careful']);
    // Unchanged nick: nothing is added; the limit counts changes only.
    assert.equal((await server.call('account.updateInfo', { nick: 'Very Careful' }, { token })).body.code, 0);
    const codes: number[] = [];
    for (let i = 0; i < NICK_CHANGE_LIMIT.max; i++)
      codes.push((await server.call('account.updateInfo', { nick: `Careful ${i}` }, { token })).body.code);
    assert.deepEqual(codes, [0, 0, 7]);
    assert.deepEqual((await server.call('users.get', { user_ids: String(CAPTCHA_ALWAYS.user_id) })).body.data[0].nicks_old, [
      'Careful',
      'Very Careful',
      'Careful 0',
    ]);
    server.clock.advance(NICK_CHANGE_LIMIT.windowSeconds);
    assert.equal((await server.call('account.updateInfo', { nick: 'Careful again' }, { token })).body.code, 0);
    // Domains: taken whatever the case, rules as at sign-up.
    const alice = await sessionOf(server, ALICE.email);
    assert.equal((await server.call('account.updateInfo', { domain: 'CAREFUL.one' }, { token: alice.access_token })).body.code, 1602);
    assert.equal((await server.call('account.updateInfo', { domain: '777' }, { token: alice.access_token })).body.code, 2);
    assert.equal((await server.call('account.updateInfo', { gender: 2 }, { token: alice.access_token })).body.code, 2);
  });

  test('account.updatePassword: a new Session; every other session ends; wrong current password 1605, then 7', async () => {
    const first = await sessionOf(server, ALICE.email);
    const second = await sessionOf(server, ALICE.email);
    const wrong = await server.call(
      'account.updatePassword',
      { password_current: 'not the password', password_new: 'fresh secret 1' },
      { token: first.access_token },
    );
    assert.deepEqual(wrong.body, { code: 1605, description: 'the password is wrong' });
    const weak = await server.call(
      'account.updatePassword',
      { password_current: PASSWORD, password_new: 'qwertyuiop' },
      { token: first.access_token },
    );
    assert.equal(weak.body.code, 2);
    const same = await server.call(
      'account.updatePassword',
      { password_current: PASSWORD, password_new: PASSWORD },
      { token: first.access_token },
    );
    assert.deepEqual(same.body, { code: 2, description: 'parameter password_new: is the current password: choose another' });
    const changed = await server.call(
      'account.updatePassword',
      { password_current: PASSWORD, password_new: 'fresh secret 1' },
      { token: first.access_token },
    );
    assert.equal(changed.body.code, 0, JSON.stringify(changed.body));
    assert.equal(await probe(server, changed.body.data.access_token), 1801);
    assert.equal(await probe(server, first.access_token), 1);
    assert.equal(await probe(server, second.access_token), 1);
    assert.equal((await signin(server, ALICE.email)).body.code, 1);
    assert.equal((await signin(server, ALICE.email, 'fresh secret 1')).body.code, 0);
    const token = changed.body.data.access_token;
    const codes: number[] = [];
    for (let i = 0; i < CONFIRM_PASSWORD_LIMIT.max; i++)
      codes.push(
        (await server.call('account.updatePassword', { password_current: `wrong ${i} guess`, password_new: 'fresh secret 2' }, { token }))
          .body.code,
      );
    assert.deepEqual(codes, [...Array(CONFIRM_PASSWORD_LIMIT.max - 1).fill(1605), 7], 'the first wrong guess of this test counted too');
    assert.equal(
      (await server.call('account.updatePassword', { password_current: 'fresh secret 1', password_new: 'fresh secret 2' }, { token })).body
        .code,
      7,
    );
    server.clock.advance(CONFIRM_PASSWORD_LIMIT.windowSeconds);
    assert.equal(
      (await server.call('account.updatePassword', { password_current: 'fresh secret 1', password_new: PASSWORD + '!' }, { token })).body
        .code,
      0,
    );
  });

  test('account.updateEmail: confirmed through the new address, the old one told; taken 1601', async () => {
    const { access_token: token } = await sessionOf(server, BOB.email);
    assert.equal((await server.call('account.updateEmail', { email: ALICE.email, password: PASSWORD }, { token })).body.code, 1601);
    assert.equal(
      (await server.call('account.updateEmail', { email: 'bob@new.example', password: 'wrong password' }, { token })).body.code,
      1605,
    );
    assert.deepEqual((await server.call('account.updateEmail', { email: 'Bob@New.Example', password: PASSWORD }, { token })).body, {
      code: 0,
    });
    const notice = await mail.next(BOB.email);
    assert.equal(notice.subject, 'Your account e-mail address is being changed');
    const confirmation = tokenIn(await mail.next('bob@new.example'));
    // Until confirmed, the old address signs in.
    assert.equal((await signin(server, BOB.email)).body.code, 0);
    assert.equal((await signin(server, 'bob@new.example')).body.code, 1);
    assert.equal((await server.call('account.verifyEmail', { token: confirmation })).body.code, 0);
    assert.equal((await signin(server, BOB.email)).body.code, 1);
    assert.equal((await signin(server, 'bob@new.example')).body.code, 0);
    const info = (await server.call('account.info', {}, { token })).body.data;
    assert.equal(info.email, 'bob@new.example');
    assert.equal(info.email_verified, 1);
    assert.equal((await mail.next(BOB.email)).subject, 'Your account e-mail address was changed');
  });

  test('two-factor setup: secret, enable with the code, ten recovery codes each accepted once, disable', async () => {
    const { access_token: token } = await sessionOf(server, 'bob@new.example');
    assert.equal((await server.call('account.totpEnable', { code: '123456' }, { token })).body.code, 1606, 'no setup yet');
    const setup = (await server.call('account.totpSetup', {}, { token })).body.data;
    assert.match(setup.secret, /^[A-Z2-7]{32}$/);
    assert.match(setup.otpauth_uri, /^otpauth:\/\/totp\/game-platform:bob%40new\.example\?/);
    // Not active yet: sign-in still answers a Session.
    assert.ok('access_token' in (await signin(server, 'bob@new.example')).body.data);
    const wrongCode = codeAt(setup.secret, server.clock.now()) === '000000' ? '111111' : '000000';
    assert.equal((await server.call('account.totpEnable', { code: wrongCode }, { token })).body.code, 2);
    const enabled = await server.call('account.totpEnable', { code: codeAt(setup.secret, server.clock.now()) }, { token });
    assert.equal(enabled.body.code, 0, JSON.stringify(enabled.body));
    const codes: string[] = enabled.body.data.recovery_codes;
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    for (const code of codes) assert.match(code, /^[a-z2-9]{4}(-[a-z2-9]{4}){3}$/);
    const stored = await server.db.kysely.selectFrom('recovery_codes').select('code_hash').where('user_id', '=', BOB.user_id).execute();
    assert.equal(stored.length, 10);
    assert.ok(stored.every((s) => /^[0-9a-f]{64}$/.test(s.code_hash) && !codes.includes(s.code_hash)));
    assert.equal((await server.call('account.info', {}, { token })).body.data.hasTotp, 1);
    assert.equal((await server.call('account.totpSetup', {}, { token })).body.code, 1606);

    // A recovery code completes a sign-in once, in any case and with spaces.
    const pending = (await signin(server, 'bob@new.example')).body.data.totp_session_token;
    const spelled = ` ${codes[0]!.toUpperCase().replace(/-/g, ' ')} `;
    assert.equal((await server.call('auth.totpVerify', { totp_session_token: pending, code: spelled })).body.code, 0);
    const again = (await signin(server, 'bob@new.example')).body.data.totp_session_token;
    assert.equal((await server.call('auth.totpVerify', { totp_session_token: again, code: codes[0] })).body.code, 2);

    // A reset asks for the second factor and takes a recovery code.
    await server.call('auth.requestPasswordReset', { email: 'bob@new.example' }, { ip: '10.5.0.1' });
    const reset = tokenIn(await mail.next('bob@new.example'));
    assert.equal((await server.call('auth.resetPassword', { token: reset, password: PASSWORD + '?' })).body.code, 12);
    assert.equal((await server.call('auth.resetPassword', { token: reset, password: PASSWORD + '?', code: codes[1] })).body.code, 0);

    const fresh = (
      await server.call('auth.totpVerify', {
        totp_session_token: (await signin(server, 'bob@new.example', PASSWORD + '?')).body.data.totp_session_token,
        code: codes[2],
      })
    ).body.data.access_token;
    assert.equal(
      (await server.call('account.totpDisable', { password: 'wrong password', code: codes[3] }, { token: fresh })).body.code,
      1605,
    );
    assert.equal(
      (await server.call('account.totpDisable', { password: PASSWORD + '?', code: codes[1] }, { token: fresh })).body.code,
      2,
      'used',
    );
    assert.equal((await server.call('account.totpDisable', { password: PASSWORD + '?', code: codes[3] }, { token: fresh })).body.code, 0);
    assert.equal((await server.call('account.info', {}, { token: fresh })).body.data.hasTotp, 0);
    assert.equal(
      (await server.db.kysely.selectFrom('recovery_codes').select('code_hash').where('user_id', '=', BOB.user_id).execute()).length,
      0,
    );
    assert.ok('access_token' in (await signin(server, 'bob@new.example', PASSWORD + '?')).body.data);
    assert.equal(
      (await server.call('account.totpDisable', { password: PASSWORD + '?', code: codes[4] }, { token: fresh })).body.code,
      1606,
    );
  });

  test('an operator clearing two-factor sign-in also ends a setup in progress and the recovery codes', async () => {
    const token = await tokenFor(server, ALICE.user_id);
    const setup = (await server.call('account.totpSetup', {}, { token })).body.data;
    const enabled = await server.call('account.totpEnable', { code: codeAt(setup.secret, server.clock.now()) }, { token });
    assert.equal(enabled.body.data.recovery_codes.length, 10);
    const admin = { headers: { 'x-admin-key': ADMIN_KEY } };
    assert.equal((await server.call('admin.clearTotp', { user_id: ALICE.user_id }, admin)).body.code, 0);
    const left = await server.db.kysely.selectFrom('recovery_codes').select('code_hash').where('user_id', '=', ALICE.user_id).execute();
    assert.equal(left.length, 0);
    // A secret the operator sets later does not bring the old codes back.
    assert.equal((await server.call('admin.setTotp', { user_id: ALICE.user_id }, admin)).body.code, 0);
    const pending = (await server.call('auth.signin', { email: ALICE.email, password: PASSWORD + '!' })).body.data.totp_session_token;
    assert.equal(
      (await server.call('auth.totpVerify', { totp_session_token: pending, code: enabled.body.data.recovery_codes[0] })).body.code,
      2,
    );
  });

  test('sessions: listed with address, client and current; one or all others revoked at once', async () => {
    const email = 'bob@new.example';
    const password = PASSWORD + '?';
    const a = (await signin(server, email, password, {}, { ip: '10.6.0.1', headers: { 'user-agent': 'Phone/1' } })).body.data;
    server.clock.advance(5);
    const b = (await signin(server, email, password, {}, { ip: '10.6.0.2', headers: { 'user-agent': 'Desk/2' } })).body.data;
    server.clock.advance(5);
    // A refresh keeps the sign-in one entry, from the new address.
    const c0 = (await signin(server, email, password, {}, { ip: '10.6.0.3' })).body.data;
    server.clock.advance(5);
    const c = (
      await server.call('auth.refresh', { refresh_token: c0.refresh_token }, { ip: '10.6.0.4', headers: { 'user-agent': 'Tab/3' } })
    ).body.data;
    const list = (await server.call('account.sessionsGet', {}, { token: b.access_token, ip: '10.6.0.2' })).body.data.sessions;
    const mine = list.filter((s: any) => ['10.6.0.1', '10.6.0.2', '10.6.0.4'].includes(s.ip));
    assert.deepEqual(
      mine.map((s: any) => [s.ip, s.user_agent, s.current]),
      [
        ['10.6.0.4', 'Tab/3', 0],
        ['10.6.0.2', 'Desk/2', 1],
        ['10.6.0.1', 'Phone/1', 0],
      ],
    );
    assert.equal(mine[0].created, mine[1].created + 5, 'a refreshed sign-in keeps its start');
    assert.equal(list.filter((s: any) => s.ip === '10.6.0.3').length, 0);

    const phone = mine[2].session_id;
    assert.equal(
      (await server.call('account.sessionsRevoke', { session_id: phone }, { token: b.access_token, ip: '10.6.0.2' })).body.code,
      0,
    );
    assert.equal(await probe(server, a.access_token, '10.6.0.1'), 1);
    assert.equal((await server.call('auth.refresh', { refresh_token: a.refresh_token }, { ip: '10.6.0.1' })).body.code, 1);
    assert.equal(await probe(server, c.access_token, '10.6.0.4'), 1801);
    assert.equal(
      (await server.call('account.sessionsRevoke', { session_id: phone }, { token: b.access_token, ip: '10.6.0.2' })).body.code,
      1607,
      'already ended',
    );
    const alice = await tokenFor(server, ALICE.user_id);
    assert.equal(
      (await server.call('account.sessionsRevoke', { session_id: phone }, { token: alice })).body.code,
      1607,
      "not the caller's",
    );
    assert.equal((await server.call('account.sessionsRevoke', {}, { token: b.access_token, ip: '10.6.0.2' })).body.code, 2);
    assert.equal((await server.call('account.sessionsRevoke', { all_others: 1 }, { token: b.access_token, ip: '10.6.0.2' })).body.code, 0);
    assert.equal(await probe(server, c.access_token, '10.6.0.4'), 1);
    assert.equal(await probe(server, b.access_token, '10.6.0.2'), 1801);
    const left = (await server.call('account.sessionsGet', {}, { token: b.access_token, ip: '10.6.0.2' })).body.data.sessions;
    assert.deepEqual(
      left.map((s: any) => s.current),
      [1],
    );
  });
});

describe('account.updateEmail limits', () => {
  let server: TestServer;
  let mail: MailCatcher;
  before(async () => {
    mail = await MailCatcher.start();
    server = await startTestServer({ world: await authWorld(), config: mailConfig(mail) });
  });
  after(async () => {
    await server.close();
    await mail.close();
  });

  const change = async (token: string, email: string) =>
    (await server.call('account.updateEmail', { email, password: PASSWORD }, { token })).body;

  test('one account: five requests an hour, whatever they answer; then 7 until the hour is over', async () => {
    const { access_token: token } = await sessionOf(server, ALICE.email);
    const codes: number[] = [];
    for (const email of ['one@probe.example', BOB.email, 'two@probe.example', 'careful@example.com', 'three@probe.example'])
      codes.push((await change(token, email)).code);
    assert.deepEqual(codes, [0, 1601, 0, 1601, 0]);
    const refused = await change(token, 'four@probe.example');
    assert.equal(refused.code, 7);
    assert.equal(refused.data.retry_after, EMAIL_CHANGE_LIMITS.windowSeconds);
    assert.equal(mail.to('four@probe.example').length, 0);
    // Taken or not, the answer no longer tells.
    assert.equal((await change(token, BOB.email)).code, 7);
    // Past its own limit, an account uses up no address's: another account may still name it.
    for (let i = 0; i < EMAIL_CHANGE_LIMITS.perEmail; i++) assert.equal((await change(token, 'kept@probe.example')).code, 7);
    const bob = (await sessionOf(server, BOB.email)).access_token;
    assert.equal((await change(bob, 'kept@probe.example')).code, 0);
    server.clock.advance(EMAIL_CHANGE_LIMITS.windowSeconds);
    assert.equal((await change(token, 'four@probe.example')).code, 0);
  });

  test('one address: three confirmations an hour, from any accounts', async () => {
    server.clock.advance(EMAIL_CHANGE_LIMITS.windowSeconds);
    const alice = (await sessionOf(server, ALICE.email)).access_token;
    const bob = (await sessionOf(server, BOB.email)).access_token;
    const target = 'target@victim.example';
    const codes = [await change(alice, target), await change(bob, target), await change(alice, target), await change(bob, target)];
    assert.deepEqual(
      codes.map((answer) => answer.code),
      [0, 0, 0, 7],
    );
    for (let i = 0; i < 3; i++) await mail.next(target);
    assert.equal(mail.to(target).length, 3);
  });
});
