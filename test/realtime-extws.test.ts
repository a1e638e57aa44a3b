import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ok } from './helpers.js';
import { deleteMessage, setChatStatus } from '../src/chat/moderation.js';
import {
  ALICE,
  BOB,
  CAROL,
  BOT,
  EMAIL,
  PASSWORD,
  botToken,
  chat,
  connect,
  listen,
  say,
  signIn,
  withCluster,
  withServer,
} from './chat-support.js';
import { RESYNC_AFTER_MS } from '../src/chat/runtime.js';
import { defaultConfig } from '../src/config.js';
import { sessionFor } from './social-fixtures.js';
import { ExtwsClient } from './extws-client.js';
import { missing } from './components.js';

/** The ExtWS framing of /ws, as the reference service's clients (SDK, Android, Python) speak it. */

/** The counters every signed-in connection's auth frame carries beside friend requests and trades. */
const ACCOUNT_COUNTERS = { messages_new: 0, email_verified: 0, vip_expires: 0, invites: 0 };

const withinASecond = <T>(promise: Promise<T>, what: string): Promise<T> =>
  Promise.race([promise, sleep(1000).then(() => assert.fail(`${what} did not arrive within a second`))]);

test('the auth frame counts the friend requests friends.getRequests lists: none from a globally blocked account', () =>
  withServer({}, async (server) => {
    const base = await listen(server);
    const alice = await signIn(server, ALICE);
    await server.call('friends.add', { user_id: ALICE }, { token: await signIn(server, BOB) });
    await server.call('friends.add', { user_id: ALICE }, { token: await signIn(server, CAROL) });
    await server.db.kysely.updateTable('users').set({ global_ban: 1 }).where('user_id', '=', CAROL).execute();
    assert.equal(ok(await server.call('friends.getRequests', {}, { token: alice })).count, 1);
    const client = await ExtwsClient.connect(base, { access_token: alice });
    const auth = await client.next((f) => f.event === 'auth');
    assert.deepEqual(auth.data.counters, { ...ACCOUNT_COUNTERS, friends_requests: 1, trades_new: 0, balance: 0 });
    client.close();
  }));

test('a signed-in client gets the open frame, then auth with its profile and counters, then status; then every chat change as events', () =>
  withServer({}, async (server) => {
    const base = await listen(server);
    const alice = await signIn(server, ALICE);
    await server.call('friends.add', { user_id: ALICE }, { token: await signIn(server, BOB) });
    const client = await ExtwsClient.connect(base, { access_token: alice });
    await client.next((f) => f.event === 'status');
    const [open, auth, status] = client.frames;
    assert.equal(open.type, 1);
    assert.equal(typeof open.data.id, 'string');
    assert.equal(open.data.idle_timeout, 60);
    assert.equal(auth.event, 'auth');
    const [profile] = ok(await server.call('users.get', {}, { token: alice, http: 'GET' }));
    assert.deepEqual(auth.data, {
      status: 1,
      // avatar_key, online and rank are always there: the Python client reads them unconditionally.
      user_data: { avatar_key: '', rank: { hidden: 1 }, ...profile, admin_rights: 0, penalties: {} },
      counters: { ...ACCOUNT_COUNTERS, friends_requests: 1, trades_new: 0, balance: 0 },
    });
    assert.equal(status.event, 'status');
    assert.deepEqual(Object.keys(status.data.status).sort(), ['emotes_restricted', 'online', 'sct', 'streams', 'time']);
    assert.deepEqual(
      [status.data.status.streams, status.data.status.sct, status.data.status.emotes_restricted],
      [{ count: 0 }, server.clock.now(), '0'],
    );
    assert.ok(status.data.status.online >= 1);

    const msgId = await say(server, alice, 'hello @2');
    const added = await withinASecond(client.added(msgId), 'the events frame');
    assert.equal(added.text.slice(0, 7), '4events');
    const [event] = added.data.events;
    assert.deepEqual(Object.keys(added.data).sort(), ['events', 'id_last_given', 'item_protos', 'messages', 'users_data']);
    assert.deepEqual(event, { id: added.data.id_last_given, type: 'gchat.add', msg_id: msgId });
    const chat = ok(await server.call('gchat.get', {}, { http: 'GET' }));
    assert.deepEqual(
      added.data.messages,
      chat.messages.filter((m: any) => m.msg_id === msgId),
    );
    assert.deepEqual(
      added.data.users_data,
      chat.users.filter((u: any) => u.user_id === ALICE || u.user_id === BOB),
    );

    await setChatStatus(server.services, { closed: true });
    await deleteMessage(server.services, msgId);
    await client.next((f) => f.event === 'events' && f.data.events[0].type === 'gchat.delete');
    const events = client.events();
    assert.deepEqual(
      events.map((e) => e.type),
      ['gchat.add', 'gchat.status', 'gchat.delete'],
    );
    assert.deepEqual(events[1].status, { closed: true, slowmode: false, emoteonly: false });
    assert.equal(events[2].msg_id, msgId);
    for (let i = 1; i < events.length; i++) assert.ok(events[i].id > events[i - 1].id, 'ids always increase');
    client.close();
  }));

