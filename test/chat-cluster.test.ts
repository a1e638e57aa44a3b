import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { deleteMessage, postSystemMessage, setChatStatus } from '../src/chat/moderation.js';
import {
  ALICE,
  BOB,
  BOT,
  CARD,
  CAROL,
  assertPushedOnceInOrder,
  botToken,
  chat,
  chatWorld,
  connect,
  fails,
  say,
  send,
  signIn,
  withCluster,
} from './chat-support.js';
import { missing } from './components.js';

test('a message sent through one process reaches the subscribers and gchat.get of the other', { skip: missing.redis }, () =>
  withCluster(async (first, second) => {
    const alice = await signIn(first, ALICE);
    const bob = await signIn(second, BOB);
    const onFirst = await connect(first);
    const onSecond = await connect(second);

    const fromFirst = await say(first, alice, 'hello from the first process @2');
    const fromSecond = await say(second, bob, 'hello back from the second');
    const system = await postSystemMessage(first.services, { type: 4, user_id: CAROL, item_proto_ids: [CARD] });
    for (const feed of [onFirst, onSecond]) for (const msgId of [fromFirst, fromSecond, system]) await feed.added(msgId);

    // Each process applied every event before pushing it, so both answer the same now.
    const [seenFirst, seenSecond] = [await chat(first), await chat(second)];
    assert.deepEqual(seenSecond, seenFirst);
    assert.deepEqual(
      seenFirst.messages.map((m: any) => m.msg_id),
      [fromFirst, fromSecond, system],
    );
    assert.deepEqual(
      seenFirst.users.map((u: any) => u.user_id),
      [ALICE, BOB, CAROL],
    );
    assert.deepEqual(
      seenFirst.item_protos.map((p: any) => p.item_proto_id),
      [CARD],
    );
    assert.equal(onSecond.frames.filter((f) => f.event === 'gchat.add' && f.data.message.msg_id === fromFirst).length, 1, 'pushed once');
    onFirst.close();
    onSecond.close();
  }),
);

test('status changes and deletions made in one process apply in the other', { skip: missing.redis }, () =>
  withCluster(async (first, second) => {
    const alice = await signIn(second, ALICE);
    const onSecond = await connect(second);
    const msgId = await say(second, alice, 'to be removed');
    await onSecond.added(msgId);

    await setChatStatus(first.services, { closed: true });
    assert.deepEqual((await onSecond.next((f) => f.event === 'gchat.status')).data, { closed: true, slowmode: false, emoteonly: false });
    assert.deepEqual((await chat(second)).status, { closed: true, slowmode: false, emoteonly: false });
    assert.deepEqual(fails(await send(second, alice, 'closed?'), 1203).data, { type: 'DISABLED' });

    await deleteMessage(first.services, msgId);
    await onSecond.next((f) => f.event === 'gchat.delete' && f.data.msg_id === msgId);
    assert.deepEqual((await chat(second)).messages, []);
    onSecond.close();
  }),
);

test('slow mode and bot quotas are counted across processes', { skip: missing.redis }, () =>
  withCluster(async (first, second) => {
    const alice = await signIn(first, ALICE);
    const bot = await botToken(first, alice, BOT);
    for (let i = 0; i < 3; i++) await say(first, bot, `news ${i}`);
    for (let i = 3; i < 5; i++) await say(second, bot, `news ${i}`);
    assert.deepEqual(fails(await send(first, bot, 'news 5'), 1203).data, { type: 'BOT_LIMITATIONS' });
    fails(await send(second, bot, 'news 0'), 1203);

    const onSecond = await connect(second);
    await setChatStatus(first.services, { slowmode: true });
    await onSecond.next((f) => f.event === 'gchat.status' && f.data.slowmode === true);
    await say(first, alice, 'first');
    fails(await send(second, alice, 'second, elsewhere'), 7);
    const both = await Promise.all([send(first, alice, 'race a'), send(second, alice, 'race b')]);
    assert.ok(both.every((a) => a.body.code === 7));
    onSecond.close();
  }),
);

