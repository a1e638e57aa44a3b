import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Algorithm, hash } from '@node-rs/argon2';
import { needsRehash } from '../src/auth/passwords.js';
import { sha256 } from '../src/infra/secrets.js';
import { startTestServer, type TestServer } from './helpers.js';
import {
  ALICE,
  BANNED,
  BOB,
  BOT_WITH_PASSWORD,
  PASSWORD,
  TOTP_USER,
  assertSession,
  assertTotpPending,
  authWorld,
  probe,
  sessionOf,
  signin,
} from './auth-fixtures.js';

describe('auth.signin', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ world: await authWorld() });
  });
  after(() => server.close());

  test('answers a Session whose token works, with the e-mail matched case-insensitively', async () => {
    const answer = await signin(server, '  ALICE@example.COM ');
    assert.equal(answer.status, 200);
    assert.equal(answer.body.code, 0);
    assertSession(answer.body.data);
    assert.deepEqual(Object.keys(answer.body.data).sort(), [
      'access_token',
      'device_token',
      'expires',
      'expires_in',
      'refresh_token',
      'user_id',
    ]);
    assert.equal(answer.body.data.user_id, ALICE.user_id);
    assert.equal(answer.body.data.expires_in, 86400);
    assert.notEqual(answer.body.data.access_token, answer.body.data.refresh_token);
    assert.equal(await probe(server, answer.body.data.access_token), 1801);
  });

  test('takes its parameters from a query string, a form or a JSON body', async () => {
    const get = await signin(server, ALICE.email, PASSWORD, {}, { http: 'GET' });
    const form = await signin(server, ALICE.email, PASSWORD, {}, { form: true });
    assertSession(get.body.data);
    assertSession(form.body.data);
    assert.notEqual(get.body.data.access_token, form.body.data.access_token);
  });

  test('stores tokens only as SHA-256 hashes', async () => {
    const session = await sessionOf(server, ALICE.email);
    const row = await server.db.kysely
      .selectFrom('sessions')
      .selectAll()
      .where('access_hash', '=', sha256(session.access_token))
      .executeTakeFirstOrThrow();
    assert.equal(row.refresh_hash, sha256(session.refresh_token));
    assert.ok(!JSON.stringify(row).includes(session.access_token));
    assert.ok(!JSON.stringify(row).includes(session.refresh_token));
  });

  test('a wrong password and an unknown e-mail answer the same code 1', async () => {
    const wrongPassword = await signin(server, BOB.email, 'not the password at all', {}, { ip: '10.1.0.1' });
    const unknown = await signin(server, 'nobody@example.com', PASSWORD, {}, { ip: '10.1.0.2' });
    assert.equal(wrongPassword.body.code, 1);
    assert.deepEqual(wrongPassword.body, unknown.body);
    assert.equal(wrongPassword.status, 200);
  });

  test('a password under 10 characters answers 2 and is not counted as a failed sign-in', async () => {
    for (let i = 0; i < 8; i++) {
      const answer = await signin(server, BOB.email, 'short', {}, { ip: '10.1.1.1' });
      assert.equal(answer.body.code, 2);
      assert.match(answer.body.description!, /password/);
    }
    // Eight short passwords did not bring the captcha threshold (5 failures) near.
    assertSession((await signin(server, BOB.email, PASSWORD, {}, { ip: '10.1.1.1' })).body.data);
  });

  test('missing parameters answer 2 naming them', async () => {
    const answer = await server.call('auth.signin', { email: ALICE.email });
    assert.equal(answer.body.code, 2);
    assert.match(answer.body.description!, /password/);
  });

  test('a globally blocked account answers 412 only when the password is right', async () => {
    assert.equal((await signin(server, BANNED.email, 'wrong password here', {}, { ip: '10.1.2.1' })).body.code, 1);
    assert.equal((await signin(server, BANNED.email, PASSWORD, {}, { ip: '10.1.2.1' })).body.code, 412);
  });

  test('a user with TOTP gets a totp_session_token instead of a Session', async () => {
    const answer = await signin(server, TOTP_USER.email);
    assert.equal(answer.body.code, 0);
    assertTotpPending(answer.body.data);
  });

  test('a bot cannot sign in with a password', async () => {
    const answer = await signin(server, BOT_WITH_PASSWORD.email, PASSWORD, {}, { ip: '10.1.3.1' });
    assert.equal(answer.body.code, 1);
  });

  test('a user token is bound to the address it was issued for', async () => {
    const session = await sessionOf(server, ALICE.email, { ip: '10.1.4.1' });
    assert.equal(await probe(server, session.access_token, '10.1.4.1'), 1801);
    assert.equal(await probe(server, session.access_token, '10.1.4.2'), 1);
    // The same address written as IPv4-mapped IPv6 is the same address.
    assert.equal(await probe(server, session.access_token, '::ffff:10.1.4.1'), 1801);
  });

  test('an access token expires after its lifetime', async () => {
    const session = await sessionOf(server, ALICE.email);
    server.clock.advance(86400 - 1);
    assert.equal(await probe(server, session.access_token), 1801);
    server.clock.advance(1);
    assert.equal(await probe(server, session.access_token), 1);
  });

  test('unknown and malformed tokens answer 1', async () => {
    assert.equal(await probe(server, 'A'.repeat(43)), 1);
    assert.equal(await probe(server, 'x'), 1);
  });

  test('passwords hashed with weaker parameters are upgraded on the next sign-in', async () => {
    const weak = await hash(PASSWORD, { algorithm: Algorithm.Argon2id, memoryCost: 4096, timeCost: 1, parallelism: 1 });
    assert.ok(needsRehash(weak));
    await server.db.kysely.updateTable('users').set({ password_hash: weak }).where('user_id', '=', BOB.user_id).execute();
    assertSession((await signin(server, BOB.email)).body.data);
    const row = await server.db.kysely
      .selectFrom('users')
      .select('password_hash')
      .where('user_id', '=', BOB.user_id)
      .executeTakeFirstOrThrow();
    assert.notEqual(row.password_hash, weak);
    assert.match(row.password_hash!, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    assert.equal(needsRehash(row.password_hash!), false);
    assertSession((await signin(server, BOB.email)).body.data);
  });
});

