import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { P, readParams } from '../src/api/params.js';
import { ApiError } from '../src/api/errors.js';
import { ok, startTestServer, type Answer, type TestServer } from './helpers.js';
import { signIn, transportWorld } from './transport-support.js';

/** Parameter notation of the spec, read the same from query strings, JSON bodies and form bodies. */
describe('parameters', () => {
  let server: TestServer;
  let aliceToken: string;

  before(async () => {
    server = await startTestServer({ world: transportWorld() });
    aliceToken = await signIn(server, 'alice@example.com');
  });
  after(async () => {
    await server.close();
  });

  const protoIds = (answer: Answer) => (ok(answer).item_protos as { item_proto_id: number }[]).map((p) => p.item_proto_id);
  const userIds = (answer: Answer) => (ok(answer) as { user_id: number }[]).map((u) => u.user_id);
  /** Asserts code 2 whose description names the parameter. */
  const badParam = (answer: Answer, name: string) => {
    assert.equal(answer.status, 200);
    assert.equal(answer.body.code, 2, JSON.stringify(answer.body));
    assert.match(answer.body.description ?? '', new RegExp(`\\b${name}\\b`), `the description names ${name}`);
  };
  const tooMany = (answer: Answer) => {
    assert.equal(answer.status, 200);
    assert.equal(answer.body.code, 6, JSON.stringify(answer.body));
  };

  test('uint: digits in a query or form, numbers or digit strings in JSON', async () => {
    const search = (count: unknown, http: 'GET' | 'POST' = 'GET', isForm = false) =>
      server.call('data.searchItemProtos', { type: '0', count }, { http, form: isForm });
    assert.equal(protoIds(await search('5')).length, 5);
    assert.equal(protoIds(await search(5, 'POST')).length, 5);
    assert.equal(protoIds(await search('5', 'POST')).length, 5);
    assert.equal(protoIds(await search('5', 'POST', true)).length, 5);
    assert.equal(protoIds(await search(' 7 ')).length, 7);
    for (const bad of ['abc', '-1', '1.5', '1e3', '0x10', '5abc']) badParam(await search(bad), 'count');
    for (const bad of [-1, 1.5, true, [3], { n: 3 }, 1e300]) badParam(await search(bad, 'POST'), 'count');
  });

  test('uint: above the cap of 50 objects answers 6, 50 is fine', async () => {
    tooMany(await server.call('data.searchItemProtos', { count: 51 }, { http: 'GET' }));
    tooMany(await server.call('data.searchItemProtos', { count: 1000 }));
    tooMany(await server.call('friends.get', { user_id: 1, count: 51 }, { http: 'GET' }));
    assert.equal(protoIds(await server.call('data.searchItemProtos', { count: 50 }, { http: 'GET' })).length, 35);
    assert.equal(ok(await server.call('friends.get', { user_id: 1, count: 50 })).count, 1);
  });

  test('defaults apply when a parameter is absent or empty', async () => {
    // data.searchItemProtos: offset 0 and count 20.
    const firstPage = protoIds(await server.call('data.searchItemProtos', { type: '0' }, { http: 'GET' }));
    assert.deepEqual(
      firstPage,
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    assert.deepEqual(
      protoIds(await server.call('data.searchItemProtos', { type: '0', count: '', offset: '' }, { http: 'GET' })),
      firstPage,
    );
    const secondPage = protoIds(await server.call('data.searchItemProtos', { type: '0', offset: '20' }, { http: 'GET' }));
    assert.deepEqual(
      secondPage,
      Array.from({ length: 15 }, (_, i) => i + 21),
    );
    // inventory.get: add_legacy defaults to 1 (things), 0 gives items.
    const legacy = ok(await server.call('inventory.get', { user_id: 1 }, { http: 'GET' }));
    assert.ok(Array.isArray(legacy.things));
    assert.equal('items' in legacy, false);
    const modern = ok(await server.call('inventory.get', { user_id: 1, add_legacy: 0 }, { http: 'GET' }));
    assert.ok(Array.isArray(modern.items));
    assert.equal('things' in modern, false);
  });

  test('bit: 0 and 1 as digits or numbers, and JSON booleans', async () => {
    const withUser = (addUser: unknown, http: 'GET' | 'POST' = 'POST') =>
      server.call('friends.get', { user_id: 1, add_user: addUser }, { http });
    for (const yes of [1, '1', true]) assert.equal(ok(await withUser(yes)).user?.user_id, 1, `add_user=${JSON.stringify(yes)}`);
    assert.equal(ok(await withUser('1', 'GET')).user?.user_id, 1);
    for (const no of [0, '0', false]) assert.equal('user' in ok(await withUser(no)), false, `add_user=${JSON.stringify(no)}`);
    assert.equal('user' in ok(await withUser('0', 'GET')), false);
    for (const bad of [2, '2', 'yes', -1, 0.5, [1]]) badParam(await withUser(bad), 'add_user');
    badParam(await withUser('maybe', 'GET'), 'add_user');
  });

  test('set: one comma-separated string in a query, a JSON body or a form', async () => {
    const get = (ids: unknown, http: 'GET' | 'POST' = 'GET', isForm = false) =>
      server.call('data.getItemProtos', { item_proto_ids: ids }, { http, form: isForm });
    assert.deepEqual(
      protoIds(await get('1,2,3')).sort((a, b) => a - b),
      [1, 2, 3],
    );
    assert.deepEqual(
      protoIds(await get('1,2,3', 'POST')).sort((a, b) => a - b),
      [1, 2, 3],
    );
    assert.deepEqual(
      protoIds(await get('1,2,3', 'POST', true)).sort((a, b) => a - b),
      [1, 2, 3],
    );
    assert.deepEqual(
      protoIds(await get(' 4 , 5 ')).sort((a, b) => a - b),
      [4, 5],
    );
    assert.deepEqual(protoIds(await get(7, 'POST')), [7]);
    assert.deepEqual(
      protoIds(await get('007,08')).sort((a, b) => a - b),
      [7, 8],
    );
    assert.deepEqual(protoIds(await get('3,999999999999999')), [3]);
    for (const bad of ['1,,2', '1,2,', ',1', '1,x', '1;2', '-1', '1.5', '1,12345678901234567']) badParam(await get(bad), 'item_proto_ids');
    badParam(await get({ a: 1 }, 'POST'), 'item_proto_ids');
  });

  test('set: more than 50 elements answers 6, 50 is fine', async () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1).join(',');
    tooMany(await server.call('data.getItemProtos', { item_proto_ids: ids(51) }, { http: 'GET' }));
    assert.deepEqual(
      protoIds(await server.call('data.getItemProtos', { item_proto_ids: ids(50) }, { http: 'GET' })).sort((a, b) => a - b),
      ids(35).split(',').map(Number),
    );
    tooMany(await server.call('users.get', { user_ids: ids(51) }, { http: 'GET' }));
    assert.equal(userIds(await server.call('users.get', { user_ids: ids(50) }, { http: 'GET' })).length, 50);
  });

  test('set: an empty value means the parameter was not given', async () => {
    // Required and empty: missing.
    badParam(await server.call('data.getItemProtos', { item_proto_ids: '' }, { http: 'GET' }), 'item_proto_ids');
    badParam(await server.call('data.getItemProtos', { item_proto_ids: '' }), 'item_proto_ids');
    // Optional and empty: no filter.
    const unfiltered = protoIds(await server.call('data.searchItemProtos', { type: '', quality_id: '', count: 50 }, { http: 'GET' }));
    assert.equal(unfiltered.length, 35);
    assert.deepEqual(
      protoIds(await server.call('data.searchItemProtos', { quality_id: '2', count: 50 }, { http: 'GET' })),
      [31, 32, 33, 34, 35],
    );
    // users.get with user_ids= and a token: the current user.
    assert.deepEqual(userIds(await server.call('users.get', { user_ids: '' }, { http: 'GET', token: aliceToken })), [1]);
    assert.equal((await server.call('users.get', { user_ids: '' }, { http: 'GET' })).body.code, 1);
  });

  test('id or domain: digits are an id, anything else a domain', async () => {
    for (const [value, http] of [
      ['bob', 'GET'],
      ['2', 'GET'],
      [2, 'POST'],
      ['2', 'POST'],
    ] as const)
      assert.deepEqual(userIds(await server.call('users.get', { user_id: value }, { http })), [2], `user_id=${JSON.stringify(value)}`);
    assert.deepEqual(userIds(await server.call('users.get', { user_ids: 'carol,1,bob' }, { http: 'GET' })), [3, 1, 2]);
    assert.equal(ok(await server.call('friends.get', { user_id: 'alice' }, { http: 'GET' })).count, 1);
    assert.equal(ok(await server.call('inventory.get', { user_id: 'alice', add_legacy: 0 }, { http: 'GET' })).count, 4);
    for (const bad of ['0', '-3']) badParam(await server.call('users.get', { user_id: bad }, { http: 'GET' }), 'user_id');
    badParam(await server.call('users.get', { user_id: 0 }), 'user_id');
    badParam(await server.call('users.get', { user_id: 1.5 }), 'user_id');
    badParam(await server.call('users.get', { user_ids: '1,0' }, { http: 'GET' }), 'user_ids');
  });

  test('optional parameters may be left out, and take their values when given', async () => {
    const full = ok(await server.call('users.get', { user_id: 1 }, { http: 'GET' }))[0];
    assert.deepEqual(full.nicks_old, ['Al']);
    const short = ok(await server.call('users.get', { user_id: 1, type: 'short' }, { http: 'GET' }))[0];
    assert.equal('nicks_old' in short, false);
    const other = ok(await server.call('users.get', { user_id: 1, type: 'anything' }, { http: 'GET' }))[0];
    assert.deepEqual(other.nicks_old, ['Al']);
  });

  test('a missing required parameter answers 2 naming it', async () => {
    badParam(await server.call('data.getItemProtos', {}, { http: 'GET' }), 'item_proto_ids');
    badParam(await server.call('data.getItemProtos', {}), 'item_proto_ids');
    badParam(await server.call('friends.add', {}, { token: aliceToken }), 'user_id');
    badParam(await server.call('friends.add', { user_id: '' }, { token: aliceToken, form: true }), 'user_id');
  });

  test('a parameter given twice or as a structure where a value belongs answers 2', async () => {
    const twice = await server.app.inject({ method: 'GET', url: '/api/data.searchItemProtos?count=1&count=2' });
    assert.equal(twice.json().code, 2);
    assert.match(twice.json().description, /count/);
    badParam(await server.call('data.searchItemProtos', { count: { value: 1 } }), 'count');
    badParam(await server.call('users.get', { user_id: [1, 2] }), 'user_id');
  });

  test('text holding a NUL character answers 2 naming the parameter, on every database', async () => {
    badParam(await server.call('users.get', { user_id: 'a\u0000b' }, { form: true }), 'user_id');
    badParam(await server.call('users.get', { user_ids: 'bob,a\u0000b' }, { http: 'GET' }), 'user_ids');
    badParam(await server.call('gchat.send', { message: 'hi\u0000there' }, { token: aliceToken }), 'message');
  });

  test('text holding a lone surrogate answers 2 naming the parameter: the databases would keep it apart', async () => {
    for (const answer of [
      await server.call('users.get', { user_id: 'a\ud800b' }),
      await server.call('gchat.send', { message: 'hi \udc00' }, { token: aliceToken }),
    ]) {
      assert.equal(answer.body.code, 2);
      assert.match(answer.body.description ?? '', /must be valid Unicode text \(it holds a lone surrogate\)/);
    }
    // A pair of surrogates is one character.
    assert.equal((await server.call('users.get', { user_id: 'a\ud83d\ude00b' })).body.code, 0);
  });

  test('JSON null counts as absent', async () => {
    assert.equal(protoIds(await server.call('data.searchItemProtos', { type: '0', count: null })).length, 20);
    badParam(await server.call('data.getItemProtos', { item_proto_ids: null }), 'item_proto_ids');
  });
});

describe('notations no public method uses', () => {
  test('double: decimal strings and JSON numbers; anything else answers 2 naming the parameter', () => {
    const schema = P.object({ ratio: P.double({ minimum: 0, maximum: 10 }), scale: P.optional(P.double({ default: 1.5 })) });
    assert.deepEqual(readParams(schema, { ratio: '2.25' }), { ratio: 2.25, scale: 1.5 });
    assert.deepEqual(readParams(schema, { ratio: 3, scale: '0.5' }), { ratio: 3, scale: 0.5 });
    for (const bad of ['abc', '1,5', 'NaN', 'Infinity', '11', -1, true]) {
      assert.throws(
        () => readParams(schema, { ratio: bad }),
        (error: unknown) => error instanceof ApiError && error.code === 2 && /\bratio\b/.test(error.description),
        `ratio=${JSON.stringify(bad)}`,
      );
    }
    assert.throws(
      () => readParams(schema, {}),
      (error: unknown) => error instanceof ApiError && error.code === 2 && /ratio/.test(error.description),
    );
  });
});
