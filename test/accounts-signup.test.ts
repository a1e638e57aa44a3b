import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { SIGNUP_LIMITS } from '../src/auth/defence.js';
import { COMMON_PASSWORDS_REFUSED } from '../src/users/index.js';
import { createMailer } from '../src/mail/mailer.js';
import { defaultConfig } from '../src/config.js';
import { startTestServer, type TestServer } from './helpers.js';
import { assertSession, probe } from './auth-fixtures.js';
import { MailCatcher, mailConfig, tokenIn } from './mail-support.js';

const PASSWORD = 'a long enough secret';
let serial = 0;
/** A new address (and client address) per sign-up, so the per-address limits stay out of the way. */
function fresh(prefix = 'player') {
  serial++;
  return { email: `${prefix}${serial}@example.com`, ip: `10.1.${serial >> 8}.${serial & 255}` };
}

describe('auth.signup and account.verifyEmail', () => {
  let server: TestServer;
  let mail: MailCatcher;
  before(async () => {
    mail = await MailCatcher.start();
    server = await startTestServer({
      config: { ...mailConfig(mail), accounts: { signup: 'open', publicUrl: 'https://play.example.org' } },
    });
  });
  after(async () => {
    await server.close();
    await mail.close();
  });
  beforeEach(() => {
    mail.refuse = [];
    mail.holdMs = 0;
  });

  const signup = (params: Record<string, unknown>, ip: string, headers: Record<string, string> = {}) =>
    server.call('auth.signup', { password: PASSWORD, nick: 'Newcomer', ...params }, { ip, headers });

  test('answers a working Session; the address gets a confirmation token that confirms it once', async () => {
    const { email, ip } = fresh();
    const answer = await signup({ email: email.toUpperCase() }, ip);
    assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
    assertSession(answer.body.data);
    const token = answer.body.data.access_token;
    assert.equal(await probe(server, token, ip), 1801);
    const info = await server.call('account.info', {}, { token, ip });
    assert.equal(info.body.data.email, email);
    assert.equal(info.body.data.email_verified, 0);
    assert.equal(info.body.data.hasPassword, 1);
    assert.equal(info.body.data.hasTotp, 0);
    assert.equal(info.body.data.nick, 'Newcomer');

    const message = await mail.next(email);
    assert.equal(message.subject, 'Confirm your e-mail address');
    assert.equal(message.from, '"Game" <game@test.example>');
    const confirmation = tokenIn(message);
    assert.ok(message.text.includes(`https://play.example.org/confirm-email?token=${confirmation}`), message.text);
    assert.deepEqual((await server.call('account.verifyEmail', { token: confirmation }, { http: 'GET' })).body, { code: 0 });
    assert.equal((await server.call('account.info', {}, { token, ip })).body.data.email_verified, 1);
    assert.equal((await server.call('account.verifyEmail', { token: confirmation })).body.code, 1604, 'single use');
    assert.equal((await server.call('account.verifyEmail', { token: 'x'.repeat(43) })).body.code, 1604);
    // The new account signs in.
    assert.equal((await server.call('auth.signin', { email, password: PASSWORD }, { ip })).body.code, 0);
  });

  test('the token is stored hashed and expires after 24 hours', async () => {
    const { email, ip } = fresh();
    assert.equal((await signup({ email }, ip)).body.code, 0);
    const confirmation = tokenIn(await mail.next(email));
    const rows = await server.db.kysely.selectFrom('account_tokens').select(['token_hash', 'expires_at', 'created_at']).execute();
    assert.ok(rows.every((r) => /^[0-9a-f]{64}$/.test(r.token_hash) && r.token_hash !== confirmation));
    assert.ok(rows.every((r) => r.expires_at - r.created_at === 24 * 3600));
    server.clock.advance(24 * 3600);
    assert.equal((await server.call('account.verifyEmail', { token: confirmation })).body.code, 1604);
  });

  test('a taken address answers 1601, creates nothing and tells its owner once an hour', async () => {
    const { email, ip } = fresh();
    assert.equal((await signup({ email }, ip)).body.code, 0);
    await mail.next(email);
    const count = async () => (await server.db.kysely.selectFrom('users').select('user_id').execute()).length;
    const before = await count();
    for (let i = 0; i < 2; i++) {
      const again = await signup({ email: ` ${email.toUpperCase()} `, nick: 'Intruder' }, fresh().ip);
      assert.deepEqual(again.body, { code: 1601, description: 'the e-mail address belongs to another account' });
    }
    assert.equal(await count(), before);
    const notice = await mail.next(email);
    assert.equal(notice.subject, 'Someone tried to sign up with your address');
    // Only once within the hour.
    await server.services.mail.drained();
    assert.equal(mail.to(email).length, 2);
  });

  test('password, nick and domain rules', async () => {
    const COMMON = `parameter password: is one of the ${COMMON_PASSWORDS_REFUSED.toLocaleString('en')} common passwords (whatever its case and repeats): choose another`;
    const NOT_UNICODE = 'must be valid Unicode text (it holds a lone surrogate or a replacement character)';
    const cases: [Record<string, unknown>, string][] = [
      [{ password: 'nine char' }, 'parameter password: must be at least 10 characters'],
      [{ password: 'x'.repeat(129) }, 'parameter password: must be at most 128 characters'],
      ...['QwertyUIOP', '1q2w3e4r5t', 'iloveyou12', 'PASSSSWORD1', 'passwordpassword', 'DragonDragon'].map(
        (password) => [{ password }, COMMON] as [Record<string, unknown>, string],
      ),
      [{ password: ' '.repeat(10) }, 'parameter password: must not be one character repeated'],
      [{ password: 'a'.repeat(10) }, 'parameter password: must not be one character repeated'],
      [{ password: '\u00e9'.repeat(10) }, 'parameter password: must not be one character repeated'],
      // Characters are counted in NFC: five "e" each with a combining accent are five characters, not ten.
      [{ password: 'e\u0301'.repeat(5) }, 'parameter password: must be at least 10 characters'],
      // Hashed as UTF-8, each of these would be twelve U+FFFD (as invalid UTF-8 bytes already are when a request is read): one password for all of them.
      // Lone surrogates are refused with every text parameter's.
      [{ password: '\uD800'.repeat(12) }, 'parameter password: must be valid Unicode text (it holds a lone surrogate)'],
      [{ password: 'a long phrase \uDFFF' }, 'parameter password: must be valid Unicode text (it holds a lone surrogate)'],
      [{ password: '\uFFFD'.repeat(12) }, `parameter password: ${NOT_UNICODE}`],
      [{ nick: ' x ' }, 'parameter nick: must be 2 to 24 characters'],
      [{ nick: 'n'.repeat(25) }, 'parameter nick: must be 2 to 24 characters'],
      [{ nick: 'Admin' }, 'parameter nick: is reserved'],
      // Fullwidth letters, and Cyrillic or Greek look-alikes of Latin ones.
      [{ nick: '\uFF21\uFF24\uFF2D\uFF29\uFF2E' }, 'parameter nick: is reserved'],
      [{ nick: '\u0410dmin' }, 'parameter nick: is reserved'],
      [{ nick: '\u0405upport' }, 'parameter nick: is reserved'],
      [{ nick: 'S\u0443stem' }, 'parameter nick: is reserved'],
      // Digits and letter pairs read as letters, spaces and punctuation between them.
      [{ nick: 'Adm1n' }, 'parameter nick: is reserved'],
      [{ nick: '5upp0rt' }, 'parameter nick: is reserved'],
      [{ nick: 'rnoderator' }, 'parameter nick: is reserved'],
      [{ nick: 'ad min' }, 'parameter nick: is reserved'],
      [{ nick: '_admin!' }, 'parameter nick: is reserved'],
      [{ nick: 'ADMlN' }, 'parameter nick: is reserved'],
      [{ nick: '\u0391D\u039C\u0399\u039D' }, 'parameter nick: is reserved'],
      [{ nick: '$upport' }, 'parameter nick: is reserved'],
      [{ nick: 'he|p' }, 'parameter nick: is reserved'],
      [{ nick: 'r.noderator' }, 'parameter nick: is reserved'],
      [{ nick: 'L0gin' }, 'parameter nick: is reserved'],
      [{ nick: 'admin\u3164' }, 'parameter nick: must not contain control or invisible characters'],
      [{ nick: 'bad\u200bnick' }, 'parameter nick: must not contain control or invisible characters'],
      [{ domain: 'ab' }, 'parameter domain: must be 3 to 32 characters'],
      [{ domain: 'd'.repeat(33) }, 'parameter domain: must be 3 to 32 characters'],
      [{ domain: 'has-dash' }, 'parameter domain: may hold only a-z, 0-9, "_" and "."'],
      [{ domain: '12345' }, 'parameter domain: must not be all digits (that would be a user id)'],
      [{ domain: 'Support' }, 'parameter domain: is reserved'],
      // Domains follow the nick's reserved words and look-alikes, in whole or in any dotted part.
      ...['_admin', 'adm1n', 'a.dmin', 'api_', 'metrics', 'openapi.json', 'robots.txt', 'index.html', 'dice.admin', 'rnoderator'].map(
        (domain) => [{ domain }, 'parameter domain: is reserved'] as [Record<string, unknown>, string],
      ),
      // A domain is a path segment: no leading, trailing or doubled dots.
      ...['admin.', 'docs.', '...', '..a', 'a..b', '.dice'].map(
        (domain) =>
          [{ domain }, 'parameter domain: must not begin or end with "." nor hold ".." (it is part of a URL)'] as [
            Record<string, unknown>,
            string,
          ],
      ),
      // Nor one that reads as a number.
      ...['1e5', '0x1', '1.5', '0b101'].map(
        (domain) =>
          [{ domain }, 'parameter domain: must not read as a number (that would be a user id)'] as [Record<string, unknown>, string],
      ),
      [{ email: 'not-an-address' }, 'parameter email: is not an e-mail address'],
    ];
    for (const [params, description] of cases) {
      const { email, ip } = fresh();
      const answer = await signup({ email, ...params }, ip);
      assert.deepEqual(answer.body, { code: 2, description }, JSON.stringify(params));
    }
    // 128 characters (counted as characters, not UTF-16 units) are fine.
    const { email, ip } = fresh();
    assert.equal((await signup({ email, password: '🎲🃏'.repeat(64) }, ip)).body.code, 0);
    // Nicks in other scripts pass when they do not spell a reserved word.
    const russian = fresh();
    assert.equal((await signup({ email: russian.email, nick: 'Пётр Админов' }, russian.ip)).body.code, 0);
    // Nor do ordinary nicks that only come near one: a number after it, a word of another script that Latin letters could imitate.
    for (const nick of ['User2', 'Bot 99', 'Info1', 'Вот', 'Hornet', 'Vvolf', 'Botanist', 'Modest']) {
      const other = fresh();
      assert.equal((await signup({ email: other.email, nick }, other.ip)).body.code, 0, nick);
    }
  });

  test('no domain is a path the server serves', async () => {
    // The first segment of every route, as the server itself lists them.
    const segments = [...server.app.printRoutes({ commonPrefix: false }).matchAll(/^ {4}[├└]── ([^/:\s]+)/gmu)].map(([, name]) => name!);
    assert.ok(segments.includes('openapi.json') && segments.includes('metrics'), segments.join(' '));
    for (const domain of segments.filter((name) => name.length >= 3 && /^[a-z0-9_.]+$/.test(name))) {
      const { email, ip } = fresh();
      assert.deepEqual((await signup({ email, domain }, ip)).body, { code: 2, description: 'parameter domain: is reserved' }, domain);
    }
  });

  test('a domain is stored in lower case and unique whatever the case', async () => {
    const first = fresh();
    const answer = await signup({ ...first, domain: 'Dice.Master' }, first.ip);
    assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
    const shown = await server.call('users.get', { user_ids: 'dice.master' });
    assert.equal(shown.body.data[0].user_id, answer.body.data.user_id);
    const second = fresh();
    assert.deepEqual((await signup({ email: second.email, domain: 'DICE.master' }, second.ip)).body, {
      code: 1602,
      description: 'the domain belongs to another account',
    });
  });

  test('from one address: a captcha past 3 sign-ups an hour, code 7 past 20; per e-mail, code 7 past 10', async () => {
    const ip = '10.9.9.9';
    const codes: number[] = [];
    // The refused attempt (8) is never judged, so it does not count toward the ceiling.
    for (let i = 0; i < SIGNUP_LIMITS.ceilingAddressAttempts + 2; i++) {
      const answer = await signup({ email: fresh().email, captcha: i >= 4 ? 'test-pass' : undefined }, ip);
      codes.push(answer.body.code);
    }
    assert.deepEqual(codes, [0, 0, 0, 8, ...Array(SIGNUP_LIMITS.ceilingAddressAttempts - 3).fill(0), 7]);
    assert.equal((await signup({ email: fresh().email, captcha: 'wrong' }, '10.9.9.10')).body.code, 0, 'another address is not affected');
    server.clock.advance(3600);
    assert.equal((await signup({ email: fresh().email }, ip)).body.code, 0, 'the window passes');

    const { email } = fresh();
    const perEmail: number[] = [];
    for (let i = 0; i < SIGNUP_LIMITS.ceilingEmailAttempts + 1; i++) perEmail.push((await signup({ email }, fresh().ip)).body.code);
    assert.deepEqual(perEmail, [0, ...Array(SIGNUP_LIMITS.ceilingEmailAttempts - 1).fill(1601), 7]);
  });

  test('the request never waits for the mail server; temporary refusals are retried, final ones are not', async () => {
    const held = fresh();
    mail.holdMs = 1500;
    const answer = await signup(held, held.ip);
    assert.equal(answer.body.code, 0);
    assert.equal(mail.to(held.email).length, 0, 'answered while the mail server was still taking the message');
    await mail.next(held.email);
    mail.holdMs = 0;

    const retried = fresh();
    const attempts = mail.attempts;
    mail.refuse = [451, 421];
    assert.equal((await signup(retried, retried.ip)).body.code, 0);
    assert.equal((await mail.next(retried.email)).subject, 'Confirm your e-mail address');
    assert.equal(mail.attempts - attempts, 3);

    const refused = fresh();
    const before = mail.attempts;
    mail.refuse = [550];
    assert.equal((await signup(refused, refused.ip)).body.code, 0);
    await server.services.mail.drained();
    assert.equal(mail.attempts - before, 1);
    assert.equal(mail.to(refused.email).length, 0);
  });

  test("the client's User-Agent is kept with the session", async () => {
    const { email, ip } = fresh();
    const answer = await signup({ email }, ip, { 'user-agent': 'DiceClient/2.1' });
    const list = await server.call('account.sessionsGet', {}, { token: answer.body.data.access_token, ip });
    assert.equal(list.body.data.sessions[0].user_agent, 'DiceClient/2.1');
  });
});

