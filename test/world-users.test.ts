import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Secret, TOTP } from 'otpauth';
import { newDatabaseLocation, ok, processDatabaseEnv, type TestServer } from './helpers.js';
import { admin, adminCall, fails, PASSWORD, signIn, smallWorld, startAdminServer } from './admin-support.js';
import { MailCatcher, mailConfig, tokenIn } from './mail-support.js';
import { runCli } from './process-support.js';
import type { World, WorldUser } from '../src/world/schema.js';

const NEW_EMAIL = 'alice@new.example';

const codeAt = (secret: string, ms: number) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: ms });

async function exported(server: TestServer): Promise<World> {
  return (await admin(server, 'exportWorld')).world as World;
}

const userIn = (world: World, userId: number): WorldUser => world.users!.find((u) => u.user_id === userId)!;

/** auth.signin of bob, then auth.totpVerify with the code: the answer's code. */
async function totpSignIn(server: TestServer, code: string): Promise<number> {
  const pending = ok(await server.call('auth.signin', { email: 'bob@example.com', password: PASSWORD })).totp_session_token;
  assert.equal(typeof pending, 'string');
  return (await server.call('auth.totpVerify', { totp_session_token: pending, code })).body.code;
}

interface Account {
  secret: string;
  recoveryCodes: string[];
  /** The authenticator code bob signed in with last. */
  usedCode: string;
}

/**
 * Through the API: alice's trade privacy and a confirmed new address, bob's two-factor sign-in
 * (one recovery code spent, one authenticator code used), carol's setup left unconfirmed; all three seen.
 */
async function setAccounts(server: TestServer, mail: MailCatcher): Promise<Account> {
  const alice = await signIn(server, 'alice@example.com');
  const privacy = { trades_income: 0, trades_income_from_friends: 1, trades_income_gifts: 0, trades_income_gifts_autoaccept: 1 };
  ok(await server.call('privacy.update', privacy, { token: alice }));
  ok(await server.call('account.updateEmail', { email: NEW_EMAIL, password: PASSWORD }, { token: alice }));
  await mail.next('alice@example.com');
  ok(await server.call('account.verifyEmail', { token: tokenIn(await mail.next(NEW_EMAIL)) }));
  await mail.next('alice@example.com');

  const bob = await signIn(server, 'bob@example.com');
  const setup = ok(await server.call('account.totpSetup', {}, { token: bob }));
  const recoveryCodes: string[] = ok(
    await server.call('account.totpEnable', { code: codeAt(setup.secret, server.clock.now()) }, { token: bob }),
  ).recovery_codes;
  assert.equal(await totpSignIn(server, recoveryCodes[0]!), 0);
  server.clock.advance(60);
  const usedCode = codeAt(setup.secret, server.clock.now());
  assert.equal(await totpSignIn(server, usedCode), 0);

  const carol = await signIn(server, 'carol@example.com');
  ok(await server.call('account.totpSetup', {}, { token: carol }));
  await server.services.presence.write();
  return { secret: setup.secret, recoveryCodes, usedCode };
}

async function withServer(run: (server: TestServer, mail: MailCatcher) => Promise<void>): Promise<void> {
  const mail = await MailCatcher.start();
  const server = await startAdminServer({ world: await smallWorld(), config: mailConfig(mail) });
  try {
    await run(server, mail);
  } finally {
    await server.close();
    await mail.close();
  }
}

