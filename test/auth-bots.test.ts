import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { allMethods } from '../src/domains.js';
import { startTestServer, type TestServer } from './helpers.js';
import { ALICE, ALICE_BOT, TOTP_USER_BOT, assertSession, authWorld, probe, sessionOf } from './auth-fixtures.js';
import { missing } from './components.js';

/**
 * Methods a bot's token may call besides the open ones (compatibility.md), and those of the
 * private messages, the game and the lobby, which bots use as players do.
 */
const BOT_METHODS = [
  'friends.add',
  'friends.delete',
  'friends.getRequests',
  'game.action',
  'games.createVsComputer',
  'games.getReplay',
  'games.my',
  'gchat.send',
  'im.delete',
  'im.dialogsGet',
  'im.historyGet',
  'im.send',
  'im.sync',
  'inventory.craft',
  'rooms.create',
  'rooms.delete',
  'rooms.invite',
  'rooms.join',
  'rooms.kick',
  'rooms.leave',
  'rooms.settingsChange',
  'rooms.startGame',
  'trades.accept',
  'trades.cancel',
  'trades.create',
  'trades.decline',
  'trades.getIncome',
  'trades.getOutbound',
  'trades.history',
];

describe('bots.getToken', () => {
  let server: TestServer;
  let owner: string;
  before(async () => {
    server = await startTestServer({ world: await authWorld() });
  });
  beforeEach(async () => {
    owner = (await sessionOf(server, ALICE.email)).access_token;
  });
  after(() => server.close());

  const getToken = (params: Record<string, unknown>, token = owner, ip = '127.0.0.1') =>
    server.call('bots.getToken', params, { token, ip });

  test('answers a Session without refresh token and with expires 0; the token never expires', async () => {
    const answer = await getToken({ user_id: ALICE_BOT.user_id, ip: '192.0.2.10' });
    assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
    assertSession(answer.body.data, 'bot');
    assert.deepEqual(Object.keys(answer.body.data).sort(), ['access_token', 'expires', 'expires_in', 'user_id']);
    assert.equal(answer.body.data.user_id, ALICE_BOT.user_id);
    const token = answer.body.data.access_token;
    assert.equal(await probe(server, token, '192.0.2.10'), 4);
    server.clock.advance(10 * 365 * 86400);
    assert.equal(await probe(server, token, '192.0.2.10'), 4);
  });

  test("the token is bound to ip, by default the caller's address", async () => {
    const bound = (await getToken({ user_id: ALICE_BOT.user_id, ip: '2001:DB8:0:0::1' })).body.data.access_token;
    assert.equal(await probe(server, bound, '2001:db8::1'), 4);
    assert.equal(await probe(server, bound, '2001:db8::2'), 1);
    assert.equal(await probe(server, bound, '127.0.0.1'), 1);

    const byDefault = (await getToken({ user_id: ALICE_BOT.user_id }, owner, '127.0.0.1')).body.data.access_token;
    assert.equal(await probe(server, byDefault, '127.0.0.1'), 4);
    assert.equal(await probe(server, byDefault, '192.0.2.10'), 1);
  });

  test('bot tokens stay bound to their address even when user tokens are not', async () => {
    const unbound = await startTestServer({ world: await authWorld(), config: { bindTokensToIp: false } });
    try {
      const ownerToken = (await sessionOf(unbound, ALICE.email)).access_token;
      const answer = await unbound.call('bots.getToken', { user_id: ALICE_BOT.user_id, ip: '192.0.2.20' }, { token: ownerToken });
      assert.equal(await probe(unbound, answer.body.data.access_token, '192.0.2.20'), 4);
      assert.equal(await probe(unbound, answer.body.data.access_token, '192.0.2.21'), 1);
    } finally {
      await unbound.close();
    }
  });

  test('a new token revokes every earlier token of the bot at once', async () => {
    const first = (await getToken({ user_id: ALICE_BOT.user_id, ip: '192.0.2.30' })).body.data.access_token;
    assert.equal(await probe(server, first, '192.0.2.30'), 4);
    const second = (await getToken({ user_id: ALICE_BOT.user_id, ip: '192.0.2.31' })).body.data.access_token;
    assert.equal(await probe(server, first, '192.0.2.30'), 1);
    assert.equal(await probe(server, second, '192.0.2.31'), 4);
    const third = (await getToken({ user_id: ALICE_BOT.user_id, ip: '192.0.2.30' })).body.data.access_token;
    assert.equal(await probe(server, first, '192.0.2.30'), 1);
    assert.equal(await probe(server, second, '192.0.2.31'), 1);
    assert.equal(await probe(server, third, '192.0.2.30'), 4);
  });

  test('concurrent reissues leave exactly one token alive', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => getToken({ user_id: ALICE_BOT.user_id, ip: '192.0.2.40' })));
    assert.ok(answers.every((a) => a.body.code === 0));
    const alive = [];
    for (const answer of answers) if ((await probe(server, answer.body.data.access_token, '192.0.2.40')) === 4) alive.push(answer);
    assert.equal(alive.length, 1);
  });

  test("a bot that does not exist, is not a bot, or is someone else's answers 1801", async () => {
    assert.equal((await getToken({ user_id: 424242 })).body.code, 1801);
    assert.equal((await getToken({ user_id: ALICE.user_id })).body.code, 1801);
    assert.equal((await getToken({ user_id: TOTP_USER_BOT.user_id })).body.code, 1801);
  });

  test('an invalid ip answers 2; user_id is required', async () => {
    for (const ip of ['300.1.1.1', 'localhost', '1.2.3', '::g', '1.2.3.4/24']) {
      const answer = await getToken({ user_id: ALICE_BOT.user_id, ip });
      assert.equal(answer.body.code, 2, ip);
      assert.match(answer.body.description!, /ip/);
    }
    assert.equal((await getToken({})).body.code, 2);
  });

  test("requires the owner's token", async () => {
    assert.equal((await server.call('bots.getToken', { user_id: ALICE_BOT.user_id })).body.code, 1);
    assert.equal((await getToken({ user_id: ALICE_BOT.user_id }, 'A'.repeat(43))).body.code, 1);
  });

  test('a globally blocked bot gets no token', async () => {
    await server.db.kysely.updateTable('users').set({ global_ban: 1 }).where('user_id', '=', ALICE_BOT.user_id).execute();
    try {
      assert.equal((await getToken({ user_id: ALICE_BOT.user_id })).body.code, 412);
    } finally {
      await server.db.kysely.updateTable('users').set({ global_ban: 0 }).where('user_id', '=', ALICE_BOT.user_id).execute();
    }
  });

  test('a bot token may call only the open methods and the bot methods; others answer 4', async () => {
    const token = (await getToken({ user_id: ALICE_BOT.user_id })).body.data.access_token;
    const checked: string[] = [];
    for (const method of allMethods()) {
      if (method.auth === 'admin') continue;
      const answer = await server.call(method.name, {}, { token });
      const allowed = method.auth !== 'required' || BOT_METHODS.includes(method.name);
      if (allowed) assert.notEqual(answer.body.code, 4, `${method.name} is open to bots`);
      else assert.equal(answer.body.code, 4, `${method.name} is closed to bots`);
      checked.push(method.name);
    }
    assert.ok(checked.includes('bots.getToken') && checked.includes('auth.signout'));
    // The token was not used up by any of that.
    assert.equal(await probe(server, token), 4);
  });
});

