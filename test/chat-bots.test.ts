import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setChatStatus } from '../src/chat/moderation.js';
import { ok, type TestServer } from './helpers.js';
import {
  ALICE,
  BOB,
  BOT,
  CAROL,
  MODERATOR,
  MUTED,
  OTHER_BOT,
  botToken,
  call,
  chat,
  chatWorld,
  connect,
  fails,
  say,
  send,
  signIn,
  withServer,
  type FeedClient,
} from './chat-support.js';

async function helperBot(server: TestServer): Promise<string> {
  return botToken(server, await signIn(server, ALICE), BOT);
}

const limited = (body: { data?: unknown }) => assert.deepEqual(body.data, { type: 'BOT_LIMITATIONS' });

test('a bot may post 5 public messages an hour, then 1203 BOT_LIMITATIONS until the hour is over', () =>
  withServer({}, async (server) => {
    const bot = await helperBot(server);
    for (let i = 1; i <= 5; i++) await say(server, bot, `announcement ${i}`);
    limited(fails(await send(server, bot, 'announcement 6'), 1203));
    limited(fails(await send(server, bot, 'public despite a mention @2', { is_public: 1 }), 1203));

    // Another bot has its own quota; users are not limited.
    const other = await botToken(server, await signIn(server, BOB), OTHER_BOT);
    await say(server, other, 'announcement 6');
    const alice = await signIn(server, ALICE);
    for (let i = 0; i < 7; i++) await say(server, alice, `chatty ${i}`);

    server.clock.advance(3600);
    await say(server, bot, 'announcement 6');
    assert.equal((await chat(server)).messages.filter((m: any) => m.user_id === BOT).length, 6);
  }));

test("a bot's public messages within an hour must all differ", () =>
  withServer({}, async (server) => {
    const bot = await helperBot(server);
    await say(server, bot, 'the same words');
    limited(fails(await send(server, bot, 'the same words'), 1203));
    limited(fails(await send(server, bot, '   the same words  '), 1203));
    await say(server, bot, 'The same words');
    server.clock.advance(3600);
    await say(server, bot, 'the same words');
  }));

test('bot limits hold under concurrent sends', () =>
  withServer({}, async (server) => {
    const bot = await helperBot(server);
    const distinct = await Promise.all(Array.from({ length: 12 }, (_, i) => send(server, bot, `distinct ${i}`)));
    assert.equal(distinct.filter((a) => a.body.code === 0).length, 5);
    assert.ok(distinct.every((a) => a.body.code === 0 || a.body.code === 1203));

    server.clock.advance(3600);
    const same = await Promise.all(Array.from({ length: 6 }, () => send(server, bot, 'echo')));
    assert.equal(same.filter((a) => a.body.code === 0).length, 1);
    // The refused duplicates did not use up the quota: four more distinct messages pass.
    for (let i = 0; i < 4; i++) await say(server, bot, `after the echo ${i}`);
    limited(fails(await send(server, bot, 'one too many'), 1203));
  }));

test("a bot's message that mentions users without is_public goes only to them, live, and is not kept or counted", () =>
  withServer({}, async (server) => {
    const [bob, carol] = await Promise.all([signIn(server, BOB), signIn(server, CAROL)]);
    const bot = await helperBot(server);
    const bobFeed = await connect(server, { token: bob });
    const carolFeed = await connect(server, { token: carol });
    const anonymous = await connect(server);

    const privateIds = [];
    for (let i = 0; i < 7; i++) privateIds.push(await say(server, bot, `@2 your move ${i}`));
    const frame = await bobFeed.added(privateIds[6]);
    assert.deepEqual(frame.data.message.user_ids_mentioned, [BOB]);
    assert.deepEqual(
      frame.data.users.map((u: any) => u.user_id),
      [BOB, BOT],
    );
    assert.equal(frame.data.users.find((u: any) => u.user_id === BOT).bot, 1);

    const marker = await say(server, bot, 'everyone: a new game starts');
    for (const feed of [carolFeed, anonymous, bobFeed]) await feed.added(marker);
    for (const feed of [carolFeed, anonymous]) assert.ok(privateIds.every((id) => !feed.hasAdded(id)));
    assert.ok(privateIds.every((id) => bobFeed.hasAdded(id)));

    const shown = (await chat(server)).messages.map((m: any) => m.msg_id);
    assert.deepEqual(shown, [marker]);

    // With is_public=1 the same kind of message is public: kept, shown to all, counted.
    const open = await say(server, bot, '@2 and @3 won', { is_public: 1 });
    await carolFeed.added(open);
    await anonymous.added(open);
    assert.ok((await chat(server)).messages.some((m: any) => m.msg_id === open));
    // A mention of nobody who exists makes the message public.
    const nobody = await say(server, bot, 'hello @999');
    await anonymous.added(nobody);
    for (const feed of [bobFeed, carolFeed, anonymous]) feed.close();
  }));

