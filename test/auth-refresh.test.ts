import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { revokeAllSessions, sweepSessions } from '../src/auth/sessions.js';
import { sha256 } from '../src/infra/secrets.js';
import { defaultConfig } from '../src/config.js';
import { startTestServer, type Answer, type TestServer } from './helpers.js';
import { ALICE, ALICE_BOT, BOB, assertSession, authWorld, probe, sessionOf } from './auth-fixtures.js';
import { WORLD_CHANGED } from '../src/infra/channels.js';

/** Signs Alice in and refreshes her token eight times at once: exactly one succeeds, seven answer 1. */
async function refreshConcurrently(server: TestServer, refresh: (refreshToken: string) => Promise<Answer>) {
  const first = await sessionOf(server, ALICE.email);
  const answers = await Promise.all(Array.from({ length: 8 }, () => refresh(first.refresh_token)));
  const codes = answers.map((a) => a.body.code);
  assert.equal(codes.filter((c) => c === 0).length, 1, codes.join(','));
  assert.equal(codes.filter((c) => c === 1).length, 7, codes.join(','));
  return { first, winner: answers.find((a) => a.body.code === 0)!.body.data };
}

describe('auth.refresh with a reuse grace period', () => {
  const GRACE = 5;
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ world: await authWorld(), config: { refreshReuseGrace: GRACE } });
  });
  after(() => server.close());

  const refresh = (refreshToken: string) => server.call('auth.refresh', { refresh_token: refreshToken });

  test('concurrent refreshes with one token: exactly one succeeds and its session stays valid', async () => {
    const { first, winner } = await refreshConcurrently(server, refresh);
    assert.equal(await probe(server, winner.access_token), 1801);
    // Presenting the rotated token once the grace period is over is theft.
    server.clock.advance(GRACE);
    assert.equal((await refresh(first.refresh_token)).body.code, 1);
    assert.equal(await probe(server, winner.access_token), 1);
    assert.equal((await refresh(winner.refresh_token)).body.code, 1);
  });

  test('a reuse within the grace period answers 1 without ending the sign-in', async () => {
    const first = await sessionOf(server, ALICE.email);
    const second = (await refresh(first.refresh_token)).body.data;
    server.clock.advance(GRACE - 1);
    const reuse = (await refresh(first.refresh_token)).body;
    assert.equal(reuse.code, 1);
    // Its description says so, not that the sign-in ended.
    assert.match(reuse.description!, /the sign-in is kept/);
    assert.doesNotMatch(reuse.description!, /revoked/);
    assert.equal(await probe(server, second.access_token), 1801);
  });
});

describe('auth.refresh', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ world: await authWorld() });
  });
  after(() => server.close());

  const refresh = (refreshToken: string, ip = '127.0.0.1') => server.call('auth.refresh', { refresh_token: refreshToken }, { ip });

  test('rotates: a new Session and refresh token; the old refresh and access tokens stop working', async () => {
    const first = await sessionOf(server, ALICE.email);
    const answer = await refresh(first.refresh_token);
    assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
    const second = answer.body.data;
    assertSession(second);
    assert.equal(second.user_id, ALICE.user_id);
    assert.notEqual(second.access_token, first.access_token);
    assert.notEqual(second.refresh_token, first.refresh_token);
    assert.equal(await probe(server, second.access_token), 1801);
    assert.equal(await probe(server, first.access_token), 1);
    // And the new refresh token rotates in turn.
    const third = await refresh(second.refresh_token);
    assertSession(third.body.data);
  });

  test('reusing a refresh token revokes the whole sign-in and answers 1', async () => {
    const first = await sessionOf(server, ALICE.email);
    const second = (await refresh(first.refresh_token)).body.data;
    const third = (await refresh(second.refresh_token)).body.data;
    assert.equal(await probe(server, third.access_token), 1801);

    // Past the grace period even the address of the sign-in gets no benefit of the doubt.
    server.clock.advance(defaultConfig().refreshReuseGrace);
    const replay = await refresh(first.refresh_token);
    assert.equal(replay.body.code, 1);
    assert.match(replay.body.description!, /already used: every session of this sign-in is revoked/);
    assert.equal(await probe(server, third.access_token), 1, 'the latest access token of the family is revoked');
    assert.equal((await refresh(third.refresh_token)).body.code, 1, 'and its refresh token');
    // Other sign-ins of the same user are untouched.
    const other = await sessionOf(server, ALICE.email);
    assert.equal(await probe(server, other.access_token), 1801);
  });

  test('by default, one client refreshing several times at once keeps its sign-in: exactly one refresh succeeds', async () => {
    const { winner } = await refreshConcurrently(server, refresh);
    assertSession(winner);
    assert.equal(await probe(server, winner.access_token), 1801);
    assertSession((await refresh(winner.refresh_token)).body.data);
  });

  test('a rotated token presented from another address within the grace period ends the sign-in', async () => {
    const first = await sessionOf(server, ALICE.email);
    const second = (await refresh(first.refresh_token)).body.data;
    assert.equal((await refresh(first.refresh_token, '10.99.0.1')).body.code, 1);
    assert.equal(await probe(server, second.access_token), 1);
    assert.equal((await refresh(second.refresh_token)).body.code, 1);
  });

  test('a token used from a new address is recovered by refreshing from there', async () => {
    const first = await sessionOf(server, ALICE.email, { ip: '10.4.0.1' });
    assert.equal(await probe(server, first.access_token, '10.4.0.2'), 1);
    const second = (await refresh(first.refresh_token, '10.4.0.2')).body.data;
    assertSession(second);
    assert.equal(await probe(server, second.access_token, '10.4.0.2'), 1801);
    assert.equal(await probe(server, second.access_token, '10.4.0.1'), 1);
  });

  test('refresh tokens expire after their lifetime', async () => {
    const first = await sessionOf(server, ALICE.email);
    server.clock.advance(server.services.config.refreshTtl);
    assert.equal((await refresh(first.refresh_token)).body.code, 1);
  });

  test('an expired access token can still be refreshed within the refresh lifetime', async () => {
    const first = await sessionOf(server, ALICE.email);
    server.clock.advance(86400);
    assert.equal(await probe(server, first.access_token), 1);
    assertSession((await refresh(first.refresh_token)).body.data);
  });

  test('unknown refresh tokens answer 1, missing ones 2', async () => {
    assert.equal((await refresh('A'.repeat(43))).body.code, 1);
    assert.equal((await server.call('auth.refresh', {})).body.code, 2);
  });

  test('an access token is not a refresh token', async () => {
    const first = await sessionOf(server, ALICE.email);
    assert.equal((await refresh(first.access_token)).body.code, 1);
  });
});

