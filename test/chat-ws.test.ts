import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ok } from './helpers.js';
import { defaultConfig } from '../src/config.js';
import { deleteMessage, postSystemMessage, setChatStatus } from '../src/chat/moderation.js';
import { ChatAddEvent, ChatStatus } from '../src/chat/schemas.js';
import { ADMIN_KEY, admin } from './admin-support.js';
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
  connect,
  listen,
  openSocket,
  say,
  signIn,
  withServer,
  type FeedClient,
} from './chat-support.js';

const addFrame = TypeCompiler.Compile(ChatAddEvent);
const statusFrame = TypeCompiler.Compile(ChatStatus);

/** Waits until `check` holds, looking again after each short pause (the test's timeout bounds it). */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await sleep(20);
}

test('subscribers receive each new message as gchat.add with the users and prototypes it names', () =>
  withServer({}, async (server) => {
    const alice = await signIn(server, ALICE);
    const feeds = [await connect(server), await connect(server, { token: await signIn(server, CAROL) })];

    const text = await say(server, alice, 'hello @2');
    const drop = await postSystemMessage(server.services, { type: 2, user_id: BOB, case_item_proto_id: CASE, drop_item_proto_id: CARD });
    const data = await chat(server);
    for (const feed of feeds) {
      for (const msgId of [text, drop]) {
        const frame = await feed.added(msgId);
        assert.ok(addFrame.Check(frame.data), JSON.stringify([...addFrame.Errors(frame.data)].slice(0, 2)));
        const message = data.messages.find((m: any) => m.msg_id === msgId);
        assert.deepEqual(frame.data.message, message);
        const named = new Set([message.user_id, ...(message.user_ids_mentioned ?? [])]);
        assert.deepEqual(
          frame.data.users,
          data.users.filter((u: any) => named.has(u.user_id)),
        );
        const protos = new Set([message.case_item_proto_id, message.drop_item_proto_id].filter(Boolean));
        assert.deepEqual(
          frame.data.item_protos,
          data.item_protos.filter((p: any) => protos.has(p.item_proto_id)),
        );
      }
      assert.deepEqual(
        feed.frames[0],
        feed.frames.find((f) => f.event === 'ready'),
      );
    }
    assert.deepEqual(feeds[0].frames[0].data, { subs: ['gchat'] });
    assert.deepEqual(feeds[1].frames[0].data, { subs: ['gchat'], user_id: CAROL });
    for (const feed of feeds) feed.close();
  }));

test('status changes arrive as gchat.status and deletions as gchat.delete', () =>
  withServer({}, async (server) => {
    const alice = await signIn(server, ALICE);
    const feed = await connect(server);
    await setChatStatus(server.services, { slowmode: true, slowmode_interval: 30 });
    const status = await feed.next((f) => f.event === 'gchat.status');
    assert.ok(statusFrame.Check(status.data));
    assert.deepEqual(status.data, { closed: false, slowmode: true, emoteonly: false });

    // Only the interval changes: nothing gchat.get shows changed, so no event.
    await setChatStatus(server.services, { slowmode_interval: 40 });
    await setChatStatus(server.services, { emoteonly: true, slowmode: false });
    await feed.next((f) => f.event === 'gchat.status' && f.data.emoteonly === true);
    assert.deepEqual(
      feed.frames.filter((f) => f.event === 'gchat.status').map((f) => f.data),
      [
        { closed: false, slowmode: true, emoteonly: false },
        { closed: false, slowmode: false, emoteonly: true },
      ],
    );

    const msgId = await say(server, alice, ':smile:');
    await feed.added(msgId);
    await deleteMessage(server.services, msgId);
    const deletion = await feed.next((f) => f.event === 'gchat.delete');
    assert.deepEqual(deletion.data, { msg_id: msgId });
    assert.deepEqual((await chat(server)).messages, []);
    feed.close();
  }));

