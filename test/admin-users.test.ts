import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Secret, TOTP } from 'otpauth';
import { ok, type TestServer } from './helpers.js';
import { admin, adminCall, fails, PASSWORD, publicUser, signIn, signInAnswer, withAdminServer } from './admin-support.js';
import { USERS_CHANGED } from '../src/infra/channels.js';
import { issueAccountToken } from '../src/accounts/account-tokens.js';

/** A call that needs a valid token: users.get without ids answers the token's owner. */
async function tokenWorks(server: TestServer, token: string): Promise<boolean> {
  const answer = await server.call('users.get', {}, { token, http: 'GET' });
  if (answer.body.code === 1) return false;
  ok(answer);
  return true;
}

test('admin.createUser creates an account that signs in and shows in users.get at once', () =>
  withAdminServer(async (server) => {
    const { user } = await admin(server, 'createUser', {
      email: '  Dana@Example.COM ',
      password: 'dana has a long password',
      nick: 'Dana',
      domain: 'dana',
      gender: 1,
      avatar: '/a/dana.png',
      vip: 1,
      approved: 1,
      rank: 'hidden',
      xp: 120,
    });
    assert.equal(user.email, 'dana@example.com');
    assert.equal(user.nick, 'Dana');
    assert.deepEqual(user.nicks_old, []);
    assert.equal(user.totp, 0);
    const row = await server.db.kysely
      .selectFrom('users')
      .select('password_hash')
      .where('user_id', '=', user.user_id)
      .executeTakeFirstOrThrow();
    assert.match(row.password_hash!, /^\$argon2id\$/);

    const seen = await publicUser(server, user.user_id);
    assert.equal(seen.nick, 'Dana');
    assert.equal(seen.domain, 'dana');
    assert.equal(seen.gender, 1);
    assert.equal(seen.vip, 1);
    assert.equal(seen.approved, 1);
    assert.deepEqual(seen.rank, { hidden: 1 });
    assert.equal(seen.xp, 120);
    const byDomain = ok(await server.call('users.get', { user_id: 'dana' }, { http: 'GET' }));
    assert.equal(byDomain[0].user_id, user.user_id);

    const token = await signIn(server, 'DANA@example.com', 'dana has a long password');
    const me = ok(await server.call('users.get', {}, { token, http: 'GET' }));
    assert.equal(me[0].user_id, user.user_id);
  }));

test('admin.createUser refuses a short password, a bad e-mail, a used e-mail or domain', () =>
  withAdminServer(async (server) => {
    fails(await adminCall(server, 'createUser', { email: 'x@example.com', password: '123456789', nick: 'X' }), 2);
    // The rules of sign-up: characters, valid Unicode, not a common password.
    for (const password of ['😀'.repeat(5), '\ud800'.repeat(10), '\ufffd'.repeat(10), '1234567890'])
      fails(await adminCall(server, 'createUser', { email: 'x@example.com', password, nick: 'X' }), 2);
    fails(await adminCall(server, 'createUser', { email: 'x@example.com', password: PASSWORD, nick: 'Lone\ud800Nick' }), 2);
    fails(await adminCall(server, 'createUser', { email: 'not-an-email', password: PASSWORD, nick: 'X' }), 2);
    fails(await adminCall(server, 'createUser', { email: 'ALICE@example.com', password: PASSWORD, nick: 'X' }), 2);
    fails(await adminCall(server, 'createUser', { email: 'x@example.com', password: PASSWORD, nick: 'X', domain: 'alice' }), 2);
    fails(await adminCall(server, 'createUser', { email: 'x@example.com', password: PASSWORD, nick: 'X', domain: '12345' }), 2);
    fails(await adminCall(server, 'createUser', { email: 'x@example.com', password: PASSWORD }), 2);
    const count = await server.db.kysely
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 3);
  }));

test('concurrent admin.createUser with one e-mail creates exactly one account', () =>
  withAdminServer(async (server) => {
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        adminCall(server, 'createUser', { email: 'race@example.com', password: PASSWORD, nick: `Racer ${i}` }),
      ),
    );
    assert.equal(answers.filter((a) => a.body.code === 0).length, 1);
    for (const answer of answers) assert.ok([0, 2].includes(answer.body.code), JSON.stringify(answer.body));
    const rows = await server.db.kysely.selectFrom('users').select('user_id').where('email', '=', 'race@example.com').execute();
    assert.equal(rows.length, 1);
  }));