test('an anonymous client gets no auth frame; subs picks what reaches it; an invalid token closes with 4001', () =>
  withServer({}, async (server) => {
    const base = await listen(server);
    const anonymous = await ExtwsClient.connect(base);
    const unsubscribed = await ExtwsClient.connect(base, { subs: '' });
    const msgId = await say(server, await signIn(server, ALICE), 'to everyone');
    await anonymous.added(msgId);
    assert.deepEqual(
      anonymous.frames.map((f) => f.event ?? f.type),
      [1, 'status', 'events'],
    );
    await unsubscribed.next((f) => f.event === 'status');
    await sleep(100);
    assert.equal(
      unsubscribed.frames.some((f) => f.event === 'events'),
      false,
    );
    const refused = new ExtwsClient(new (await import('ws')).default(`${base}/ws?access_token=not-a-token`));
    assert.equal((await refused.closed).code, 4001);
    const repeated = new ExtwsClient(new (await import('ws')).default(`${base}/ws?access_token=a-token&access_token=a-token`));
    assert.deepEqual(await repeated.closed, { code: 4001, reason: 'access_token given more than once' });
    anonymous.close();
    unsubscribed.close();
  }));

test('ping and pong keep a client open past the heartbeat; a silent one is dropped; the client may ping too', () =>
  withServer({ config: { ws: { heartbeatSeconds: 0.2, maxQueueBytes: 1 << 20, maxFrameBytes: 16 * 1024 } } }, async (server) => {
    const base = await listen(server);
    const live = await ExtwsClient.connect(base);
    const silent = await ExtwsClient.connect(base);
    silent.answerPings = false;
    assert.equal((await silent.closed).code, 1006, 'the silent client is cut');
    await sleep(700);
    assert.ok(live.frames.filter((f) => f.text === '2').length >= 2, 'pinged on every heartbeat');
    assert.equal(live.socket.readyState, live.socket.OPEN);
    live.socket.send('2');
    await live.next((f) => f.text === '3');
    const msgId = await say(server, await signIn(server, ALICE), 'still here');
    await live.added(msgId);
    live.close();
  }));

