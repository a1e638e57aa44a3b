import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ok } from './helpers.js';
import { importWorld } from '../src/world/import.js';
import { MessageIds } from '../src/chat/message-id.js';
import { deleteMessage, postSystemMessage } from '../src/chat/moderation.js';
import { CATALOG_CHANGED, USERS_CHANGED, WORLD_CHANGED } from '../src/infra/channels.js';
import {
  ALICE,
  BOB,
  CARD,
  CAROL,
  CASE,
  MODERATOR,
  OTHER_CARD,
  call,
  chat,
  chatWorld,
  connect,
  say,
  signIn,
  withServer,
} from './chat-support.js';

const shortProtos = {
  [CARD]: { item_proto_id: CARD, type: 0, image: '/i/100.png', title: 'Old Street', description: 'a card', quality_id: 1 },
  [OTHER_CARD]: { item_proto_id: OTHER_CARD, type: 0, image: '/i/101.png', title: 'New Street', description: '', quality_id: 2 },
  [CASE]: { item_proto_id: CASE, type: 2, image: '/i/200.png', title: 'Case', description: '', quality_id: 0 },
};

/** The short forms users.get answers, for comparison with the chat's enrichment. */
async function shortUsers(server: Parameters<typeof chat>[0], ids: number[]): Promise<unknown[]> {
  return ok(await call(server, 'users.get', { user_ids: ids.join(','), type: 'short' }, { http: 'GET' }));
}

test('gchat.get shows the stored messages in order of appearance, each with exactly the fields of its type', async () => {
  const world = await chatWorld({
    gchat: {
      status: { slowmode: true },
      messages: [
        { msg_id: 'm-1', type: 1, user_id: ALICE, ts: 1000, text: 'hello @2', user_ids_mentioned: [BOB] },
        { msg_id: 'm-2', type: 2, user_id: BOB, ts: 1001, case_item_proto_id: CASE, drop_item_proto_id: CARD },
        { msg_id: 'm-3', type: 3, user_id: CAROL, ts: 1002, user_id_receiver: ALICE, item_proto_id: OTHER_CARD },
        { msg_id: 'm-4', type: 4, user_id: ALICE, ts: 1003, item_proto_ids: [CARD, OTHER_CARD] },
      ],
    },
  });
  await withServer({ world }, async (server) => {
    const expected = [
      { type: 1, user_id: ALICE, msg_id: 'm-1', ts: 1000, text: 'hello @2', user_ids_mentioned: [BOB] },
      { type: 2, user_id: BOB, msg_id: 'm-2', ts: 1001, case_item_proto_id: CASE, drop_item_proto_id: CARD },
      { type: 3, user_id: CAROL, msg_id: 'm-3', ts: 1002, user_id_receiver: ALICE, item_proto_id: OTHER_CARD },
      { type: 4, user_id: ALICE, msg_id: 'm-4', ts: 1003, item_proto_ids: [CARD, OTHER_CARD] },
    ];
    for (const http of ['GET', 'POST'] as const) {
      const data = await chat(server, http);
      assert.deepEqual(Object.keys(data).sort(), ['item_protos', 'messages', 'status', 'users']);
      assert.deepEqual(data.messages, expected);
      assert.deepEqual(data.status, { closed: false, slowmode: true, emoteonly: false });
      assert.deepEqual(data.users, await shortUsers(server, [ALICE, BOB, CAROL]));
      assert.deepEqual(data.item_protos, [shortProtos[CARD], shortProtos[OTHER_CARD], shortProtos[CASE]]);
    }
    // No authentication: a token, even a wrong one, is ignored.
    assert.equal((await call(server, 'gchat.get', { access_token: 'not-a-token-at-all-xxxxx' })).body.code, 0);
  });
});

test('an empty chat answers empty lists and the default status', () =>
  withServer({ world: undefined }, async (server) => {
    assert.deepEqual(await chat(server), {
      messages: [],
      status: { closed: false, slowmode: false, emoteonly: false },
      users: [],
      item_protos: [],
    });
  }));

