import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { listen } from './transport-support.js';
import { withCluster } from './chat-support.js';
import { ExtwsClient } from './extws-client.js';
import { callOk, callVoid, tokenFor, user } from './item-fixtures.js';
import { missing } from './components.js';
import type { World } from '../src/world/schema.js';

/*
 * Private messages on the realtime feed: every open connection of both parties hears each new
 * message, read mark and deletion once, in order, on every process; the `auth` frame counts
 * unread messages and carries the fields the reference clients read; `4api["im.sync"]` answers
 * the sync object.
 */

const MUTED_UNTIL = 2_000_000_000;
const world: World = { users: [user(1, { moderator: 1 }), user(2, { muted_until: MUTED_UNTIL }), user(3)] };
const config = { im: { burst: 1000, perHour: 1000, youngAccountDays: 0, newDialogsPerDay: 1, deleteWindow: 600 } };

const imEvents = (client: ExtwsClient) => client.events().filter((event) => event.type === 'im.sync');
/** The im.sync events a connection heard, as `[data.type, data.msg_id, dialog user]`. */
const heardOf = (client: ExtwsClient) =>
  imEvents(client).map((event: any) => [event.data.type, event.data.msg_id, event.data.dialog.user_id]);
const nthEvent = (client: ExtwsClient, n: number) => client.next(() => imEvents(client).length >= n);
const send = async (server: TestServer, token: string, to: number, text: string) =>
  (await callOk(server, 'im.send', { user_id: to, text }, { token })).msg_id as number;

test('both parties hear every change once, in order, with their own counters; the auth and status frames', async () => {
  const server = await startTestServer({ world, config });
  try {
    const base = await listen(server);
    const [one, two] = [await tokenFor(server, 1), await tokenFor(server, 2)];
    const oneA = await ExtwsClient.connect(base, { access_token: one, subs: '' });
    const oneB = await ExtwsClient.connect(base, { access_token: one, subs: '' });
    const twoA = await ExtwsClient.connect(base, { access_token: two, subs: '' });
    const auth = (await oneA.next((f) => f.event === 'auth')).data;
    assert.deepEqual(
      [auth.user_data.admin_rights, auth.user_data.penalties, auth.counters.messages_new, auth.counters.email_verified],
      [1, {}, 0, 0],
    );
    assert.deepEqual([auth.counters.invites, auth.counters.vip_expires], [0, 0]);
    const twoAuth = (await twoA.next((f) => f.event === 'auth')).data;
    assert.deepEqual([twoAuth.user_data.admin_rights, twoAuth.user_data.penalties], [0, { mute: { ts_end: MUTED_UNTIL } }]);
    const status = (await oneA.next((f) => f.event === 'status')).data.status;
    assert.deepEqual([status.streams, status.sct, status.emotes_restricted], [{ count: 0 }, server.clock.now(), '0']);

    const first = await send(server, one, 2, 'hello');
    const second = await send(server, one, 2, 'again');
    await nthEvent(twoA, 2);
    const [newOne] = imEvents(twoA) as any[];
    assert.deepEqual(
      { ...newOne, id: 0 },
      {
        id: 0,
        type: 'im.sync',
        id_last: first,
        chain: [null, first],
        data: { type: 1, msg_id: first, dialog: { user_id: 1 } },
        message: { msg_id: first, is_read: 0, text: 'hello', ts_created: Math.floor(server.clock.now() / 1000), type: 1, user_id: 1 },
        new_counter: 1,
        messages_new: 1,
      },
    );
    assert.deepEqual(
      (imEvents(twoA) as any[]).map((e) => [e.new_counter, e.messages_new]),
      [
        [1, 1],
        [2, 2],
      ],
    );

    // Reading tells the sender; deleting tells both.
    await callOk(server, 'im.historyGet', { user_id: 1 }, { token: two });
    await callVoid(server, 'im.delete', { msg_id: first }, { token: one });
    for (const client of [oneA, oneB, twoA]) await nthEvent(client, 4);
    const read = (imEvents(oneA) as any[])[2];
    const expected = (partner: number) => [
      [1, first, partner],
      [1, second, partner],
      [2, second, partner],
      [3, first, partner],
    ];
    assert.deepEqual(heardOf(oneA), expected(2));
    assert.deepEqual(heardOf(oneB), expected(2));
    assert.deepEqual(heardOf(twoA), expected(1));
    assert.deepEqual([read.new_counter, read.messages_new], [0, 0]);
    // The event ids increase: a client resumes from the last with im.sync.
    const ids = (imEvents(twoA) as any[]).map((e) => e.id_last);
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
    );

    const sync = await twoA.api('im.sync', { id_last: first });
    assert.equal(sync.code, 0);
    assert.deepEqual(
      sync.data.events.map((e: any) => e.data.type),
      [1, 2, 3],
    );
    assert.deepEqual(sync.data.dialogs, [{ user_id: 1, new_counter: 0 }]);

    // A new connection counts the unread messages.
    await send(server, one, 2, 'unread');
    const later = await ExtwsClient.connect(base, { access_token: two, subs: '' });
    assert.equal((await later.next((f) => f.event === 'auth')).data.counters.messages_new, 1);
    // A third user heard nothing.
    const three = await ExtwsClient.connect(base, { access_token: await tokenFor(server, 3), subs: '' });
    await send(server, one, 2, 'private');
    await nthEvent(twoA, 6);
    await three.api('im.sync', { id_last: 0 });
    assert.deepEqual(imEvents(three), []);
    for (const client of [oneA, oneB, twoA, later, three]) client.close();
  } finally {
    await server.close();
  }
});