test('a client that reconnects with id_last gets every kept event after it, once, in order', () =>
  withServer({}, async (server) => {
    const base = await listen(server);
    const alice = await signIn(server, ALICE);
    const first = await ExtwsClient.connect(base);
    const seen = await say(server, alice, 'seen');
    const last = (await first.added(seen)).data.id_last_given;
    first.close();
    await first.closed;
    const missed = [await say(server, alice, 'missed one'), await say(server, alice, 'missed two')];
    await setChatStatus(server.services, { slowmode: true });

    const again = await ExtwsClient.connect(base, { id_last: last });
    await again.added(missed[1]);
    const after = await say(server, alice, 'live again');
    await again.added(after);
    const events = again.events();
    assert.deepEqual(
      events.map((e) => [e.type, e.msg_id]),
      [
        ['gchat.add', missed[0]],
        ['gchat.add', missed[1]],
        ['gchat.status', undefined],
        ['gchat.add', after],
      ],
    );
    assert.ok(events[0].id > last);
    for (let i = 1; i < events.length; i++) assert.ok(events[i].id > events[i - 1].id);
    // The missed ones came together, after status and before anything live.
    const resumed = again.frames.find((f) => f.event === 'events')!;
    assert.equal(resumed.data.events.length, 3);
    assert.deepEqual(
      resumed.data.messages.map((m: any) => m.msg_id),
      missed,
    );
    again.close();
  }));

test('the api emit answers any method the connection token may call, with the HTTP answer', () =>
  withServer({}, async (server) => {
    const base = await listen(server);
    const alice = await signIn(server, ALICE);
    const client = await ExtwsClient.connect(base, { access_token: alice });
    const anonymous = await ExtwsClient.connect(base);

    const viaWs = await client.api('users.get', { user_ids: `${ALICE},${BOB}`, type: 'short' });
    assert.deepEqual(viaWs, {
      method: 'users.get',
      code: 0,
      data: ok(await server.call('users.get', { user_ids: `${ALICE},${BOB}`, type: 'short' }, { http: 'GET' })),
    });
    assert.deepEqual((await client.api('users.get')).data[0].user_id, ALICE, 'without ids: the connection user');
    const sent = await client.api('gchat.send', { message: 'sent over the socket' });
    assert.equal(typeof sent.data.msg_id, 'string');
    await client.added(sent.data.msg_id);
    assert.deepEqual(await client.api('friends.add', { user_id: CAROL }), { method: 'friends.add', code: 0 });

    assert.deepEqual(await anonymous.api('gchat.send', { message: 'x' }), {
      method: 'gchat.send',
      code: 1,
      description: 'authorization required: send an access_token',
    });
    assert.equal((await anonymous.api('no.such')).code, 5);
    assert.equal((await anonymous.api('users.get', { user_ids: '0' })).code, 2);
    const bot = await ExtwsClient.connect(base, { access_token: await botToken(server, alice, BOT) });
    assert.equal((await bot.api('account.getPrivacy')).code, 4);
    // Not [method, params]: answered as an unknown method.
    client.socket.send('4api{"method":"users.get"}');
    assert.equal((await client.next((f) => f.event === 'api' && f.data.method === '')).data.code, 5);
    for (const c of [client, anonymous, bot]) c.close();
  }));

/** A call's answer, or a failure when the connection closes first. */
const answeredBeforeClose = <T>(client: ExtwsClient, call: Promise<T>): Promise<T> =>
  Promise.race([call, client.closed.then((c) => assert.fail(`closed with ${c.code} before the answer`))]);

test('a call over the feed that ends its own session is answered before the connection closes with 4003', () =>
  withServer({}, async (server) => {
    const base = await listen(server);
    const signed = ok(await server.call('auth.signin', { email: EMAIL[CAROL], password: PASSWORD }));
    const client = await ExtwsClient.connect(base, { access_token: signed.access_token });
    await client.next((f) => f.event === 'status');
    const refreshed = await answeredBeforeClose(client, client.api('auth.refresh', { refresh_token: signed.refresh_token }));
    assert.equal(refreshed.code, 0);
    assert.deepEqual(await client.closed, { code: 4003, reason: 'session revoked' });
    // The tokens the answer carried are the sign-in's from now on.
    assert.equal(ok(await server.call('users.get', {}, { token: refreshed.data.access_token }))[0].user_id, CAROL);

    const again = await ExtwsClient.connect(base, { access_token: refreshed.data.access_token });
    assert.deepEqual(await answeredBeforeClose(again, again.api('auth.signout')), { method: 'auth.signout', code: 0 });
    assert.deepEqual(await again.closed, { code: 4003, reason: 'session revoked' });
  }));