test('admin.updateUser changes the given fields only, keeps old nicks and clears with an empty value', () =>
  withAdminServer(async (server) => {
    await admin(server, 'updateUser', { user_id: 1, avatar_key: 'k1', profile_cover: '/c/1.png' });
    const { user } = await admin(server, 'updateUser', { user_id: 'alice', nick: 'Alicia', games: 10, games_wins: 4, avatar_key: '' });
    assert.equal(user.nick, 'Alicia');
    assert.deepEqual(user.nicks_old, ['Alice']);
    assert.equal(user.avatar_key, undefined);
    assert.equal(user.profile_cover, '/c/1.png');
    assert.equal(user.email, 'alice@example.com');
    await admin(server, 'updateUser', { user_id: 1, nick: 'Alicia' });
    await admin(server, 'updateUser', { user_id: 1, nick: 'Ali' });

    const seen = await publicUser(server, 1);
    assert.equal(seen.nick, 'Ali');
    assert.deepEqual(seen.nicks_old, ['Alice', 'Alicia']);
    assert.equal(seen.games, 10);
    assert.equal(seen.games_wins, 4);
    assert.equal(seen.avatar_key, undefined);
    assert.equal(seen.profile_cover, '/c/1.png');

    fails(await adminCall(server, 'updateUser', { user_id: 2, domain: 'alice' }), 2);
    fails(await adminCall(server, 'updateUser', { user_id: 2, email: 'alice@example.com' }), 2);
    fails(await adminCall(server, 'updateUser', { user_id: 999, nick: 'Nobody' }), 101);
    fails(await adminCall(server, 'updateUser', { user_id: 'nobody', nick: 'Nobody' }), 101);
    fails(await adminCall(server, 'updateUser', { user_id: 2, password: 'short' }), 2);
  }));

test('admin.updateUser sets each of the four rank forms, or none, and names a missing or misplaced rank parameter', () =>
  withAdminServer(async (server) => {
    const forms: [Record<string, unknown>, unknown][] = [
      [
        { rank: 'visible', rank_id: 7, rank_pts: 1250 },
        { id: 7, pts: 1250 },
      ],
      [{ rank: 'qual', rank_qual: 5 }, { qual: 5 }],
      [{ rank: 'expired' }, { expired: 1 }],
      [{ rank: 'hidden' }, { hidden: 1 }],
      [{ nick: 'Alice' }, { hidden: 1 }],
      [{ rank: 'none' }, undefined],
    ];
    for (const [params, rank] of forms) {
      const { user } = await admin(server, 'updateUser', { user_id: 1, ...params });
      assert.deepEqual(user.rank, rank, JSON.stringify(params));
      const seen = await publicUser(server, 1);
      assert.deepEqual(seen.rank, rank, JSON.stringify(params));
      assert.equal('rank' in seen, rank !== undefined);
    }
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ rank: 'visible', rank_id: 7 }, /rank_pts.*required with rank=visible/],
      [{ rank: 'visible', rank_pts: 7 }, /rank_id.*required with rank=visible/],
      [{ rank: 'qual' }, /rank_qual.*required with rank=qual/],
      [{ rank: 'hidden', rank_qual: 2 }, /rank_qual.*only with rank=qual/],
      [{ rank_id: 3, rank_pts: 4 }, /rank_id.*only with rank=visible/],
      [{ rank: 'shown' }, /rank/],
      [{ rank: 'visible', rank_id: -1, rank_pts: 1 }, /rank_id/],
    ];
    for (const [params, description] of refused) {
      const answer = await adminCall(server, 'updateUser', { user_id: 1, ...params });
      fails(answer, 2);
      assert.match(answer.body.description!, description, JSON.stringify(params));
    }
    assert.equal('rank' in (await publicUser(server, 1)), false, 'a refused call changes nothing');
  }));

test('concurrent nick changes each keep their predecessor in nicks_old', () =>
  withAdminServer(async (server) => {
    const nicks = Array.from({ length: 10 }, (_, i) => `Bob ${i}`);
    const answers = await Promise.all(nicks.map((nick) => adminCall(server, 'updateUser', { user_id: 2, nick })));
    for (const answer of answers) ok(answer);
    const { user } = await admin(server, 'getUser', { user_id: 2 });
    assert.equal(user.nicks_old.length, 10);
    assert.deepEqual([...user.nicks_old, user.nick].sort(), ['Bob', ...nicks].sort());
  }));

test('a new password from admin.updateUser ends the sessions and the new password signs in', () =>
  withAdminServer(async (server) => {
    const token = await signIn(server, 'bob@example.com');
    assert.ok(await tokenWorks(server, token));
    await admin(server, 'updateUser', { user_id: 2, password: 'bob gets a brand new password' });
    assert.equal(await tokenWorks(server, token), false);
    assert.notEqual((await signInAnswer(server, 'bob@example.com')).code, 0);
    await signIn(server, 'bob@example.com', 'bob gets a brand new password');
  }));