describe('bot tokens across processes', { skip: missing.redis }, () => {
  test('a reissue revokes earlier tokens in every process sharing the database and Redis', async () => {
    const first = await startTestServer({ world: await authWorld(), redis: true });
    const second = await startTestServer({ redis: true, location: first.location });
    try {
      const owner = (await sessionOf(first, ALICE.email)).access_token;
      assert.equal(await probe(second, owner), 1801, 'a user token works in the other process');
      const servers = [first, second];
      let previous: string | undefined;
      for (let round = 0; round < 20; round++) {
        const issuer = servers[round % 2]!;
        const answer = await issuer.call('bots.getToken', { user_id: ALICE_BOT.user_id, ip: '127.0.0.1' }, { token: owner });
        assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
        const current = answer.body.data.access_token as string;
        for (const server of servers) {
          if (previous) assert.equal(await probe(server, previous), 1, `round ${round}: the earlier token is dead everywhere`);
          assert.equal(await probe(server, current), 4, `round ${round}: the new token works everywhere`);
        }
        previous = current;
      }
    } finally {
      await second.close();
      await first.close();
    }
  });

  test('signing out, refreshing and ending all sessions take effect in every process', async () => {
    const first = await startTestServer({ world: await authWorld(), redis: true });
    const second = await startTestServer({ redis: true, location: first.location });
    try {
      const a = await sessionOf(first, ALICE.email);
      const b = await sessionOf(first, ALICE.email);
      const c = await sessionOf(first, ALICE.email);
      for (const s of [a, b, c]) assert.equal(await probe(second, s.access_token), 1801);

      assert.deepEqual((await first.call('auth.signout', {}, { token: a.access_token })).body, { code: 0 });
      assert.equal(await probe(second, a.access_token), 1);

      assert.equal((await first.call('auth.refresh', { refresh_token: b.refresh_token })).body.code, 0);
      assert.equal(await probe(second, b.access_token), 1);

      const { revokeAllSessions } = await import('../src/auth/sessions.js');
      await revokeAllSessions(first.services, ALICE.user_id);
      assert.equal(await probe(second, c.access_token), 1);
    } finally {
      await second.close();
      await first.close();
    }
  });
});