test('parameters nested too deeply answer 2 over the feed as over HTTP, before anything is done', () =>
  withServer({}, async (server) => {
    const client = await ExtwsClient.connect(await listen(server));
    let deep: unknown = 1;
    for (let level = 0; level < 40; level++) deep = { a: deep };
    const answer = await client.api('users.get', { user_id: ALICE, x: deep });
    assert.equal(answer.code, 2);
    assert.match(answer.description!, /^the parameters object is nested too deeply/);
    // Parameters that are not an object answer 2 too, as an HTTP body that is not one does.
    client.socket.send('4api["users.get",[{"user_id":1}]]');
    const notObject = await client.next((f) => f.event === 'api' && f.data.code === 2 && /must be an object/.test(f.data.description));
    assert.deepEqual(notObject.data, { method: 'users.get', code: 2, description: 'the parameters must be an object' });
    assert.equal((await client.api('users.get', { user_id: ALICE })).code, 0);
    client.close();
  }));

test(
  'across two processes with Redis: events within a second under one numbering, resume on the other process, pushes to one user',
  { skip: missing.redis },
  () =>
    withCluster(async (first, second) => {
      const [baseFirst, baseSecond] = [await listen(first), await listen(second)];
      const alice = await signIn(first, ALICE);
      const bob = await signIn(second, BOB);
      const onFirst = await ExtwsClient.connect(baseFirst);
      const onSecond = await ExtwsClient.connect(baseSecond, { access_token: bob });

      const ids = [
        await say(first, alice, 'from the first'),
        await say(second, bob, 'from the second'),
        await say(first, alice, 'first again'),
      ];
      for (const client of [onFirst, onSecond]) for (const msgId of ids) await withinASecond(client.added(msgId), 'the events frame');
      assert.deepEqual(onFirst.events(), onSecond.events(), 'the same events under the same ids everywhere');
      const events = onFirst.events();
      for (let i = 1; i < events.length; i++) assert.ok(events[i].id > events[i - 1].id);

      // Resume on the other process from an id seen on the first.
      onFirst.close();
      const missed = await say(second, bob, 'while away');
      const back = await ExtwsClient.connect(baseSecond, { id_last: events[events.length - 1].id });
      await back.added(missed);
      assert.deepEqual(
        back.events().map((e) => e.msg_id),
        [missed],
      );

      // A push to one user reaches that user's connections on every process, and nobody else's.
      const carolOnFirst = await ExtwsClient.connect(baseFirst, { access_token: await signIn(first, CAROL), subs: '' });
      await first.services.realtime.pushToUser(BOB, { type: 'test.ping', fields: { note: 'for bob' }, json: { note: 'for bob' } });
      const pushed = await withinASecond(
        onSecond.next((f) => f.event === 'events' && f.data.events[0].type === 'test.ping'),
        'the push',
      );
      assert.equal(pushed.data.events[0].note, 'for bob');
      await say(first, alice, 'marker');
      await sleep(200);
      assert.equal(carolOnFirst.events().length, 0);
      assert.equal(
        back.events().some((e) => e.type === 'test.ping'),
        false,
        'an anonymous connection does not get it',
      );
      for (const c of [onSecond, back, carolOnFirst]) c.close();
    }),
);

