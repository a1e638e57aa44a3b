import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ok, type TestServer } from './helpers.js';
import { admin, adminCall, fails, signIn, withAdminServer } from './admin-support.js';

/**
 * What a world file (admin.importWorld, admin.upsertItemProto) may hold so that the world
 * stays one the API could have made: every export imports again, on either database.
 */

const importWorld = (server: TestServer, world: unknown, mode = 'merge') =>
  adminCall(server, 'importWorld', { world: JSON.stringify(world), mode });

/** The description of a refused import: code 2, nothing changed. */
async function refused(server: TestServer, world: unknown, mode = 'merge'): Promise<string> {
  const before = await admin(server, 'exportWorld');
  const description = fails(await importWorld(server, world, mode), 2).description!;
  assert.deepEqual(await admin(server, 'exportWorld'), before, 'a refused import changes nothing');
  return description;
}

const upsertProto = (server: TestServer, proto: Record<string, unknown>) =>
  adminCall(server, 'upsertItemProto', { item_proto: JSON.stringify(proto) });

test('NUL in any string of a world or of a prototype answers 2 naming where it is', () =>
  withAdminServer(async (server) => {
    const proto = fails(await upsertProto(server, { item_proto_id: 300, type: 0, title: 'a\u0000b' }), 2);
    assert.equal(proto.description, 'parameter item_proto: title: must not contain NUL characters');
    assert.match(await refused(server, { collections: [{ collection_id: 11, title: 'x\u0000' }] }), /collections\[0\]\.title: must not/);
    assert.match(await refused(server, { users: [{ user_id: 1, nick: 'Al\u0000ice' }] }), /users\[0\]\.nick: must not/);
    const nested = await refused(server, {
      item_protos: [{ item_proto_id: 300, type: 0, title: 'Fine', description: '\u0000', extra: { note: ['ok', 'n\u0000'] } }],
    });
    assert.match(nested, /item_protos\[0\]\.description: must not contain NUL/);
    assert.match(nested, /item_protos\[0\]\.extra\.note\[1\]: must not contain NUL/);
    const key = await refused(server, { items: [{ user_id: 1, item_proto_id: 100, data: { 'k\u0000': 1 } }] });
    assert.match(key, /items\[0\]\.data\.k\\u0000 \(the key\): must not contain NUL/);
    assert.ok(!key.includes('\u0000'));
    fails(
      await importWorld(
        server,
        { users: [{ user_id: 9, nick: 'Nine', email: 'nine@example.com', password: 'long enough\u0000' }] },
        'replace',
      ),
      2,
    );
  }));

test('lone surrogates are refused like NUL, and lengths count characters at their minimum too', () =>
  withAdminServer(async (server) => {
    const surrogate = fails(await upsertProto(server, { item_proto_id: 300, type: 0, title: 't\ud800' }), 2);
    assert.equal(surrogate.description, 'parameter item_proto: title: must be valid Unicode text (it holds a lone surrogate)');
    assert.match(
      await refused(server, { users: [{ user_id: 50, nick: 'Emoji', email: 'e@example.com', password: '😀'.repeat(5) }] }),
      /users\[0\]\.password: must be 10 to 1000 characters/,
    );
    const created = await adminCall(server, 'createUser', { email: 'f@example.com', password: '😀'.repeat(5), nick: 'Emoji' });
    assert.equal(fails(created, 2).description, 'parameter password: must be at least 10 characters');
  }));

test('a chat message of 500 astral characters that gchat.send took exports and imports again', () =>
  withAdminServer(async (server) => {
    const alice = await signIn(server, 'alice@example.com');
    const emoji = '\u{1F600}'.repeat(500);
    ok(await server.call('gchat.send', { message: emoji }, { token: alice }));
    const { world } = await admin(server, 'exportWorld');
    assert.equal(world.gchat.messages.at(-1).text, emoji);
    await admin(server, 'importWorld', { world: JSON.stringify(world), mode: 'replace' });
    assert.deepEqual((await admin(server, 'exportWorld')).world.gchat.messages, world.gchat.messages);
    const tooLong = { gchat: { messages: [{ type: 1, user_id: 1, text: '\u{1F600}'.repeat(501) }] } };
    assert.match(await refused(server, tooLong), /gchat\.messages\[0\]\.text: must be at most 500 characters/);
  }));

