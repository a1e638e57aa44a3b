import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { hashPassword } from '../src/auth/passwords.js';
import { wire, type WireAnswer } from './transport-support.js';
import { startProcesses, type Processes } from './race-support.js';
import { MailCatcher, mailConfig, tokenIn } from './mail-support.js';
import { missing } from './components.js';

/**
 * Password and e-mail changes racing sign-ins, over real sockets (on PostgreSQL spread over two
 * processes sharing the database and Redis), and changes that every process must see at once.
 */

const PASSWORD = 'the first secret';
const NEW_PASSWORD = 'the second secret';
const SIGNINS = 20;

describe('account changes racing sign-ins', { skip: missing.redis }, () => {
  let processes: Processes;
  let mail: MailCatcher;

  before(async () => {
    mail = await MailCatcher.start();
    const password_hash = await hashPassword(PASSWORD);
    processes = await startProcesses({
      world: {
        users: [
          { user_id: 1, email: 'racer@example.com', password_hash, nick: 'Racer' },
          { user_id: 2, email: 'rival@example.com', password_hash, nick: 'Rival' },
          { user_id: 3, email: 'watcher@example.com', password_hash, nick: 'Watcher' },
        ],
      },
      config: { rateLimit: false, trustProxy: true, ...mailConfig(mail) },
    });
  });
  after(async () => {
    await processes.close();
    await mail.close();
  });

  const address = (index: number) => `10.50.${index >> 8}.${index & 255}`;
  const call = (index: number, method: string, params: Record<string, unknown>): Promise<WireAnswer> =>
    wire(`${processes.urls[index % 2]}/api/${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': address(index), connection: 'close' },
      body: JSON.stringify(params),
    });
  /** 1801: the token works (checked through a bot that does not exist); 1: it does not. */
  const probe = async (index: number, token: string) =>
    (await call(index, 'bots.getToken', { user_id: 999_999, access_token: token })).body.code;

  test('sign-ins with the old password racing a password change: none outlives it', async () => {
    const first = await call(0, 'auth.signin', { email: 'racer@example.com', password: PASSWORD });
    const token = first.body.data.access_token;
    // The change first, and sign-ins arriving all through it (it hashes twice), so that some read
    // the old password's hash before the change commits and check it after.
    const change = call(0, 'account.updatePassword', { access_token: token, password_current: PASSWORD, password_new: NEW_PASSWORD });
    const signins = Array.from({ length: SIGNINS }, async (_, i) => {
      await sleep(i * 10);
      return call(i + 1, 'auth.signin', { email: 'racer@example.com', password: PASSWORD, captcha: 'test-pass' });
    });
    const [changed, ...answers] = await Promise.all([change, ...signins]);
    assert.equal(changed.body.code, 0, JSON.stringify(changed.body));
    for (const [i, answer] of answers.entries()) {
      assert.ok(answer.body.code === 0 || answer.body.code === 1, JSON.stringify(answer.body));
      if (answer.body.code === 0) assert.equal(await probe(i + 1, answer.body.data.access_token), 1, `sign-in ${i} outlived the change`);
    }
    assert.equal(await probe(0, changed.body.data.access_token), 1801);
    assert.equal(await probe(1, changed.body.data.access_token), 1, 'bound to the address it was issued for');
    // With a solved captcha: whether this address signed in before the change decides whether the
    // account's failures in the race ask it for one.
    assert.equal((await call(2, 'auth.signin', { email: 'racer@example.com', password: PASSWORD, captcha: 'test-pass' })).body.code, 1);
  });

  test('two accounts confirming one new address at once, while sign-ins use it: one account gets it', async () => {
    const tokens: string[] = [];
    for (const [index, email] of ['racer@example.com', 'rival@example.com'].entries()) {
      const password = email === 'racer@example.com' ? NEW_PASSWORD : PASSWORD;
      const session = (await call(index, 'auth.signin', { email, password })).body.data;
      assert.equal(
        (await call(index, 'account.updateEmail', { access_token: session.access_token, email: 'prize@example.com', password })).body.code,
        0,
      );
      tokens.push(tokenIn(await mail.next('prize@example.com')));
    }
    const verifies = tokens.map((token, i) => call(i, 'account.verifyEmail', { token }));
    const signins = Array.from({ length: SIGNINS }, (_, i) =>
      call(i + 2, 'auth.signin', { email: 'prize@example.com', password: PASSWORD, captcha: 'test-pass' }),
    );
    const [a, b, ...answers] = await Promise.all([...verifies, ...signins]);
    assert.deepEqual(
      [a!.body.code, b!.body.code].sort((x, y) => x - y),
      [0, 1601],
    );
    const { kysely } = processes.servers[0]!.db;
    const owners = await kysely.selectFrom('users').select(['user_id']).where('email', '=', 'prize@example.com').execute();
    assert.equal(owners.length, 1);
    const owner = owners[0]!.user_id;
    assert.equal(owner, a!.body.code === 0 ? 1 : 2);
    // A sign-in with the address reaches its one owner, or none (before the change, or the rival's password for the racer).
    for (const answer of answers) if (answer.body.code === 0) assert.equal(answer.body.data.user_id, owner);
  });

  test('a nick change and a revocation hold in every process from the moment they answer', async () => {
    const session = (await call(0, 'auth.signin', { email: 'watcher@example.com', password: PASSWORD })).body.data;
    const other = (await call(1, 'auth.signin', { email: 'watcher@example.com', password: PASSWORD })).body.data;
    // Both processes hold the profile and the other session in their caches.
    for (const i of [0, 1]) assert.equal((await call(i, 'users.get', { user_ids: '3' })).body.data[0].nick, 'Watcher');
    for (let round = 0; round < 2; round++) assert.equal(await probe(1, other.access_token), 1801);
    assert.equal((await call(0, 'account.updateInfo', { access_token: session.access_token, nick: 'Lookout' })).body.code, 0);
    for (const i of [0, 1]) assert.equal((await call(i, 'users.get', { user_ids: '3' })).body.data[0].nick, 'Lookout');
    assert.equal((await call(0, 'account.sessionsRevoke', { access_token: session.access_token, all_others: 1 })).body.code, 0);
    assert.equal(await probe(1, other.access_token), 1);
    assert.equal(await probe(0, session.access_token), 1801);
  });
});
