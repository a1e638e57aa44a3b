import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestServer } from './helpers.js';
import { deleteMessage } from '../src/chat/moderation.js';
import { ADMIN_KEY, admin } from './admin-support.js';
import { ALICE, CARD, chatWorld, listen, say, signIn, withCluster, withServer } from './chat-support.js';
import { ExtwsClient } from './extws-client.js';
import { missing } from './components.js';

const ABUSIVE = 'ABUSIVE TEXT';
const SECRET = 'SECRET BEFORE THE WIPE';

/** The id of the last event a fresh client hears: a message sent to mark the moment. */
async function lastEventId(server: TestServer, token: string): Promise<number> {
  const client = await ExtwsClient.connect(await listen(server));
  const marker = await say(server, token, 'marker');
  const id = (await client.added(marker)).data.id_last_given as number;
  client.close();
  return id;
}

/** A client that resumes after `idLast`, once its replay (ending with the deletion of `msgId`) is in. */
async function resumed(server: TestServer, idLast: number, msgId: string): Promise<ExtwsClient> {
  const client = await ExtwsClient.connect(await listen(server), { id_last: idLast });
  await client.next((f) => f.event === 'events' && f.data.events.some((e: any) => e.type === 'gchat.delete' && e.msg_id === msgId));
  return client;
}

test('a client that resumes after a message was deleted gets the deletion and never the deleted text', () =>
  withServer({ config: { adminKey: ADMIN_KEY } }, async (server) => {
    const alice = await signIn(server, ALICE);
    const before = await lastEventId(server, alice);
    const live = await ExtwsClient.connect(await listen(server));
    const abusive = await say(server, alice, ABUSIVE);
    const between = (await live.added(abusive)).data.id_last_given as number;
    await admin(server, 'deleteMessage', { msg_id: abusive });
    await live.next((f) => f.event === 'events' && f.data.events[0].type === 'gchat.delete');

    for (const idLast of [before, between]) {
      const client = await resumed(server, idLast, abusive);
      const [replay] = client.frames.filter((f) => f.event === 'events');
      assert.deepEqual(replay.data, {
        events: [{ id: replay.data.id_last_given, type: 'gchat.delete', msg_id: abusive }],
        id_last_given: replay.data.id_last_given,
      });
      assert.ok(client.frames.every((f) => !f.text.includes(ABUSIVE)));
      client.close();
    }
    live.close();
  }));

test('a deletion published before its message arrives keeps the message from being sent or kept', () =>
  withServer({}, async (server) => {
    const alice = await signIn(server, ALICE);
    const before = await lastEventId(server, alice);
    const live = await ExtwsClient.connect(await listen(server));
    const hub = server.services.realtime;
    const message = { type: 1, user_id: ALICE, msg_id: 'late', ts: 0, text: ABUSIVE, user_ids_mentioned: [] };
    await hub.publish({
      topic: 'gchat',
      type: 'gchat.delete',
      fields: { msg_id: 'late' },
      json: { msg_id: 'late' },
      withdraws: 'gchat:late',
    });
    await hub.publish({
      topic: 'gchat',
      type: 'gchat.add',
      fields: { msg_id: 'late' },
      lists: { messages: [message] },
      json: { message, users: [], item_protos: [] },
      key: 'gchat:late',
    });
    const marker = await say(server, alice, 'after');
    await live.added(marker);
    const client = await resumed(server, before, 'late');
    await client.added(marker);
    for (const feed of [live, client]) {
      assert.deepEqual(
        feed.events().map((e) => [e.type, e.msg_id]),
        [
          ['gchat.delete', 'late'],
          ['gchat.add', marker],
        ],
      );
      assert.ok(feed.frames.every((f) => !f.text.includes(ABUSIVE)));
    }
    live.close();
    client.close();
  }));

test('after a world is imported, a client that resumes hears nothing of the world before', () =>
  withServer({ config: { adminKey: ADMIN_KEY } }, async (server) => {
    const alice = await signIn(server, ALICE);
    const before = await lastEventId(server, alice);
    await say(server, alice, SECRET);
    await admin(server, 'importWorld', { mode: 'replace', world: JSON.stringify(await chatWorld()) });
    const client = await ExtwsClient.connect(await listen(server), { id_last: before });
    const promo = (await admin(server, 'postSystemMessage', { type: 4, user_id: ALICE, item_proto_ids: `${CARD}` })).msg_id;
    await client.added(promo);
    assert.deepEqual(
      client.events().map((e) => [e.type, e.msg_id]),
      [['gchat.add', promo]],
    );
    assert.ok(client.frames.every((f) => !f.text.includes(SECRET)));
    client.close();
  }));

test('across two processes with Redis: a message deleted in one process is not sent again by either', { skip: missing.redis }, () =>
  withCluster(async (first, second) => {
    const alice = await signIn(first, ALICE);
    const before = await lastEventId(first, alice);
    const onFirst = await ExtwsClient.connect(await listen(first));
    const onSecond = await ExtwsClient.connect(await listen(second));
    const abusive = await say(first, alice, ABUSIVE);
    await onSecond.added(abusive);
    await deleteMessage(second.services, abusive);
    for (const feed of [onFirst, onSecond])
      await feed.next((f) => f.event === 'events' && f.data.events.some((e: any) => e.type === 'gchat.delete' && e.msg_id === abusive));

    for (const server of [first, second]) {
      const client = await resumed(server, before, abusive);
      assert.deepEqual(
        client.events().map((e) => [e.type, e.msg_id]),
        [['gchat.delete', abusive]],
      );
      assert.ok(client.frames.every((f) => !f.text.includes(ABUSIVE)));
      client.close();
    }
    onFirst.close();
    onSecond.close();
  }),
);