test('gchat.get keeps the newest historySize messages and names exactly the users and prototypes of those', () =>
  withServer({ config: { chat: { ...defaultChat(), historySize: 3 } } }, async (server) => {
    const alice = await signIn(server, ALICE);
    const bob = await signIn(server, BOB);
    const first = await say(server, alice, 'hi @3');
    await postSystemMessage(server.services, { type: 2, user_id: MODERATOR, case_item_proto_id: CASE, drop_item_proto_id: CARD });
    const third = await say(server, bob, 'hello @1');
    const fourth = await say(server, alice, 'how are you?');
    const fifth = await postSystemMessage(server.services, { type: 4, user_id: BOB, item_proto_ids: [OTHER_CARD] });

    const data = await chat(server);
    assert.deepEqual(
      data.messages.map((m: any) => m.msg_id),
      [third, fourth, fifth],
    );
    assert.ok(!data.messages.some((m: any) => m.msg_id === first));
    assert.deepEqual(data.users, await shortUsers(server, [ALICE, BOB]));
    assert.deepEqual(data.item_protos, [shortProtos[OTHER_CARD]]);
  }));

test('a deleted message leaves gchat.get and the next older one takes its place', () =>
  withServer({ config: { chat: { ...defaultChat(), historySize: 2 } } }, async (server) => {
    const alice = await signIn(server, ALICE);
    const ids = [];
    for (const text of ['one', 'two', 'three']) ids.push(await say(server, alice, text));
    assert.deepEqual(
      (await chat(server)).messages.map((m: any) => m.text),
      ['two', 'three'],
    );

    await deleteMessage(server.services, ids[2]);
    // A message is deleted once.
    await assert.rejects(deleteMessage(server.services, ids[2]), {
      code: 2,
      description: `parameter msg_id: no message ${ids[2]} in the chat`,
    });
    await assert.rejects(deleteMessage(server.services, 'no-such-message'), {
      code: 2,
      description: 'parameter msg_id: no message no-such-message in the chat',
    });
    assert.deepEqual(
      (await chat(server)).messages.map((m: any) => m.text),
      ['one', 'two'],
    );
  }));

test('messages sent at the same time all appear, once each, in the order the database gave them', () =>
  withServer({}, async (server) => {
    const tokens = await Promise.all([ALICE, BOB, CAROL, MODERATOR].map((id) => signIn(server, id)));
    const sent = await Promise.all(Array.from({ length: 24 }, (_, i) => say(server, tokens[i % tokens.length], `message ${i}`)));
    const rows = await server.db.kysely.selectFrom('chat_messages').select(['msg_id']).orderBy('msg_seq').execute();
    const shown = (await chat(server)).messages.map((m: any) => m.msg_id);
    assert.deepEqual(
      shown,
      rows.map((r) => r.msg_id),
    );
    assert.deepEqual([...shown].sort(), [...sent].sort());
    assert.equal(new Set(shown).size, 24);
  }));

test('message ids made by one process are unique, of one length, and sort in order of creation', () => {
  const start = Date.UTC(2026, 0, 1);
  const generator = new MessageIds();
  fc.assert(
    fc.property(fc.array(fc.integer({ min: -5000, max: 5000 }), { minLength: 2, maxLength: 200 }), (offsets) => {
      const ids = offsets.map((offset) => generator.next(start + offset));
      for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1] < ids[i], `${ids[i - 1]} < ${ids[i]}`);
      assert.ok(ids.every((id) => id.length === ids[0].length && /^[0-9a-z]+$/.test(id)));
    }),
  );
});

test('a stored message id sorts after the newest stored id, even one made by a process whose clock is ahead', () => {
  const now = Date.UTC(2026, 0, 1);
  const generator = new MessageIds();
  fc.assert(
    fc.property(fc.integer({ min: -60_000, max: 3_600_000 }), fc.integer({ min: 0, max: 36 ** 4 - 1 }), (lead, sequence) => {
      const previous = (now + lead).toString(36).padStart(9, '0') + sequence.toString(36).padStart(4, '0') + 'zzzzzz';
      const id = generator.nextAfter(now, previous);
      assert.ok(id > previous, `${id} > ${previous}`);
      assert.match(id, /^[0-9a-z]{19}$/);
    }),
  );
  // Names that are not ids of this form, or lie more than a day ahead, do not move the ids.
  const before = generator.next(now);
  for (const name of ['imported', 'zzzzzzzzzzzzzzzzzzz', 'm-1']) {
    const id = generator.nextAfter(now, name);
    assert.ok(id > before && id.length === 19 && id < 'zzzzzzzzz', id);
  }
});