test('the token is optional; an invalid one closes the connection with a reason; subs picks the topics', () =>
  withServer({}, async (server) => {
    const base = await listen(server);
    const refused = await openSocket(`${base}/ws?access_token=not-a-valid-token-at-all&subs=gchat&format=json`);
    const closed = await new Promise<{ code: number; reason: string }>((resolve) =>
      refused.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    assert.deepEqual(closed, { code: 4001, reason: 'invalid access token' });

    const other = await connect(server, { subs: 'friends,gchat-nope' });
    assert.deepEqual(other.frames[0], { event: 'ready', data: { subs: [] } });
    other.close();
    const spaced = await connect(server, { subs: ' gchat , other' });
    assert.deepEqual(spaced.frames[0].data, { subs: ['gchat'] });
    spaced.close();

    // A plain HTTP request to /ws is not a WebSocket: 426, in the envelope.
    const plain = await server.app.inject({ method: 'GET', url: '/ws' });
    assert.equal(plain.statusCode, 426);
    assert.equal(plain.json().code, 2);
  }));

test('signing out closes the connections of that session with 4003', () =>
  withServer({}, async (server) => {
    const [bob, carol] = await Promise.all([signIn(server, BOB), signIn(server, CAROL)]);
    const bobFeed = await connect(server, { token: bob });
    const carolFeed = await connect(server, { token: carol });
    ok(await call(server, 'auth.signout', {}, { token: bob }));
    assert.deepEqual(await bobFeed.closed, { code: 4003, reason: 'session revoked' });
    const after = await say(server, carol, 'still here');
    await carolFeed.added(after);
    carolFeed.close();
  }));

test('a signed-in subscriber counts as online while connected', () =>
  withServer({}, async (server) => {
    const carol = await signIn(server, CAROL);
    const onlineFlag = async () => ok(await call(server, 'users.get', { user_id: CAROL }, { http: 'GET' }))[0].online;
    const feed = await connect(server, { token: carol });
    server.clock.advance(3600);
    assert.equal(await onlineFlag(), 1);
    feed.close();
    await feed.closed;
    await eventually(async () => (await onlineFlag()) === undefined);
  }));

// A bounded wait: on a starved machine a live client can miss its pong, and the test must fail, not hang.
test('heartbeats: live clients are pinged and kept, clients that stop answering are dropped', { timeout: 120_000 }, () =>
  withServer({ config: { ws: { heartbeatSeconds: 0.25, maxQueueBytes: 1 << 20, maxFrameBytes: 16 * 1024 } } }, async (server) => {
    assert.equal(defaultConfig().ws.heartbeatSeconds, 30, 'every 30 seconds unless configured');
    const live = await connect(server);
    let pings = 0;
    const pinged = new Promise<void>((resolve) => live.socket.on('ping', () => ++pings === 3 && resolve()));
    const silent = await connect(server, { client: { autoPong: false } });
    await pinged;
    assert.equal((await silent.closed).code, 1006);
    assert.equal(live.socket.readyState, live.socket.OPEN);
    live.close();
  }),
);

test('a subscriber that does not read is dropped once its queue passes maxQueueBytes; others keep receiving', () =>
  withServer({ config: { ws: { heartbeatSeconds: 30, maxQueueBytes: 1 << 20, maxFrameBytes: 16 * 1024 } } }, async (server) => {
    const alice = await signIn(server, ALICE);
    const reader = await connect(server);
    const stalled = await connect(server);
    (stalled.socket as unknown as { _socket: { pause(): void } })._socket.pause();

    const feed = server.services.realtime;
    assert.equal(feed.size, 2);
    const filler = (i: number) => ({
      message: { type: 1, user_id: ALICE, msg_id: `filler-${i}`, ts: 0, text: 'x'.repeat(256 * 1024), user_ids_mentioned: [] },
      users: [],
      item_protos: [],
    });
    // Up to 100 MB: far more than the socket buffers of both ends hold. The reader keeps up.
    for (let i = 0; i < 400 && feed.size === 2; i++) {
      await feed.publish({ topic: 'gchat', type: 'gchat.add', json: filler(i) });
      await reader.added(`filler-${i}`);
    }
    assert.equal(feed.size, 1, 'the stalled subscriber was dropped');
    (stalled.socket as unknown as { _socket: { resume(): void } })._socket.resume();
    assert.equal((await stalled.closed).code, 1006);

    const after = await say(server, alice, 'still flowing');
    await reader.added(after);
    reader.close();
  }));

test('frames from clients above maxFrameBytes close the connection with 1009', () =>
  withServer({ config: { ws: { heartbeatSeconds: 30, maxQueueBytes: 1 << 20, maxFrameBytes: 1024 } } }, async (server) => {
    const feed = await connect(server);
    feed.socket.send('small frames are ignored');
    feed.socket.send('y'.repeat(2048));
    assert.equal((await feed.closed).code, 1009);
  }));

test('stopping the server closes every subscriber with 1001', async () => {
  let feed: FeedClient | undefined;
  await withServer({}, async (server) => {
    feed = await connect(server);
  });
  assert.deepEqual(await feed!.closed, { code: 1001, reason: 'server shutting down' });
});

test('admin API: system messages of types 2, 3 and 4, status changes and deletions arrive as frames of exactly this shape', () =>
  withServer({ config: { adminKey: ADMIN_KEY } }, async (server) => {
    const shortUsers = async (ids: number[]) =>
      ok(await call(server, 'users.get', { user_ids: ids.join(','), type: 'short' }, { http: 'GET' }));
    const protos: Record<number, object> = {
      [CARD]: { item_proto_id: CARD, type: 0, image: '/i/100.png', title: 'Old Street', description: 'a card', quality_id: 1 },
      [OTHER_CARD]: { item_proto_id: OTHER_CARD, type: 0, image: '/i/101.png', title: 'New Street', description: '', quality_id: 2 },
      [CASE]: { item_proto_id: CASE, type: 2, image: '/i/200.png', title: 'Case', description: '', quality_id: 0 },
    };
    const proto = (id: number) => protos[id];
    const feed = await connect(server);
    const ts = Math.floor(server.clock.now() / 1000);

    const drop = (await admin(server, 'postSystemMessage', { type: 2, user_id: BOB, case_item_proto_id: CASE, drop_item_proto_id: CARD }))
      .msg_id;
    const gift = (await admin(server, 'postSystemMessage', { type: 3, user_id: CAROL, user_id_receiver: ALICE, item_proto_id: OTHER_CARD }))
      .msg_id;
    const promo = (await admin(server, 'postSystemMessage', { type: 4, user_id: MODERATOR, item_proto_ids: `${OTHER_CARD},${CARD}` }))
      .msg_id;
    assert.ok(drop < gift && gift < promo, 'ids sort in order of appearance');

    assert.deepEqual(await feed.added(drop), {
      event: 'gchat.add',
      data: {
        message: { type: 2, user_id: BOB, msg_id: drop, ts, case_item_proto_id: CASE, drop_item_proto_id: CARD },
        users: await shortUsers([BOB]),
        item_protos: [proto(CARD), proto(CASE)],
      },
    });
    assert.deepEqual(await feed.added(gift), {
      event: 'gchat.add',
      data: {
        message: { type: 3, user_id: CAROL, msg_id: gift, ts, user_id_receiver: ALICE, item_proto_id: OTHER_CARD },
        users: await shortUsers([ALICE, CAROL]),
        item_protos: [proto(OTHER_CARD)],
      },
    });
    assert.deepEqual(await feed.added(promo), {
      event: 'gchat.add',
      data: {
        message: { type: 4, user_id: MODERATOR, msg_id: promo, ts, item_proto_ids: [OTHER_CARD, CARD] },
        users: await shortUsers([MODERATOR]),
        item_protos: [proto(CARD), proto(OTHER_CARD)],
      },
    });
    const data = await chat(server);
    assert.deepEqual(
      data.messages.map((m: any) => m.msg_id),
      [drop, gift, promo],
    );
    assert.deepEqual(data.users, await shortUsers([ALICE, BOB, CAROL, MODERATOR]));
    assert.deepEqual(data.item_protos, [proto(CARD), proto(OTHER_CARD), proto(CASE)]);

    await admin(server, 'setChatStatus', { closed: 1, emoteonly: 1 });
    assert.deepEqual(await feed.next((f) => f.event === 'gchat.status'), {
      event: 'gchat.status',
      data: { closed: true, slowmode: false, emoteonly: true },
    });
    await admin(server, 'deleteMessage', { msg_id: gift });
    assert.deepEqual(await feed.next((f) => f.event === 'gchat.delete'), { event: 'gchat.delete', data: { msg_id: gift } });
    assert.deepEqual(
      (await chat(server)).messages.map((m: any) => m.msg_id),
      [drop, promo],
    );
    assert.deepEqual((await chat(server)).users, await shortUsers([BOB, MODERATOR]));

    // A text message: exactly the fields of type 1, and the author and the mentioned users.
    await admin(server, 'setChatStatus', { closed: 0, emoteonly: 0 });
    const text = await say(server, await signIn(server, ALICE), '  hi @3 and @2 and @3  ');
    assert.deepEqual(await feed.added(text), {
      event: 'gchat.add',
      data: {
        message: { type: 1, user_id: ALICE, msg_id: text, ts, text: 'hi @3 and @2 and @3', user_ids_mentioned: [CAROL, BOB] },
        users: await shortUsers([ALICE, BOB, CAROL]),
        item_protos: [],
      },
    });
    assert.deepEqual(
      feed.frames.map((f) => f.event),
      ['ready', 'gchat.add', 'gchat.add', 'gchat.add', 'gchat.status', 'gchat.delete', 'gchat.status', 'gchat.add'],
    );
    feed.close();
  }));