describe('auth.signout and ending sessions', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ world: await authWorld() });
  });
  after(() => server.close());

  test('auth.signout ends the presented session, its refresh token too', async () => {
    const session = await sessionOf(server, ALICE.email);
    const other = await sessionOf(server, ALICE.email);
    const answer = await server.call('auth.signout', {}, { token: session.access_token });
    assert.deepEqual(answer.body, { code: 0 });
    assert.equal(await probe(server, session.access_token), 1);
    assert.equal((await server.call('auth.refresh', { refresh_token: session.refresh_token })).body.code, 1);
    assert.equal(await probe(server, other.access_token), 1801, 'other sessions stay');
    assert.equal((await server.call('auth.signout', {}, { token: session.access_token })).body.code, 1);
    assert.equal((await server.call('auth.signout', {})).body.code, 1);
  });

  test('signing out after a refresh ends the refreshed session', async () => {
    const first = await sessionOf(server, ALICE.email);
    const second = (await server.call('auth.refresh', { refresh_token: first.refresh_token })).body.data;
    assert.deepEqual((await server.call('auth.signout', {}, { token: second.access_token })).body, { code: 0 });
    assert.equal(await probe(server, second.access_token), 1);
    assert.equal((await server.call('auth.refresh', { refresh_token: second.refresh_token })).body.code, 1);
  });

  test('revokeAllSessions ends every session of the user at once', async () => {
    const a = await sessionOf(server, BOB.email);
    const b = await sessionOf(server, BOB.email);
    const alice = await sessionOf(server, ALICE.email);
    assert.equal(await probe(server, a.access_token), 1801);
    await revokeAllSessions(server.services, BOB.user_id);
    assert.equal(await probe(server, a.access_token), 1);
    assert.equal(await probe(server, b.access_token), 1);
    assert.equal((await server.call('auth.refresh', { refresh_token: b.refresh_token })).body.code, 1);
    assert.equal(await probe(server, alice.access_token), 1801);
  });

  test('a ban through the world file ends every session of the user', async () => {
    const session = await sessionOf(server, BOB.email);
    const { importWorld } = await import('../src/world/import.js');
    await importWorld(server.db, { users: [{ user_id: BOB.user_id, nick: 'Bob', global_ban: 1 }] }, { mode: 'merge', now: 0 });
    await server.services.bus.publish(WORLD_CHANGED, {});
    assert.equal(await probe(server, session.access_token), 1);
    assert.equal((await server.call('auth.refresh', { refresh_token: session.refresh_token })).body.code, 1);
  });

  test('a revocation that never reached this process is noticed within a minute', async () => {
    const session = await sessionOf(server, ALICE.email);
    assert.equal(await probe(server, session.access_token), 1801);
    await server.db.kysely.updateTable('sessions').set({ revoked_at: 1 }).where('access_hash', '=', sha256(session.access_token)).execute();
    server.clock.advance(61);
    assert.equal(await probe(server, session.access_token), 1);
  });

  test('sessions that can never be used again are swept away; live ones stay', async () => {
    const old = await sessionOf(server, ALICE.email);
    const owner = await sessionOf(server, ALICE.email);
    const bot = (await server.call('bots.getToken', { user_id: ALICE_BOT.user_id }, { token: owner.access_token })).body.data;
    server.clock.advance(server.services.config.refreshTtl + 1);
    const fresh = await sessionOf(server, ALICE.email);
    const swept = await sweepSessions(server.services);
    assert.ok(swept.sessions >= 2);
    const remaining = await server.db.kysely.selectFrom('sessions').select('access_hash').execute();
    const hashes = new Set(remaining.map((r) => r.access_hash));
    assert.equal(hashes.has(sha256(old.access_token)), false);
    assert.equal(hashes.has(sha256(fresh.access_token)), true);
    assert.equal(hashes.has(sha256(bot.access_token)), true);
    assert.equal(await probe(server, fresh.access_token), 1801);
    assert.equal(await probe(server, bot.access_token), 4);
  });
});