test('across two processes with Redis: a message sent on one reaches the connections on both', { skip: missing.redis }, async () =>
  withCluster(
    async (first, second) => {
      const [baseFirst, baseSecond] = [await listen(first), await listen(second)];
      const [one, two] = [await tokenFor(first, 1), await tokenFor(first, 2)];
      const twoOnSecond = await ExtwsClient.connect(baseSecond, { access_token: two, subs: '' });
      const twoOnFirst = await ExtwsClient.connect(baseFirst, { access_token: two, subs: '' });
      const oneOnSecond = await ExtwsClient.connect(baseSecond, { access_token: one, subs: '' });
      const sent: number[] = [];
      for (let i = 0; i < 10; i++) sent.push(await send(i % 2 === 0 ? first : second, one, 2, `message ${i}`));
      for (const client of [twoOnSecond, twoOnFirst, oneOnSecond]) {
        await nthEvent(client, 10);
        assert.deepEqual(
          (imEvents(client) as any[]).map((e) => e.data.msg_id),
          sent,
        );
      }
      for (const client of [twoOnSecond, twoOnFirst, oneOnSecond]) client.close();
    },
    world,
    config,
  ),
);

/** Zakovskiy/monopolyone.py's parsing of a frame: the character, the type up to the first `{`, the JSON from there. */
const parsedAsPython = (text: string) => ({ type: text.slice(1, text.indexOf('{')), json: JSON.parse(text.slice(text.indexOf('{'))) });

/** The keys Zakovskiy/monopolyone.py reads without a default (`src/utils/objects.py`), by where it reads them. */
const PYTHON_READS = {
  auth: ['status', 'user_data', 'counters'],
  user_data: ['user_id', 'nick', 'nicks_old', 'gender', 'avatar', 'avatar_key', 'online', 'rank', 'games_wins', 'games'],
  user_data_more: ['xp', 'xp_level', 'admin_rights', 'penalties'],
  counters: ['vip_expires', 'balance', 'friends_requests', 'messages_new', 'invites', 'trades_new', 'email_verified'],
  status: ['time', 'online', 'streams', 'sct', 'emotes_restricted'],
  im_sync: ['id', 'type', 'id_last'],
  users_data: ['avatar', 'gender', 'nick', 'rank', 'user_id'],
};
const missingKeys = (object: Record<string, unknown>, keys: string[]) => keys.filter((key) => !(key in object));

test('every field Zakovskiy/monopolyone.py reads of the auth, status and events frames, and its dialogs and history calls', async () => {
  const server = await startTestServer({ world: { users: [user(1), user(2, { avatar_key: 'key-2', rank: { qual: 10 } })] }, config });
  try {
    const base = await listen(server);
    const [one, two] = [await tokenFor(server, 1), await tokenFor(server, 2)];
    const client = await ExtwsClient.connect(base, { access_token: two, subs: 'rooms' });
    const frame = (type: string) => client.next((f) => parsedAsPython(f.text).type === type).then((f) => parsedAsPython(f.text).json);
    const auth = await frame('auth');
    assert.deepEqual(missingKeys(auth, PYTHON_READS.auth), []);
    assert.deepEqual(missingKeys(auth.user_data, [...PYTHON_READS.user_data, ...PYTHON_READS.user_data_more]), []);
    assert.deepEqual(missingKeys(auth.counters, PYTHON_READS.counters), []);
    assert.deepEqual(missingKeys((await frame('status')).status, PYTHON_READS.status), []);

    const msgId = await send(server, one, 2, 'from one');
    const events = await client.next(
      (f) => parsedAsPython(f.text).type === 'events' && parsedAsPython(f.text).json.events.some((e: any) => e.type === 'im.sync'),
    );
    const body = parsedAsPython(events.text).json;
    const imSync = body.events.find((e: any) => e.type === 'im.sync');
    assert.deepEqual(missingKeys(imSync, PYTHON_READS.im_sync), []);
    assert.deepEqual([typeof imSync.id, imSync.type, imSync.id_last], ['number', 'im.sync', msgId]);
    for (const entry of body.users_data ?? []) assert.deepEqual(missingKeys(entry, PYTHON_READS.users_data), []);

    // get_dialogs and get_history: the access token, the client's clock and a large id_last in the body.
    const asPython = { access_token: two, sct: Math.floor(server.clock.now() / 1000), id_last: 419729250000, offset: 0, count: 30 };
    const dialogs = await callOk(server, 'im.dialogsGet', asPython);
    assert.deepEqual(
      dialogs.dialogs.map((d: any) => [d.user_id, d.new_counter, d.message.msg_id]),
      [[1, 1, msgId]],
    );
    const history = await callOk(server, 'im.historyGet', { ...asPython, user_id: 1 });
    assert.deepEqual(
      history.messages.map((m: any) => [m.msg_id, m.user_id, m.text, m.is_read]),
      [[msgId, 1, 'from one', 1]],
    );
    client.close();
  } finally {
    await server.close();
  }
});
