import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery, sql } from 'kysely';
import { ok, startTestServer, type TestServer } from './helpers.js';
import { fails, idsOf, sessionFor } from './social-fixtures.js';
import { escapeLike, prefixEnd, searchMatches } from '../src/users/queries.js';
import type { World } from '../src/world/schema.js';

// Nicks and domains in several cases and scripts; 8 is globally blocked, 9 a bot.
const world: World = {
  users: [
    { user_id: 1, nick: 'Alice', domain: 'alice' },
    { user_id: 2, nick: 'alicia' },
    { user_id: 3, nick: 'ALIBABA', domain: 'ali_baba' },
    { user_id: 4, nick: 'Вася', domain: 'vasya' },
    { user_id: 5, nick: 'ВАСИЛИЙ' },
    { user_id: 6, nick: '100%_pure' },
    { user_id: 7, nick: '100 pure' },
    { user_id: 8, nick: 'Alina', global_ban: 1 },
    { user_id: 9, nick: 'AliBot', bot_owner: 1 },
    { user_id: 10, nick: 'Bob', domain: 'Alien' },
    { user_id: 11, nick: 'x_ray' },
    { user_id: 12, nick: 'xray' },
  ],
};

let server: TestServer;
before(async () => {
  server = await startTestServer({ world });
});
after(() => server.close());

const search = (params: Record<string, unknown>, token?: string) => server.call('users.search', params, { token, http: 'GET' });
const found = async (query: string) => idsOf(ok(await search({ query })).users);

test('nick or domain, prefix, any case, by nick; globally blocked accounts left out; users in the short form', async () => {
  const answer = ok(await search({ query: 'ali' }));
  // alibaba, alibot, alice, alicia by nick; Bob by his domain "Alien"; Alina is blocked.
  assert.deepEqual(idsOf(answer.users), [3, 9, 1, 2, 10]);
  assert.equal(answer.count, 5);
  const shorts = ok(await server.call('users.get', { user_ids: '3,9,1,2,10', type: 'short' }, { http: 'GET' }));
  assert.deepEqual(answer.users, shorts);
  assert.deepEqual(answer.users[1], { user_id: 9, nick: 'AliBot', gender: 0, avatar: '', bot: 1, bot_owner: 1 });
  assert.deepEqual(await found('ALI'), [3, 9, 1, 2, 10]);
  assert.deepEqual(await found('alic'), [1, 2]);
  assert.deepEqual(await found('alien'), [10]);
  assert.deepEqual(await found('alina'), []);
});

test('case is folded in every script, not only ASCII', async () => {
  assert.deepEqual(await found('вас'), [5, 4], 'василий before вася');
  assert.deepEqual(await found('ВАСИ'), [5]);
  assert.deepEqual(await found('Вася'), [4]);
  assert.deepEqual(await found('vas'), [4], 'by domain');
});

test('% and _ are plain characters; white space inside the query counts as one space', async () => {
  assert.deepEqual(await found('100%'), [6]);
  assert.deepEqual(await found('100%_'), [6]);
  assert.deepEqual(await found('x_'), [11]);
  assert.deepEqual(await found('ali_'), [3], 'by domain ali_baba');
  assert.deepEqual(await found('%a'), []);
  assert.deepEqual(await found('_ray'), []);
  assert.deepEqual(await found('\\%'), []);
  assert.deepEqual(await found('  100   pu '), [7]);
  assert.equal(escapeLike('a%b_c\\d'), 'a\\%b\\_c\\\\d');
});

test('paging: offset and count (at most 50); count is the number found', async () => {
  assert.deepEqual(ok(await search({ query: 'ali', offset: 1, count: 2 })), {
    count: 5,
    users: ok(await server.call('users.get', { user_ids: '9,1', type: 'short' }, { http: 'GET' })),
  });
  assert.deepEqual(ok(await search({ query: 'ali', count: 0 })), { count: 5, users: [] });
  assert.deepEqual(ok(await search({ query: 'ali', offset: 5 })), { count: 5, users: [] });
  assert.equal(ok(await search({ query: 'ali', count: 50 })).users.length, 5);
  fails(await search({ query: 'ali', count: 51 }), 6);
  fails(await search({ query: 'ali', offset: -1 }), 2);
});

test('a query under 2 characters (after trimming), missing or over 100 answers 2', async () => {
  for (const query of ['', 'a', '  a  ', ' ', 'я']) {
    const answer = await search({ query });
    fails(answer, 2);
    assert.equal(answer.body.description, 'parameter query: must be at least 2 characters');
  }
  fails(await search({}), 2);
  fails(await search({ query: 'a'.repeat(101) }), 2);
  assert.deepEqual(await found('a'.repeat(100)), []);
  // Characters, not UTF-16 units: 100 emoji are 200 units.
  assert.deepEqual(await found('😀'.repeat(100)), []);
  const tooLong = await search({ query: '😀'.repeat(101) });
  fails(tooLong, 2);
  assert.equal(tooLong.body.description, 'parameter query: must be at most 100 characters');
});

test('anyone may search: no token, a user token, a bot token; an invalid token answers 1', async () => {
  assert.deepEqual(idsOf(ok(await search({ query: 'bob' }, await sessionFor(server, 2))).users), [10]);
  assert.deepEqual(idsOf(ok(await search({ query: 'bob' }, await sessionFor(server, 9, { bot: true }))).users), [10]);
  fails(await search({ query: 'bob' }, 'A'.repeat(43)), 1);
});

test('a changed nick is found under the new one, not the old', async () => {
  const token = await sessionFor(server, 12);
  ok(await server.call('account.updateInfo', { nick: 'Zebra' }, { token }));
  assert.deepEqual(await found('zeb'), [12]);
  assert.deepEqual(await found('xra'), []);
});

test('the end of a prefix range: the last code point one higher', () => {
  assert.equal(prefixEnd('ab'), 'ac');
  assert.equal(prefixEnd('a\u{d7ff}'), 'a\u{e000}');
  assert.equal(prefixEnd('a\u{10ffff}'), 'b');
  assert.equal(prefixEnd('\u{10ffff}'), undefined);
});

test('the query reads the nick and domain indexes, not the whole table', async () => {
  const query = searchMatches(server.services, 'ali').select('user_id').compile();
  if (server.db.dialect === 'sqlite') {
    const plan = await server.db.kysely.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
    );
    const details = plan.rows.map((row) => row.detail).join('\n');
    assert.match(details, /users_nick_lower/, details);
    assert.match(details, /users_domain_lower/, details);
    assert.doesNotMatch(details, /SCAN users(?! USING)/, details);
  } else {
    // Tables this small are read whole when that is cheaper; with that ruled out, the plan shows the indexes apply.
    const plan = await server.db.kysely.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      return trx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]));
    });
    const text = plan.rows.map((row) => row['QUERY PLAN']).join('\n');
    assert.match(text, /users_nick_lower/, text);
    assert.match(text, /users_domain_search/, text);
    assert.doesNotMatch(text, /Seq Scan/, text);
  }
});