describe('auth.signin configuration', () => {
  test('the session lifetime is configurable and address binding can be switched off', async () => {
    const server = await startTestServer({ world: await authWorld(), config: { sessionTtl: 600, bindTokensToIp: false } });
    try {
      const session = await sessionOf(server, ALICE.email, { ip: '10.2.0.1' });
      assert.equal(session.expires_in, 600);
      assert.equal(session.expires, 600);
      assert.equal(await probe(server, session.access_token, '10.2.0.99'), 1801);
      server.clock.advance(600);
      assert.equal(await probe(server, session.access_token, '10.2.0.1'), 1);
    } finally {
      await server.close();
    }
  });

  test('with trust-proxy the address comes from X-Forwarded-For', async () => {
    const server = await startTestServer({ world: await authWorld(), config: { trustProxy: true } });
    try {
      const viaProxy = { ip: '127.0.0.1', headers: { 'x-forwarded-for': '203.0.113.7' } };
      const session = await sessionOf(server, ALICE.email, viaProxy);
      const call = (forwardedFor: string) =>
        server.call(
          'bots.getToken',
          { user_id: 999_999 },
          { token: session.access_token, ip: '127.0.0.1', headers: { 'x-forwarded-for': forwardedFor } },
        );
      assert.equal((await call('203.0.113.7')).body.code, 1801);
      assert.equal((await call('203.0.113.8')).body.code, 1);
    } finally {
      await server.close();
    }
  });

  test('without trust-proxy X-Forwarded-For is ignored', async () => {
    const server = await startTestServer({ world: await authWorld() });
    try {
      const session = await sessionOf(server, ALICE.email, { ip: '10.3.0.1', headers: { 'x-forwarded-for': '203.0.113.7' } });
      assert.equal(await probe(server, session.access_token, '10.3.0.1'), 1801);
    } finally {
      await server.close();
    }
  });
});