test(
  'across two processes with Redis: a chat status change that only the database holds is announced once, by whichever process finds it first',
  { skip: missing.redis },
  () =>
    withCluster(async (first, second) => {
      const [baseFirst, baseSecond] = [await listen(first), await listen(second)];
      const alice = await signIn(first, ALICE);
      const clients = [await ExtwsClient.connect(baseFirst), await ExtwsClient.connect(baseSecond)];
      // A change whose bus event was lost (made while Redis was away): only the database has it.
      await first.db.kysely.updateTable('chat_state').set({ closed: 1 }).where('id', '=', 1).execute();
      first.clock.advance(RESYNC_AFTER_MS / 1000 + 1);
      // Each process reads the chat again before it answers, and finds the change.
      for (const server of [first, second]) assert.equal((await chat(server)).status.closed, true);
      // Opened again the usual way; everything published before the marker has arrived with it.
      await setChatStatus(second.services, { closed: false });
      const marker = await say(first, alice, 'marker');
      for (const client of clients) {
        await withinASecond(client.added(marker), 'the marker');
        assert.deepEqual(
          client
            .events()
            .filter((e) => e.type === 'gchat.status')
            .map((e) => e.status),
          [
            { closed: true, slowmode: false, emoteonly: false },
            { closed: false, slowmode: false, emoteonly: false },
          ],
          'each change announced once, not once per process',
        );
      }
      for (const client of clients) client.close();
    }),
);

test(
  'across two processes with Redis: a user coming online or going offline reaches every connection live, as one status frame each',
  { skip: missing.redis },
  () =>
    withCluster(
      async (first, second) => {
        const [baseFirst, baseSecond] = [await listen(first), await listen(second)];
        const watchers = [await ExtwsClient.connect(baseFirst), await ExtwsClient.connect(baseSecond)];
        const jsonWatcher = await connect(first);
        const told = (client: ExtwsClient) => client.frames.filter((f) => f.event === 'status').map((f) => f.data.status.online);
        const toldJson = () => jsonWatcher.frames.filter((f) => f.event === 'status').map((f) => f.data.online);
        for (const watcher of watchers) await watcher.next((f) => f.event === 'status');
        const [online] = told(watchers[0]!);
        assert.deepEqual(told(watchers[1]!), [online]);
        const until = async (what: string, done: () => boolean) => {
          for (const deadline = Date.now() + 3000; !done(); await sleep(20))
            if (Date.now() > deadline) assert.fail(`${what} did not arrive in time`);
        };

        // Carol connects to the second process: everyone is told, once.
        const carol = await ExtwsClient.connect(baseSecond, { access_token: await sessionFor(second, CAROL) });
        for (const watcher of watchers) await until('the status frame', () => told(watcher).at(-1) === online! + 1);
        await until('the JSON status frame', () => toldJson().at(-1) === online! + 1);
        // A second connection of hers changes nothing.
        const again = await ExtwsClient.connect(baseFirst, { access_token: await sessionFor(first, CAROL) });
        await sleep(1500);
        assert.deepEqual(told(watchers[0]!), [online, online! + 1], 'one frame per change, not one per process');
        assert.deepEqual(told(watchers[1]!), [online, online! + 1]);
        assert.deepEqual(toldJson(), [online! + 1], 'the JSON framing gets a status frame for each change');

        // She leaves; once her last sign of life is older than the online window she is offline for everyone.
        carol.close();
        again.close();
        await Promise.all([carol.closed, again.closed]);
        first.clock.advance(defaultConfig().onlineWindow + 1);
        for (const watcher of watchers) await until('the status frame', () => told(watcher).at(-1) === online);
        assert.deepEqual(told(watchers[0]!), [online, online! + 1, online]);
        assert.deepEqual(told(watchers[1]!), [online, online! + 1, online]);
        await until('the JSON status frame', () => toldJson().at(-1) === online);
        assert.deepEqual(toldJson(), [online! + 1, online]);
        for (const watcher of watchers) watcher.close();
        jsonWatcher.close();
      },
      undefined,
      { ws: { heartbeatSeconds: 0.3, maxQueueBytes: 1 << 20, maxFrameBytes: 16 * 1024 } },
    ),
);