describe('sign-up settings', () => {
  test('--signup closed answers 1603 and creates nothing', async () => {
    const server = await startTestServer({ config: { accounts: { signup: 'closed' } } });
    try {
      const answer = await server.call('auth.signup', { email: 'a@example.com', password: PASSWORD, nick: 'Nobody' });
      assert.deepEqual(answer.body, { code: 1603, description: 'sign-up is closed on this server' });
      assert.equal((await server.db.kysely.selectFrom('users').select('user_id').execute()).length, 0);
    } finally {
      await server.close();
    }
  });

  test('without a captcha verifier no captcha is asked for: past the budget, sign-ups wait for a delay', async () => {
    const server = await startTestServer({ config: { captcha: { testVerifier: false } } });
    try {
      const codes: number[] = [];
      for (let i = 0; i < SIGNUP_LIMITS.captchaAfterAddressAttempts + 2; i++)
        codes.push((await server.call('auth.signup', { email: `p${i}@example.com`, password: PASSWORD, nick: 'Player' })).body.code);
      assert.deepEqual(codes, [...Array(SIGNUP_LIMITS.captchaAfterAddressAttempts + 1).fill(0), 7]);
    } finally {
      await server.close();
    }
  });

  test('without SMTP every message, token included, goes to the log, with a warning at start', async () => {
    const lines: any[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    // At warn, the quietest level short of errors, the messages are still written.
    const app = Fastify({ logger: { level: 'warn', stream: sink } });
    const mailer = createMailer(defaultConfig(), app.log);
    mailer.send({ to: 'dev@example.com', subject: 'Confirm your e-mail address', text: 'token TOKEN123' });
    await mailer.drained();
    assert.equal(lines[0].level, 40);
    assert.match(lines[0].msg, /no SMTP server configured .* development only/);
    assert.equal(lines[1].level, 40);
    assert.deepEqual(lines[1].mail, { to: 'dev@example.com', subject: 'Confirm your e-mail address', text: 'token TOKEN123' });
    assert.match(mailer.destination, /no SMTP server is configured/);
    await app.close();
  });
});