describe('users in world files', () => {
  test('export carries privacy, e-mail confirmation, last_seen, the TOTP step and unused recovery code hashes; a replace gives the same world back', () =>
    withServer(async (server, mail) => {
      const now = Math.floor(server.clock.now() / 1000);
      const { secret, recoveryCodes, usedCode } = await setAccounts(server, mail);
      const world = await exported(server);
      const stored = await server.db.kysely
        .selectFrom('recovery_codes')
        .select('code_hash')
        .where('user_id', '=', 2)
        .where('used_at', 'is', null)
        .orderBy('code_hash')
        .execute();
      assert.equal(stored.length, 9);
      const { password_hash, ...alice } = userIn(world, 1);
      assert.match(password_hash!, /^\$argon2id\$/);
      assert.deepEqual(alice, {
        user_id: 1,
        email: NEW_EMAIL,
        domain: 'alice',
        nick: 'Alice',
        nicks_old: [],
        gender: 0,
        avatar: '',
        games: 0,
        games_wins: 0,
        xp: 0,
        xp_level: 0,
        inventory_privacy: 'everyone',
        messages_privacy: 'everyone',
        created_at: now,
        email_verified: 1,
        trades_income: 0,
        trades_income_from_friends: 1,
        trades_income_gifts: 0,
        trades_income_gifts_autoaccept: 1,
        last_seen: now,
      });
      const bob = userIn(world, 2);
      assert.equal(bob.totp_secret, secret);
      assert.equal(bob.totp_last_step, Math.floor(server.clock.now() / 30_000));
      assert.equal(bob.last_seen, now);
      assert.deepEqual(
        bob.recovery_code_hashes,
        stored.map((s) => s.code_hash),
      );
      const carol = userIn(world, 3);
      assert.equal(carol.totp_secret, undefined);
      assert.equal(carol.recovery_code_hashes, undefined);

      server.clock.advance(10);
      await admin(server, 'importWorld', { world: JSON.stringify(world), mode: 'replace' });
      assert.deepEqual(await exported(server), world);

      const token = await signIn(server, NEW_EMAIL);
      assert.deepEqual(ok(await server.call('privacy.get', {}, { token })), {
        inventory: 'everyone',
        messages: 'everyone',
        trades_income: 0,
        trades_income_from_friends: 1,
        trades_income_gifts: 0,
        trades_income_gifts_autoaccept: 1,
      });
      assert.equal(ok(await server.call('account.info', {}, { token })).email_verified, 1);
      assert.equal(await totpSignIn(server, usedCode), 2, 'a code already used');
      assert.equal(await totpSignIn(server, recoveryCodes[0]!), 2, 'a recovery code already used');
      assert.equal(await totpSignIn(server, recoveryCodes[1]!), 0);
      // A setup is not carried: carol starts it again.
      const carolToken = await signIn(server, 'carol@example.com');
      assert.equal((await server.call('account.totpEnable', { code: '123456' }, { token: carolToken })).body.code, 1606);
    }));

  test('a merge keeps the last TOTP step, so a used code stays refused; entries without the new fields keep the stored ones', () =>
    withServer(async (server, mail) => {
      const before = await exported(server);
      const { recoveryCodes, usedCode } = await setAccounts(server, mail);
      const after = await exported(server);

      // Entries as older files write them, and as a file exported before bob's sign-ins.
      const older = after.users!.map((u) => {
        const {
          email_verified: _v,
          trades_income: _a,
          trades_income_from_friends: _b,
          trades_income_gifts: _c,
          trades_income_gifts_autoaccept: _d,
          last_seen: _l,
          totp_last_step: _s,
          recovery_code_hashes: _r,
          ...rest
        } = u;
        return rest;
      });
      await admin(server, 'importWorld', { world: JSON.stringify({ users: older }) });
      assert.deepEqual(await exported(server), after);
      assert.equal(await totpSignIn(server, usedCode), 2);

      const earlier = after.users!.map((u) => (u.user_id === 2 ? { ...u, totp_last_step: userIn(before, 2).totp_last_step ?? 1 } : u));
      await admin(server, 'importWorld', { world: JSON.stringify({ users: earlier }) });
      assert.deepEqual(await exported(server), after, 'a merge never lowers the step');
      assert.equal(await totpSignIn(server, usedCode), 2);

      // A new secret without codes ends the old codes; given codes replace them.
      const newSecret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
      const renewed = older.map((u) => (u.user_id === 2 ? { ...u, totp_secret: newSecret } : u));
      await admin(server, 'importWorld', { world: JSON.stringify({ users: renewed }) });
      assert.equal(userIn(await exported(server), 2).recovery_code_hashes, undefined);
      assert.equal(await totpSignIn(server, recoveryCodes[1]!), 2);
      await admin(server, 'importWorld', { world: JSON.stringify({ users: after.users }) });
      assert.deepEqual(await exported(server), after);
      assert.equal(await totpSignIn(server, recoveryCodes[1]!), 0);

      // The file still lists that code as unused: merged again, it stays used.
      await admin(server, 'importWorld', { world: JSON.stringify({ users: after.users }) });
      assert.equal(await totpSignIn(server, recoveryCodes[1]!), 2, 'a used recovery code is never revived');
    }));

  test('bad user entries are refused with the entry named, and change nothing', () =>
    withServer(async (server) => {
      const before = await exported(server);
      const cases: { users: Record<string, unknown>[]; problem: RegExp }[] = [
        {
          users: [{ user_id: 4, nick: 'Dan', recovery_code_hashes: ['a'.repeat(64)] }],
          problem: /users\[\d\]\.recovery_code_hashes: recovery codes need a totp_secret/,
        },
        {
          users: [{ user_id: 4, nick: 'Dan', recovery_code_hashes: ['not a hash'] }],
          problem: /users\[\d\]\.recovery_code_hashes\[0\]/,
        },
        { users: [{ user_id: 4, nick: 'Dan', trades_income: 2 }], problem: /users\[\d\]\.trades_income/ },
        { users: [{ user_id: 4, nick: 'Dan', last_seen: -1 }], problem: /users\[\d\]\.last_seen/ },
      ];
      for (const mode of ['merge', 'replace'] as const) {
        for (const { users, problem } of cases) {
          const world = mode === 'replace' ? { ...before, users: [...before.users!, ...users] } : { users };
          const answer = fails(await adminCall(server, 'importWorld', { world: JSON.stringify(world), mode }), 2);
          assert.match(answer.description!, problem, mode);
          assert.deepEqual(await exported(server), before, `${mode}: nothing changed after ${problem}`);
        }
      }
    }));
});