test('online flags in gchat.get lag presence by at most 30 seconds', () =>
  withServer({}, async (server) => {
    const alice = await signIn(server, ALICE);
    await say(server, alice, 'I am here');
    const aliceIn = async () => (await chat(server)).users.find((u: any) => u.user_id === ALICE);
    assert.equal((await aliceIn()).online, 1, 'writing is activity');

    server.clock.advance(301);
    assert.equal((await aliceIn()).online, undefined, 'offline once the online window passed');

    const feed = await connect(server, { token: alice });
    assert.equal((await aliceIn()).online, undefined, 'the cached flags are less than 30 seconds old');
    server.clock.advance(30);
    assert.equal((await aliceIn()).online, 1, 'a realtime connection counts as online');
    feed.close();
    await feed.closed;
  }));

test('gchat.get follows users.changed, catalog.changed and world.changed', () =>
  withServer({}, async (server) => {
    const alice = await signIn(server, ALICE);
    await say(server, alice, 'hello');
    await postSystemMessage(server.services, { type: 4, user_id: ALICE, item_proto_ids: [CARD] });

    await server.db.kysely.updateTable('users').set({ nick: 'Alicia' }).where('user_id', '=', ALICE).execute();
    await server.services.bus.publish(USERS_CHANGED, { user_ids: [ALICE] });
    assert.equal((await chat(server)).users[0].nick, 'Alicia');

    await server.db.kysely.updateTable('item_protos').set({ title: 'Older Street' }).where('item_proto_id', '=', CARD).execute();
    await server.services.bus.publish(CATALOG_CHANGED, {});
    assert.equal((await chat(server)).item_protos[0].title, 'Older Street');

    await importWorld(
      server.db,
      { gchat: { status: { emoteonly: true }, messages: [{ msg_id: 'imported', type: 1, user_id: CAROL, text: 'from a file' }] } },
      { mode: 'merge', now: 5000 },
    );
    await server.services.bus.publish(WORLD_CHANGED, {});
    const data = await chat(server);
    assert.equal(data.messages.at(-1).msg_id, 'imported');
    assert.deepEqual(data.status, { closed: false, slowmode: false, emoteonly: true });
    assert.ok(data.users.some((u: any) => u.user_id === CAROL && u.nick === 'Carol'));
  }));

function defaultChat() {
  return { historySize: 100, slowmodeInterval: 10, emoticons: ['smile', 'fire', 'gg'], botHourlyLimit: 5 };
}

test('a change whose event was lost shows within 30 seconds: the chat is read again from the database', () =>
  withServer({}, async (server) => {
    const alice = await signIn(server, ALICE);
    const seen = await say(server, alice, 'seen at once');
    // Written by hand, as if the process that wrote it could not reach the bus.
    await server.db.kysely
      .insertInto('chat_messages')
      .values({ msg_id: 'lost-event', type: 1, user_id: CAROL, ts: 1, text: 'written elsewhere', user_ids_mentioned: '[]' })
      .execute();
    await server.db.kysely.updateTable('chat_state').set({ closed: 1 }).where('id', '=', 1).execute();
    const feed = await connect(server);
    assert.deepEqual(
      (await chat(server)).messages.map((m: any) => m.msg_id),
      [seen],
    );

    server.clock.advance(30);
    const data = await chat(server);
    assert.deepEqual(
      data.messages.map((m: any) => m.msg_id),
      [seen, 'lost-event'],
    );
    assert.equal(data.status.closed, true);
    assert.deepEqual(data.users, await shortUsers(server, [ALICE, CAROL]));
    assert.deepEqual((await feed.next((f) => f.event === 'gchat.status')).data, { closed: true, slowmode: false, emoteonly: false });
    feed.close();
  }));