test('a merge refuses relations that contradict the stored ones, naming the entry and the stored relation', () =>
  withAdminServer(async (server) => {
    const [alice, bob] = [await signIn(server, 'alice@example.com'), await signIn(server, 'bob@example.com')];
    ok(await server.call('friends.add', { user_id: 2 }, { token: alice }));
    ok(await server.call('friends.add', { user_id: 1 }, { token: bob })); // 1 and 2 are friends
    ok(await server.call('blacklist.add', { user_id: 3 }, { token: alice })); // 1 blocks 3
    ok(await server.call('friends.add', { user_id: 3 }, { token: bob })); // 2 asked 3

    assert.match(await refused(server, { friends: [[3, 1]] }), /friends\[0\]: user 1 blocks user 3 in the stored world/);
    assert.match(await refused(server, { friends: [[3, 2]] }), /friends\[0\]: user 2 has asked user 3 to be friends in the stored world/);
    assert.match(
      await refused(server, { blocks: [{ user_id: 2, blocked_user_id: 1 }] }),
      /blocks\[0\]: users 2 and 1 are friends in the stored/,
    );
    assert.match(await refused(server, { blocks: [{ user_id: 3, blocked_user_id: 2 }] }), /blocks\[0\]: user 2 has asked user 3/);
    assert.match(
      await refused(server, { friend_requests: [{ from: 2, to: 1 }] }),
      /friend_requests\[0\]: users 2 and 1 are already friends/,
    );
    assert.match(
      await refused(server, { friend_requests: [{ from: 3, to: 1 }] }),
      /friend_requests\[0\]: user 1 blocks user 3 in the stored/,
    );
    assert.match(
      await refused(server, { friend_requests: [{ from: 3, to: 2 }] }),
      /friend_requests\[0\]: requests cross \(2 already asked 3/,
    );

    // What agrees with the stored graph still merges, and the result exports and imports again.
    await admin(server, 'importWorld', {
      world: JSON.stringify({ friends: [[1, 2]], blocks: [{ user_id: 1, blocked_user_id: 3 }], friend_requests: [{ from: 2, to: 3 }] }),
    });
    const { world } = await admin(server, 'exportWorld');
    await admin(server, 'importWorld', { world: JSON.stringify(world), mode: 'replace' });
  }));

test('prototypes the official SDK refuses answer 2: status, prices', () =>
  withAdminServer(async (server) => {
    const proto = { item_proto_id: 300, type: 0, title: 'Priced' };
    const status = fails(await upsertProto(server, { ...proto, item_proto_status: 7 }), 2);
    assert.equal(status.description, 'parameter item_proto: item_proto_status: must be 0, 1, 2');
    const buy = fails(await upsertProto(server, { ...proto, prices: { buy: -5 } }), 2);
    assert.match(buy.description!, /^parameter item_proto: prices\.buy: /);
    const sell = fails(await upsertProto(server, { ...proto, prices: { quick_sell: 1e308 } }), 2);
    assert.match(sell.description!, /^parameter item_proto: prices\.quick_sell: /);
    const fine = await admin(server, 'upsertItemProto', {
      item_proto: JSON.stringify({ ...proto, item_proto_status: 2, prices: { buy: 0, quick_sell: 1.5 } }),
    });
    assert.deepEqual(fine.item_proto.prices, { buy: 0, quick_sell: 1.5 });
  }));

test("a key's cases and the cases' key must agree once the prototypes are written", () =>
  withAdminServer(async (server) => {
    const cases = [
      { item_proto_id: 3000, type: 2, title: 'Case A', key_item_proto_id: 3100 },
      { item_proto_id: 3001, type: 2, title: 'Case B', key_item_proto_id: 3101 },
    ];
    const keys = [
      { item_proto_id: 3100, type: 3, title: 'Key A', case_item_proto_ids: [3000] },
      { item_proto_id: 3101, type: 3, title: 'Key B', case_item_proto_ids: [3001] },
    ];
    await admin(server, 'importWorld', { world: JSON.stringify({ item_protos: [...cases, ...keys] }) });

    const wrongCase = fails(await upsertProto(server, { ...keys[0], case_item_proto_ids: [3001] }), 2).description!;
    assert.equal(wrongCase, 'parameter item_proto: case_item_proto_ids: case 3001 opens with key 3101, not with this key 3100');
    const moved = fails(await upsertProto(server, { ...cases[1], key_item_proto_id: 3100 }), 2).description!;
    assert.equal(moved, 'parameter item_proto: key 3101 lists this case in its case_item_proto_ids, but it opens with key 3100');
    const keyless = fails(await upsertProto(server, { ...keys[0], case_item_proto_ids: [3000, 100] }), 2).description!;
    assert.match(keyless, /case 100 opens without a key, not with this key 3100/);
    assert.match(
      await refused(server, { item_protos: [{ item_proto_id: 3200, type: 3, title: 'Key C', case_item_proto_ids: [3000] }] }),
      /item_protos\[0\]\.case_item_proto_ids: case 3000 opens with key 3100, not with this key 3200/,
    );

    // A new case of a key that lists its cases, then the key listing it: one upsert each.
    await admin(server, 'upsertItemProto', { item_proto: JSON.stringify({ ...cases[0], item_proto_id: 3050, key_item_proto_id: 3100 }) });
    await admin(server, 'upsertItemProto', { item_proto: JSON.stringify({ ...keys[0], case_item_proto_ids: [3000, 3050] }) });
    // A key that lists no cases, and a case moved with both keys in one file, are fine.
    await admin(server, 'upsertItemProto', { item_proto: JSON.stringify({ ...keys[0], case_item_proto_ids: undefined }) });
    await admin(server, 'importWorld', {
      world: JSON.stringify({
        item_protos: [
          { ...cases[0], key_item_proto_id: 3101 },
          { ...keys[1], case_item_proto_ids: [3000, 3001] },
        ],
      }),
    });
    const { world } = await admin(server, 'exportWorld');
    await admin(server, 'importWorld', { world: JSON.stringify(world), mode: 'replace' });
  }));