describe('bots in world files', () => {
  test('bots owning bots are refused in both modes, also against stored users in a merge, and change nothing', () =>
    withServer(async (server) => {
      ok(await adminCall(server, 'createBot', { owner_id: 1, nick: 'helper' }));
      const before = await exported(server);
      const helper = before.users!.find((u) => u.bot_owner === 1)!;
      const cycle = [
        { user_id: 601, nick: 'bot1', bot_owner: 602 },
        { user_id: 602, nick: 'bot2', bot_owner: 601 },
      ];
      for (const mode of ['merge', 'replace'] as const) {
        const world = mode === 'replace' ? { ...before, users: [...before.users!, ...cycle] } : { users: cycle };
        const answer = fails(await adminCall(server, 'importWorld', { world: JSON.stringify(world), mode }), 2);
        const at = mode === 'replace' ? before.users!.length : 0;
        assert.equal(
          answer.description,
          'invalid world file:\n' +
            `  users[${at}].bot_owner: user 602 is a bot (of user 601); a bot cannot own bots\n` +
            `  users[${at + 1}].bot_owner: user 601 is a bot (of user 602); a bot cannot own bots`,
          mode,
        );
        assert.deepEqual(await exported(server), before, mode);
      }
      const merges: { users: Record<string, unknown>[]; problem: string }[] = [
        {
          users: [{ user_id: 601, nick: 'bot1', bot_owner: helper.user_id }],
          problem: `users[0].bot_owner: user ${helper.user_id} is a bot (of user 1); a bot cannot own bots`,
        },
        {
          users: [{ user_id: 1, nick: 'Alice', bot_owner: 2 }],
          problem: `users[0].bot_owner: user 1 owns the bot ${helper.user_id}; a bot cannot own bots`,
        },
      ];
      for (const { users, problem } of merges) {
        const answer = fails(await adminCall(server, 'importWorld', { world: JSON.stringify({ users }), mode: 'merge' }), 2);
        assert.equal(answer.description, `invalid world file:\n  ${problem}`);
        assert.deepEqual(await exported(server), before);
      }
      // The bot in the same file made an ordinary user: alice may become a bot.
      await admin(server, 'importWorld', {
        world: JSON.stringify({
          users: [
            { ...helper, bot_owner: undefined },
            { ...userIn(before, 1), bot_owner: 2 },
          ],
        }),
      });
      assert.equal(userIn(await exported(server), 1).bot_owner, 2);
    }));
});

describe('copies in world files', () => {
  test('copies adding up to more than 100000 are refused before anything is written', () =>
    withServer(async (server) => {
      const before = await exported(server);
      const items = Array.from({ length: 5 }, () => ({ user_id: 1, item_proto_id: 100, copies: 100_000 }));
      for (const mode of ['merge', 'replace'] as const) {
        const world = mode === 'replace' ? { ...before, items } : { items };
        const answer = fails(await adminCall(server, 'importWorld', { world: JSON.stringify(world), mode }), 2);
        assert.equal(
          answer.description,
          'invalid world file:\n  items: their copies add up to 500000, more than the 100000 one file may make (list more items one by one)',
        );
        assert.deepEqual(await exported(server), before, mode);
      }
    }));
});

describe('game-platform import without Redis', () => {
  test('says running servers must be restarted whenever it wrote, and not when it wrote nothing', async () => {
    const location = await newDatabaseLocation();
    const dir = mkdtempSync(join(tmpdir(), 'gp-world-users-'));
    const note =
      'note: servers running on this database keep serving what they read before the import: ' +
      'restart them (or run them with Redis and import with --redis) to see it\n';
    try {
      await (await startAdminServer({ location })).close();
      const env = processDatabaseEnv(location);
      const file = join(dir, 'w.json');
      writeFileSync(file, JSON.stringify(await smallWorld()));
      const first = await runCli(['import', file, '--mode', 'replace'], env);
      assert.equal(first.code, 0, first.stderr);
      assert.equal(
        first.stdout,
        `imported ${file} (replace): 3 users, 3 item prototypes, 0 items, 0 friendships, 0 chat messages\n${note}`,
      );

      writeFileSync(file, JSON.stringify({ users: [{ user_id: 1, nick: 'Alice again' }] }));
      const merged = await runCli(['import', file, '--mode', 'merge'], env);
      assert.equal(merged.code, 0, merged.stderr);
      assert.ok(merged.stdout.endsWith(note), merged.stdout);

      writeFileSync(file, '{}');
      const nothing = await runCli(['import', file], env);
      assert.equal(nothing.code, 0, nothing.stderr);
      assert.equal(nothing.stdout, `imported ${file} (merge): 0 users, 0 item prototypes, 0 items, 0 friendships, 0 chat messages\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await location.dispose();
    }
  });
});
