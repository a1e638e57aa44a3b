import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ok, startTestServer, type TestServer } from './helpers.js';
import { fails, sessionFor } from './social-fixtures.js';
import { ALICE, ALICE_BOT, BOB, assertSession, authWorld, probe } from './auth-fixtures.js';
import { wire } from './transport-support.js';
import { startProcesses, type Processes } from './race-support.js';
import { missing } from './components.js';
import type { World } from '../src/world/schema.js';

/** bots.create: a user makes a bot of their own, up to `bots.perOwner`; then bots.getToken works for it. */

const BOTS_PER_OWNER = 3;

describe('bots.create', () => {
  let server: TestServer;
  let alice: string;
  let bob: string;
  before(async () => {
    server = await startTestServer({ world: await authWorld(), config: { bots: { perOwner: BOTS_PER_OWNER } } });
    alice = await sessionFor(server, ALICE.user_id);
    bob = await sessionFor(server, BOB.user_id);
  });
  after(() => server.close());

  const create = (nick: unknown, token = bob) => server.call('bots.create', nick === undefined ? {} : { nick }, { token });
  const botsOf = async (ownerId: number) =>
    (
      await server.db.kysely
        .selectFrom('users')
        .select(['user_id', 'nick'])
        .where('bot_owner_id', '=', ownerId)
        .orderBy('user_id')
        .execute()
    ).map((row) => [row.user_id, row.nick]);

  test('answers {user_id} of a new bot the caller owns, with the nick as sign-up stores it; bots.getToken then works for it', async () => {
    const answer = ok(await create('  Helper   Bot  '));
    assert.deepEqual(Object.keys(answer), ['user_id']);
    const botId = answer.user_id as number;
    const [profile] = ok(await server.call('users.get', { user_id: botId, type: 'short' }, { http: 'GET' }));
    assert.deepEqual(profile, { user_id: botId, nick: 'Helper Bot', gender: 0, avatar: '', bot: 1, bot_owner: BOB.user_id });

    const session = ok(await server.call('bots.getToken', { user_id: botId, ip: '127.0.0.1' }, { token: bob }));
    assertSession(session, 'bot');
    assert.equal(session.user_id, botId);
    assert.equal(await probe(server, session.access_token), 4, 'a bot token');
    const byBot = await server.call('gchat.send', { message: 'hello from a new bot', is_public: 1 }, { token: session.access_token });
    assert.equal(byBot.body.code, 0, JSON.stringify(byBot.body));
    // Someone else may not issue its tokens.
    fails(await server.call('bots.getToken', { user_id: botId }, { token: alice }), 1801);
    // It is found by its nick.
    assert.deepEqual(
      ok(await server.call('users.search', { query: 'helper b' }, { http: 'GET' })).users.map((u: { user_id: number }) => u.user_id),
      [botId],
    );
  });

  test('the nick follows the rules of sign-up: 2 to 24 characters, no control characters, not reserved', async () => {
    const before = await botsOf(BOB.user_id);
    for (const nick of ['', ' x ', 'a'.repeat(25), 'admin', 'Bots', 'bell\u0007x', 'zero\u200bwidth', 'x'.repeat(101)]) {
      const answer = await create(nick);
      assert.equal(answer.body.code, 2, `${JSON.stringify(nick)}: ${JSON.stringify(answer.body)}`);
      assert.match(answer.body.description!, /nick/);
    }
    fails(await create(undefined), 2);
    assert.deepEqual(await botsOf(BOB.user_id), before, 'nothing was created');
  });

  test('at most bots.perOwner bots per owner, counting those made otherwise; past it 1802 and nothing is created', async () => {
    // Alice already owns one bot (from the world file).
    assert.deepEqual(await botsOf(ALICE.user_id), [[ALICE_BOT.user_id, 'AliceBot']]);
    ok(await create('Second', alice));
    ok(await create('Third', alice));
    const refused = await create('Fourth', alice);
    assert.deepEqual(refused.body, {
      code: 1802,
      description: `bot limit reached: one user may own at most ${BOTS_PER_OWNER} bots`,
    });
    assert.deepEqual(
      (await botsOf(ALICE.user_id)).map(([, nick]) => nick),
      ['AliceBot', 'Second', 'Third'],
    );
    // The limit is per owner.
    ok(await create('Bobs second'));
  });

  test('a bot cannot create bots (4); without a token 1', async () => {
    const botToken = await sessionFor(server, ALICE_BOT.user_id, { bot: true });
    fails(await create('BotOfABot', botToken), 4);
    fails(await server.call('bots.create', { nick: 'Nobody' }), 1);
    assert.deepEqual(await botsOf(ALICE_BOT.user_id), []);
  });

  test('with bots.perOwner 0 nobody may create bots', async () => {
    const closed = await startTestServer({ world: await authWorld(), config: { bots: { perOwner: 0 } } });
    try {
      const token = await sessionFor(closed, BOB.user_id);
      assert.equal((await closed.call('bots.create', { nick: 'Helper' }, { token })).body.code, 1802);
    } finally {
      await closed.close();
    }
  });
});

/**
 * Concurrent bots.create calls by one owner over real connections (on PostgreSQL to two
 * processes sharing the database and Redis): exactly as many succeed as the limit leaves room for.
 */
describe('bots.create racing past the limit', { skip: missing.redis }, () => {
  const OWNERS = [1, 2, 3, 4, 5];
  const CALLS = 16;
  const LIMIT = 3;
  const world: World = { users: OWNERS.map((id) => ({ user_id: id, nick: `owner${id}` })) };
  let processes: Processes;
  before(async () => {
    processes = await startProcesses({ world, config: { rateLimit: false, bots: { perOwner: LIMIT } } });
  });
  after(() => processes.close());

  test('of many simultaneous calls exactly the limit succeed, the others answer 1802, in every round', async () => {
    const [first] = processes.servers;
    for (const owner of OWNERS) {
      const token = await sessionFor(first!, owner);
      const answers = await Promise.all(
        Array.from({ length: CALLS }, (_, i) =>
          wire(`${processes.urls[i % 2]}/api/bots.create`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body: JSON.stringify({ nick: `racer ${owner}.${i}` }),
          }),
        ),
      );
      const codes = answers.map((a) => a.body?.code as number);
      assert.ok(
        codes.every((c) => c === 0 || c === 1802),
        codes.join(','),
      );
      assert.equal(codes.filter((c) => c === 0).length, LIMIT, `owner ${owner}: ${codes.join(',')}`);
      const [{ n }] = await first!.db.kysely
        .selectFrom('users')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('bot_owner_id', '=', owner)
        .execute();
      assert.equal(Number(n), LIMIT, `owner ${owner} owns exactly ${LIMIT} bots`);
    }
  });
});