test("a bot's message for mentioned users skips those with a block either way with the bot or its owner; 107 when nobody is left", async () =>
  withServer({ world: await chatWorld({ blocks: [{ user_id: BOT, blocked_user_id: CAROL }] }) }, async (server) => {
    const [alice, bob, carol, moderator, muted] = await Promise.all([ALICE, BOB, CAROL, MODERATOR, MUTED].map((id) => signIn(server, id)));
    const bot = await botToken(server, alice, BOT);
    const [bobFeed, carolFeed, moderatorFeed, mutedFeed] = await Promise.all(
      [bob, carol, moderator, muted].map((token) => connect(server, { token })),
    );
    // Bob blocked the bot, the bot blocked Carol (world), the moderator blocked the bot's owner.
    ok(await call(server, 'blacklist.add', { user_id: BOT }, { token: bob }));
    ok(await call(server, 'blacklist.add', { user_id: ALICE }, { token: moderator }));

    const reached = await say(server, bot, '@2 @3 @4 @5 your move');
    const frame = await mutedFeed.added(reached);
    assert.deepEqual(frame.data.message.user_ids_mentioned, [BOB, CAROL, MODERATOR, MUTED]);

    // The owner blocked the last one: nobody is left.
    ok(await call(server, 'blacklist.add', { user_id: MUTED }, { token: alice }));
    const nobody = {
      code: 107,
      description: 'every user the message mentions has blocked this bot or its owner, or is blocked by them',
    };
    for (const text of ['@2 @3 @4 @5 your move again', '@2 only you']) assert.deepEqual((await send(server, bot, text)).body, nobody);
    // Unknown users do not count as mentioned.
    assert.deepEqual((await send(server, bot, '@5 and @999')).body, nobody);
    // A public message still reaches everyone.
    const open = await say(server, bot, '@2 @5 the game is over', { is_public: 1 });

    ok(await call(server, 'blacklist.remove', { user_id: BOT }, { token: bob }));
    const again = await say(server, bot, '@2 @5 unblocked');
    await bobFeed.added(again);
    const last = await say(server, alice, 'last marker');
    const botMessagesSeen: [FeedClient, string[]][] = [
      [bobFeed, [open, again]],
      [carolFeed, [open]],
      [moderatorFeed, [open]],
      [mutedFeed, [reached, open]],
    ];
    for (const [feed, seen] of botMessagesSeen) {
      await feed.added(last);
      const fromBot = feed.frames.filter((f) => f.event === 'gchat.add' && f.data.message.user_id === BOT);
      assert.deepEqual(
        fromBot.map((f) => f.data.message.msg_id),
        seen,
      );
    }
    for (const feed of [bobFeed, carolFeed, moderatorFeed, mutedFeed]) feed.close();
  }));

test('bots follow the chat modes, and a bot command starting with ! is pushed to everyone, not kept, but counted', () =>
  withServer({}, async (server) => {
    const bot = await helperBot(server);
    const feed = await connect(server);
    const command = await say(server, bot, '!help');
    await feed.added(command);
    assert.deepEqual((await chat(server)).messages, []);
    // Shown to everyone, so it counts as a public message: a repeat is refused, four more fit in the hour.
    limited(fails(await send(server, bot, '!help'), 1203));
    for (let i = 0; i < 4; i++) await say(server, bot, `line ${i}`);
    limited(fails(await send(server, bot, 'line 4'), 1203));
    server.clock.advance(3600);

    await setChatStatus(server.services, { closed: true });
    assert.deepEqual(fails(await send(server, bot, 'closed?'), 1203).data, { type: 'DISABLED' });
    await setChatStatus(server.services, { closed: false, slowmode: true });
    await say(server, bot, 'slow one');
    fails(await send(server, bot, 'slow two'), 7);
    feed.close();
  }));