test("a new password or address from admin.updateUser ends the account's reset tokens and pending changes of address", () =>
  withAdminServer(async (server) => {
    const now = Math.floor(server.clock.now() / 1000);
    const issue = (purpose: 'reset_password' | 'verify_email', email?: string) =>
      issueAccountToken(server.db.kysely, { userId: 2, purpose, ...(email ? { email } : {}), now });
    const used = async (reset: string, change: string) => [
      (await server.call('auth.resetPassword', { token: reset, password: 'a reset that comes too late' })).body.code,
      (await server.call('account.verifyEmail', { token: change })).body.code,
    ];
    let reset = await issue('reset_password');
    let change = await issue('verify_email', 'someone.else@example.net');
    await admin(server, 'updateUser', { user_id: 2, password: 'bob gets a brand new password' });
    assert.deepEqual(await used(reset, change), [1604, 1604]);

    reset = await issue('reset_password');
    change = await issue('verify_email', 'someone.else@example.net');
    await admin(server, 'updateUser', { user_id: 2, email: 'bob.again@example.com' });
    assert.deepEqual(await used(reset, change), [1604, 1604]);
    // A nick alone leaves them.
    reset = await issue('reset_password');
    await admin(server, 'updateUser', { user_id: 2, nick: 'Bobby' });
    assert.equal((await server.call('auth.resetPassword', { token: reset, password: 'a reset still in time' })).body.code, 0);
  }));

