import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ok, type TestServer } from './helpers.js';
import { USERS_CHANGED } from '../src/infra/channels.js';
import { ADMIN_KEY, admin } from './admin-support.js';
import { ALICE, BOB, CARD, call, chat, chatWorld, connect, listen, say, signIn, withCluster, withServer } from './chat-support.js';
import { ExtwsClient } from './extws-client.js';
import { missing } from './components.js';

/** A globally blocked account of the world (as Grace of the demo world). */
const GRACE = 8;

/** What users.get shows of a globally blocked account without a domain. */
const blocked = (userId: number) => ({ user_id: userId, nick: 'Blocked account', avatar: '', avatar_key: '', inactive: 'global_ban' });

async function worldWithGrace() {
  const world = await chatWorld();
  world.users!.push({ user_id: GRACE, nick: 'Grace', avatar: '/a/grace.png', online: 1, global_ban: 1 });
  return world;
}

const shortUsers = async (server: TestServer, ids: number[]) =>
  ok(await call(server, 'users.get', { user_ids: ids.join(','), type: 'short' }, { http: 'GET' }));

/** A short form without `online`, which each process tells from its own presence records. */
function offline(user: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (user === undefined) return undefined;
  const { online: _online, ...rest } = user;
  return rest;
}

/** Resolves once `server`'s bus has carried users.changed for the user (the chat hears it first: it subscribed before). */
function heardChanged(server: TestServer, userId: number): Promise<void> {
  return new Promise((resolve) => {
    const unsubscribe = server.services.bus.subscribe(USERS_CHANGED, (message) => {
      if (!message.user_ids.includes(userId)) return;
      unsubscribe();
      resolve();
    });
  });
}

test('a globally blocked account is shown in gchat.get and in the realtime frames as users.get shows it', async () =>
  withServer({ world: await worldWithGrace(), config: { adminKey: ADMIN_KEY } }, async (server) => {
    const feed = await connect(server);
    const extws = await ExtwsClient.connect(await listen(server));
    const promo = (await admin(server, 'postSystemMessage', { type: 4, user_id: GRACE, item_proto_ids: `${CARD}` })).msg_id;
    const mention = await say(server, await signIn(server, ALICE), 'hello @8');

    assert.deepEqual(await shortUsers(server, [GRACE]), [blocked(GRACE)]);
    assert.deepEqual((await feed.added(promo)).data.users, [blocked(GRACE)]);
    assert.deepEqual((await feed.added(mention)).data.users, await shortUsers(server, [ALICE, GRACE]));
    assert.deepEqual((await extws.added(promo)).data.users_data, [blocked(GRACE)]);
    assert.deepEqual((await extws.added(mention)).data.users_data, await shortUsers(server, [ALICE, GRACE]));
    assert.deepEqual((await chat(server)).users, await shortUsers(server, [ALICE, GRACE]));
    assert.deepEqual((await chat(server)).users[1], blocked(GRACE));
    feed.close();
    extws.close();
  }));

test('admin.banUser shows the placeholder in gchat.get at once, and later frames carry it; admin.unbanUser brings the profile back', () =>
  withServer({ config: { adminKey: ADMIN_KEY } }, async (server) => {
    await say(server, await signIn(server, BOB), 'hello from Bob');
    const [bob] = await shortUsers(server, [BOB]);
    assert.deepEqual((await chat(server)).users, [bob]);

    await admin(server, 'banUser', { user_id: BOB });
    assert.deepEqual((await chat(server)).users, [blocked(BOB)]);
    const feed = await connect(server);
    const promo = (await admin(server, 'postSystemMessage', { type: 4, user_id: BOB, item_proto_ids: `${CARD}` })).msg_id;
    assert.deepEqual((await feed.added(promo)).data.users, [blocked(BOB)]);

    await admin(server, 'unbanUser', { user_id: BOB });
    assert.deepEqual((await chat(server)).users, [bob]);
    feed.close();
  }));

test('a message whose users were read before a ban does not bring the profile back', () =>
  withServer({ config: { adminKey: ADMIN_KEY } }, async (server) => {
    await say(server, await signIn(server, BOB), 'hello from Bob');
    const [alice, bob] = await shortUsers(server, [ALICE, BOB]);
    await admin(server, 'banUser', { user_id: BOB });
    // A send that read the users before the ban, published after it (a slow send, or one in another process).
    const message = { type: 1 as const, user_id: ALICE, msg_id: 'raced', ts: 0, text: 'hi @2', user_ids_mentioned: [BOB] };
    await server.services.chat.publish({
      kind: 'add',
      id: 'raced',
      seq: 1_000_000,
      message,
      users: [alice, bob],
      item_protos: [],
      audience: null,
    });
    const answer = await chat(server);
    assert.equal(answer.messages.at(-1).msg_id, 'raced');
    assert.deepEqual(answer.users, [alice, blocked(BOB)]);
  }));

test(
  'across two processes with Redis: a ban shows in the other process at once, and an unban once it hears of it',
  { skip: missing.redis },
  () =>
    withCluster(
      async (first, second) => {
        await say(first, await signIn(first, BOB), 'hello from Bob');
        const [bob] = await shortUsers(second, [BOB]);
        const feed = await connect(second);
        const marker = await say(second, await signIn(second, ALICE), 'marker');
        await feed.added(marker);
        assert.deepEqual(offline((await chat(second)).users.find((u: any) => u.user_id === BOB)), offline(bob));

        await admin(first, 'banUser', { user_id: BOB });
        assert.deepEqual(
          (await chat(second)).users.find((u: any) => u.user_id === BOB),
          blocked(BOB),
        );
        const promo = (await admin(first, 'postSystemMessage', { type: 4, user_id: BOB, item_proto_ids: `${CARD}` })).msg_id;
        assert.deepEqual((await feed.added(promo)).data.users, [blocked(BOB)]);

        const unbanHeard = heardChanged(second, BOB);
        await admin(first, 'unbanUser', { user_id: BOB });
        await unbanHeard;
        assert.deepEqual(offline((await chat(second)).users.find((u: any) => u.user_id === BOB)), offline(bob));
        feed.close();
      },
      undefined,
      { adminKey: ADMIN_KEY },
    ),
);