test("a bot's message for one user reaches that user's connection on the other process only", { skip: missing.redis }, () =>
  withCluster(async (first, second) => {
    const alice = await signIn(first, ALICE);
    const bot = await botToken(first, alice, BOT);
    const bobOnSecond = await connect(second, { token: await signIn(second, BOB) });
    const carolOnSecond = await connect(second, { token: await signIn(second, CAROL) });

    const whisper = await say(first, bot, '@2 it is your turn');
    await bobOnSecond.added(whisper);
    const marker = await say(first, bot, 'a public line');
    await carolOnSecond.added(marker);
    assert.equal(carolOnSecond.hasAdded(whisper), false);
    assert.deepEqual(
      (await chat(second)).messages.map((m: any) => m.msg_id),
      [marker],
    );
    bobOnSecond.close();
    carolOnSecond.close();
  }),
);

test('deployments sharing one Redis under different prefixes do not see each other', { skip: missing.redis }, () =>
  withCluster(async (first) => {
    const elsewhere = await startTestServer({ world: await chatWorld(), redis: true });
    try {
      const feed = await connect(elsewhere);
      const sent = await say(first, await signIn(first, ALICE), 'only for this deployment');
      const local = await say(elsewhere, await signIn(elsewhere, ALICE), 'only for the other one');
      await feed.added(local);
      assert.equal(feed.hasAdded(sent), false);
      assert.deepEqual(
        (await chat(elsewhere)).messages.map((m: any) => m.msg_id),
        [local],
      );
      feed.close();
    } finally {
      await elsewhere.close();
    }
  }),
);

test(
  'many concurrent sends through three processes: each message once in gchat.get and in every feed, in msg_id order',
  { skip: missing.redis },
  async () => {
    const config = { chat: { historySize: 500, slowmodeInterval: 10, emoticons: ['smile'], botHourlyLimit: 5 } };
    const first = await startTestServer({ world: await chatWorld(), redis: true, config });
    const others: TestServer[] = [];
    try {
      for (let i = 0; i < 2; i++) others.push(await startTestServer({ location: first.location, redis: true, clock: first.clock, config }));
      const servers = [first, ...others];
      const tokens = await Promise.all([ALICE, BOB, CAROL].map((id) => signIn(first, id)));
      const feeds = await Promise.all(servers.map((server) => connect(server)));

      const perServer = 40;
      const sends = servers.flatMap((server, s) =>
        Array.from({ length: perServer }, (_, i) =>
          say(server, tokens[i % tokens.length], `process ${s} message ${i}`).then((msgId) => ({ msgId, origin: s })),
        ),
      );
      const sent = await Promise.all(sends);
      const ids = sent.map((x) => x.msgId);
      assert.equal(new Set(ids).size, servers.length * perServer, 'every msg_id is new');
      const sorted = [...ids].sort();

      const rows = await first.db.kysely.selectFrom('chat_messages').select('msg_id').orderBy('msg_seq').execute();
      assert.deepEqual(
        rows.map((r) => r.msg_id),
        sorted,
        'the order of appearance is the order of the ids',
      );
      for (const feed of feeds) for (const msgId of ids) await feed.added(msgId);
      for (const server of servers)
        assert.deepEqual(
          (await chat(server)).messages.map((m: any) => m.msg_id),
          sorted,
        );

      // One marker per process, sent after everything: a duplicate pushed before it would show.
      const markers = await Promise.all(servers.map((server, s) => say(server, tokens[s], `marker ${s}`)));
      await assertPushedOnceInOrder(feeds, ids, markers, new Map(sent.map((x) => [x.msgId, x.origin])), servers.length);
      for (const feed of feeds) feed.close();
    } finally {
      for (const server of others) await server.close();
      await first.close();
    }
  },
);