test('admin.setTotp answers a secret and otpauth URI that sign-in then asks for; admin.clearTotp turns it off', () =>
  withAdminServer(async (server) => {
    const totp = await admin(server, 'setTotp', { user_id: 1 });
    assert.match(totp.secret, /^[A-Z2-7]{32}$/);
    assert.ok(totp.otpauth_uri.startsWith('otpauth://totp/'));
    assert.ok(totp.otpauth_uri.includes(`secret=${totp.secret}`));
    assert.equal((await admin(server, 'getUser', { user_id: 1 })).user.totp, 1);

    const first = await signInAnswer(server, 'alice@example.com');
    assert.equal(first.code, 0);
    const challenge = (first.data as { totp_session_token?: string }).totp_session_token;
    assert.equal(typeof challenge, 'string');
    const code = new TOTP({ secret: Secret.fromBase32(totp.secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
      timestamp: server.clock.now(),
    });
    const session = ok(await server.call('auth.totpVerify', { totp_session_token: challenge, code }));
    assert.equal(typeof session.access_token, 'string');

    const cleared = await admin(server, 'clearTotp', { user_id: 1 });
    assert.equal(cleared.user.totp, 0);
    const direct = await signInAnswer(server, 'alice@example.com');
    assert.equal(typeof (direct.data as { access_token?: string }).access_token, 'string');
    fails(await adminCall(server, 'setTotp', { user_id: 404 }), 101);
  }));

test('admin.banUser ends sessions, refuses sign-in with 412 and marks the user inactive; admin.unbanUser lifts it', () =>
  withAdminServer(async (server) => {
    const token = await signIn(server, 'bob@example.com');
    const { user } = await admin(server, 'banUser', { user_id: 'bob' });
    assert.equal(user.global_ban, 1);
    assert.equal(await tokenWorks(server, token), false);
    assert.equal((await signInAnswer(server, 'bob@example.com')).code, 412);
    const seen = await publicUser(server, 2);
    assert.equal(seen.inactive, 'global_ban');

    const lifted = await admin(server, 'unbanUser', { user_id: 2 });
    assert.equal(lifted.user.global_ban, 0);
    assert.equal(await tokenWorks(server, token), false, 'sessions ended by the ban stay ended');
    const fresh = await signIn(server, 'bob@example.com');
    assert.ok(await tokenWorks(server, fresh));
    assert.equal((await publicUser(server, 2)).nick, 'Bob');
  }));

test('admin.muteUser mutes until a time or for a duration, visible in users.get and gchat.send', () =>
  withAdminServer(async (server) => {
    const now = Math.floor(server.clock.now() / 1000);
    const token = await signIn(server, 'carol@example.com');
    const { user } = await admin(server, 'muteUser', { user_id: 3, duration: 600 });
    assert.equal(user.muted_until, now + 600);
    assert.equal((await publicUser(server, 3)).muted, 1);
    const refused = fails(await server.call('gchat.send', { message: 'hello' }, { token }), 104);
    assert.equal((refused.data as { muted_until: number }).muted_until, now + 600);

    await admin(server, 'muteUser', { user_id: 3, muted_until: 0 });
    assert.equal((await publicUser(server, 3)).muted, undefined);
    ok(await server.call('gchat.send', { message: 'hello again' }, { token }));

    await admin(server, 'muteUser', { user_id: 3, muted_until: now + 60 });
    fails(await server.call('gchat.send', { message: 'muted' }, { token }), 104);
    server.clock.advance(61);
    ok(await server.call('gchat.send', { message: 'the mute ran out' }, { token }));

    fails(await adminCall(server, 'muteUser', { user_id: 3 }), 2);
    fails(await adminCall(server, 'muteUser', { user_id: 3, duration: 5, muted_until: now }), 2);

    // A mute ends by the end of the year 9999: later ends would not survive a world file.
    const latest = 253_402_300_799;
    assert.equal((await admin(server, 'muteUser', { user_id: 3, muted_until: latest })).user.muted_until, latest);
    fails(await adminCall(server, 'muteUser', { user_id: 3, muted_until: latest + 1 }), 2);
    const tooLong = fails(await adminCall(server, 'muteUser', { user_id: 3, duration: latest - now + 1 }), 2);
    assert.equal(tooLong.description, 'parameter duration: the mute would end after the year 9999');
    fails(await adminCall(server, 'muteUser', { user_id: 3, duration: Number.MAX_SAFE_INTEGER }), 2);
    assert.equal((await admin(server, 'getUser', { user_id: 3 })).user.muted_until, latest);
  }));

test('admin.setPrivacy decides who may read an inventory', () =>
  withAdminServer(async (server) => {
    const bob = await signIn(server, 'bob@example.com');
    const carol = await signIn(server, 'carol@example.com');
    await admin(server, 'makeFriends', { user_id: 1, other_user_id: 2 });
    const inventoryOfAlice = (token: string) => server.call('inventory.get', { user_id: 1 }, { token, http: 'GET' });

    ok(await inventoryOfAlice(carol));
    await admin(server, 'setPrivacy', { user_id: 1, inventory_privacy: 'friends' });
    ok(await inventoryOfAlice(bob));
    fails(await inventoryOfAlice(carol), 701);
    await admin(server, 'setPrivacy', { user_id: 1, inventory_privacy: 'nobody' });
    fails(await inventoryOfAlice(bob), 701);
    const { user } = await admin(server, 'setPrivacy', { user_id: 1, inventory_privacy: 'everyone' });
    assert.equal(user.inventory_privacy, 'everyone');
    ok(await inventoryOfAlice(carol));
    fails(await adminCall(server, 'setPrivacy', { user_id: 1, inventory_privacy: 'strangers' }), 2);
  }));

test("admin.killSessions ends every session of a user and no one else's", () =>
  withAdminServer(async (server) => {
    const first = await signIn(server, 'alice@example.com');
    const second = await signIn(server, 'alice@example.com');
    const other = await signIn(server, 'bob@example.com');
    assert.deepEqual(await admin(server, 'killSessions', { user_id: 1 }), { user_id: 1 });
    assert.equal(await tokenWorks(server, first), false);
    assert.equal(await tokenWorks(server, second), false);
    assert.ok(await tokenWorks(server, other));
    fails(await adminCall(server, 'killSessions', { user_id: 404 }), 101);
  }));

test('admin.createBot creates a bot its owner can issue tokens for', () =>
  withAdminServer(async (server) => {
    const { user: bot } = await admin(server, 'createBot', { owner_id: 'alice', nick: 'Dealer', avatar: '/a/bot.png' });
    assert.equal(bot.bot_owner, 1);
    assert.equal(bot.email, undefined);
    const seen = await publicUser(server, bot.user_id);
    assert.equal(seen.bot, 1);
    assert.equal(seen.bot_owner, 1);
    assert.equal(seen.nick, 'Dealer');

    const owner = await signIn(server, 'alice@example.com');
    const session = ok(await server.call('bots.getToken', { user_id: bot.user_id }, { token: owner }));
    assert.equal(session.user_id, bot.user_id);
    assert.equal(session.expires_in, 0);

    fails(await adminCall(server, 'createBot', { owner_id: bot.user_id, nick: 'Bot of a bot' }), 2);
    fails(await adminCall(server, 'createBot', { owner_id: 404, nick: 'Orphan' }), 101);
  }));

test('a user change is announced on the bus as users.changed', () =>
  withAdminServer(async (server) => {
    const seen: unknown[] = [];
    const stop = server.services.bus.subscribe(USERS_CHANGED, (message) => seen.push(message));
    try {
      await admin(server, 'updateUser', { user_id: 2, nick: 'Robert' });
      await admin(server, 'banUser', { user_id: 3 });
      await admin(server, 'muteUser', { user_id: 1, duration: 10 });
      assert.deepEqual(seen, [{ user_ids: [2] }, { user_ids: [3] }, { user_ids: [1] }]);
    } finally {
      stop();
    }
  }));
