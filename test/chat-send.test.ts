import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ok } from './helpers.js';
import { setChatStatus } from '../src/chat/moderation.js';
import {
  ALICE,
  BOB,
  CAROL,
  MODERATOR,
  MUTED,
  MUTED_UNTIL,
  call,
  chat,
  connect,
  fails,
  say,
  send,
  signIn,
  withServer,
} from './chat-support.js';

const chatConfig = { historySize: 100, slowmodeInterval: 10, emoticons: ['smile', 'fire', 'gg'], botHourlyLimit: 5 };

test('gchat.send needs a valid token and a message of 1 to 500 characters once trimmed', () =>
  withServer({}, async (server) => {
    fails(await send(server, '', 'hello'), 1);
    fails(await call(server, 'gchat.send', { message: 'hello' }), 1);
    fails(await send(server, 'wrong-token-wrong-token-wrong', 'hello'), 1);

    const alice = await signIn(server, ALICE);
    fails(await call(server, 'gchat.send', {}, { token: alice }), 2);
    for (const message of ['', '   ', '\n\t ', 'x'.repeat(501), ' '.repeat(3) + 'y'.repeat(501)]) {
      const body = fails(await send(server, alice, message), 2);
      assert.match(body.description!, /message/);
    }
    const longest = 'z'.repeat(500);
    const wide = '😀'.repeat(500); // 500 characters, 1000 UTF-16 units
    const ids = [await say(server, alice, `   ${longest}   `), await say(server, alice, wide), await say(server, alice, '\n padded \n')];

    const messages = (await chat(server)).messages;
    assert.deepEqual(
      messages.map((m: any) => [m.msg_id, m.text]),
      [
        [ids[0], longest],
        [ids[1], wide],
        [ids[2], 'padded'],
      ],
    );
    const sent = messages[2];
    assert.deepEqual(Object.keys(sent).sort(), ['msg_id', 'text', 'ts', 'type', 'user_id', 'user_ids_mentioned']);
    assert.equal(sent.type, 1);
    assert.equal(sent.user_id, ALICE);
    assert.equal(sent.ts, Math.floor(server.clock.now() / 1000));

    // Form-encoded and query-string calls work the same.
    ok(await call(server, 'gchat.send', { message: 'from a form' }, { token: alice, form: true }));
    ok(await call(server, 'gchat.send', { message: 'from a query' }, { token: alice, http: 'GET' }));
  }));

test('a message holding a lone surrogate answers 2 and is neither kept nor pushed', () =>
  withServer({}, async (server) => {
    const alice = await signIn(server, ALICE);
    const feed = await connect(server);
    const refused = { code: 2, description: 'parameter message: must be valid Unicode text (it holds a lone surrogate)' };
    for (const message of ['\udc00abc\ud83d', 'half an emoji \ud83d', '\ude00\ud83d reversed'])
      assert.deepEqual((await send(server, alice, message)).body, refused, JSON.stringify(message));

    const whole = await say(server, alice, 'a whole one \ud83d\ude00');
    await feed.added(whole);
    assert.deepEqual(
      feed.frames.filter((f) => f.event === 'gchat.add').map((f) => f.data.message.text),
      ['a whole one 😀'],
    );
    assert.deepEqual(
      (await chat(server)).messages.map((m: any) => [m.msg_id, m.text]),
      [[whole, 'a whole one 😀']],
    );
    feed.close();
  }));

test('a message needs a visible character and no control characters but tabs and line breaks, nor bidirectional overrides', () =>
  withServer({}, async (server) => {
    const alice = await signIn(server, ALICE);
    const invisible = { code: 2, description: 'parameter message: must contain a visible character' };
    const control = {
      code: 2,
      description: 'parameter message: must not contain control characters (tabs and line breaks aside) or bidirectional overrides',
    };
    const refused: [string, object][] = [
      ['\u200b\u200b\u200b', invisible],
      ['\u2800', invisible],
      ['\u3164', invisible],
      ['\u115f \u1160\uffa0', invisible],
      ['\u200d\u2060\u00ad\u200e', invisible],
      ['\u200b\n\u200b', invisible],
      ['\ufe0f', invisible],
      ['\u{e0100}\u034f', invisible],
      ['\u17b4\u17b5', invisible],
      ['\u0301\u0301', invisible],
      ['\u001b[31mred', control],
      ['ding\u0007', control],
      ['\u202eexe.txt', control],
      ['\u202aembedded\u202c', control],
      ['\u2066isolated\u2069', control],
    ];
    for (const [message, body] of refused) assert.deepEqual((await send(server, alice, message)).body, body, JSON.stringify(message));
    assert.deepEqual((await chat(server)).messages, []);

    const accepted = [
      '👨‍👩‍👧',
      '❤️',
      'two\nlines',
      'old\r\nline break',
      'zero\u200bwidth space',
      '\u2800 braille ⠿',
      'שלום \u200f!',
      'tab\tseparated',
      'e\u0301 combined',
    ];
    const ids = [];
    for (const text of accepted) ids.push(await say(server, alice, text));
    assert.deepEqual(
      (await chat(server)).messages.map((m: any) => [m.msg_id, m.text]),
      ids.map((id, i) => [id, accepted[i]]),
    );
  }));

test('mentions: @<user_id> of existing users, once each, in order of appearance', () =>
  withServer({}, async (server) => {
    const alice = await signIn(server, ALICE);
    const cases: [string, number[]][] = [
      ['hello @2', [BOB]],
      ['@3 and @2, then @3 again', [CAROL, BOB]],
      ['(@2) @4. @3!', [BOB, MODERATOR, CAROL]],
      ['@999 does not exist, @2 does', [BOB]],
      ['mail@2 is an address, @2x is not a mention, nor @02 or @ 2', []],
      ['@1 is me', [ALICE]],
      ['@99999999999999999999 is far too big', []],
      ['@@2 still counts', [BOB]],
      ['@0', []],
    ];
    for (const [text, mentioned] of cases) {
      const msgId = await say(server, alice, text);
      const data = await chat(server);
      const message = data.messages.find((m: any) => m.msg_id === msgId);
      assert.deepEqual(message.user_ids_mentioned, mentioned, text);
    }
    // The users list names the author and everyone mentioned, nobody else.
    assert.deepEqual(
      (await chat(server)).users.map((u: any) => u.user_id),
      [ALICE, BOB, CAROL, MODERATOR],
    );
  }));

test('a muted user gets 104 with muted_until until the mute ends; the mute is read at send time', () =>
  withServer({}, async (server) => {
    const muted = await signIn(server, MUTED);
    const body = fails(await send(server, muted, 'let me speak'), 104);
    assert.deepEqual(body.data, { muted_until: MUTED_UNTIL });

    const now = Math.floor(server.clock.now() / 1000);
    await server.db.kysely
      .updateTable('users')
      .set({ muted_until: now + 60 })
      .where('user_id', '=', MUTED)
      .execute();
    assert.deepEqual(fails(await send(server, muted, 'now?'), 104).data, { muted_until: now + 60 });
    server.clock.advance(60);
    await say(server, muted, 'free again');

    // A moderator can be muted too.
    await server.db.kysely
      .updateTable('users')
      .set({ muted_until: now + 3600 })
      .where('user_id', '=', MODERATOR)
      .execute();
    fails(await send(server, await signIn(server, MODERATOR), 'hm'), 104);
  }));

test('a closed chat refuses everyone but moderators with 1203 DISABLED', () =>
  withServer({}, async (server) => {
    const [alice, moderator] = await Promise.all([signIn(server, ALICE), signIn(server, MODERATOR)]);
    await setChatStatus(server.services, { closed: true });
    assert.deepEqual(fails(await send(server, alice, 'anyone?'), 1203).data, { type: 'DISABLED' });
    const notice = await say(server, moderator, 'the chat is closed for maintenance');
    assert.deepEqual(
      (await chat(server)).messages.map((m: any) => m.msg_id),
      [notice],
    );

    await setChatStatus(server.services, { closed: false });
    await say(server, alice, 'open again');
  }));

test('emote-only mode accepts only messages made of the configured emoticons, from moderators too', () =>
  withServer({ config: { chat: chatConfig } }, async (server) => {
    const [alice, moderator] = await Promise.all([signIn(server, ALICE), signIn(server, MODERATOR)]);
    await setChatStatus(server.services, { emoteonly: true });
    assert.deepEqual((await chat(server)).status, { closed: false, slowmode: false, emoteonly: true });

    for (const text of [':smile:', '  :smile: :fire:  ', ':gg::gg:', ':fire:\n:smile:']) await say(server, alice, text);
    for (const text of ['smile', ':smile: hi', ':wink:', ':smile', 'smile:', '::', ':smile::', ':sm ile:', '!:smile:x']) {
      assert.deepEqual(fails(await send(server, alice, text), 1203).data, { type: 'EMOTES_ONLY' }, text);
    }
    assert.deepEqual(fails(await send(server, moderator, 'moderators write emoticons too'), 1203).data, { type: 'EMOTES_ONLY' });
    await say(server, moderator, ':gg:');
    // Closed and emote-only at once: a moderator may still write, emoticons only.
    await setChatStatus(server.services, { closed: true });
    assert.deepEqual(fails(await send(server, alice, ':smile:'), 1203).data, { type: 'DISABLED' });
    assert.deepEqual(fails(await send(server, moderator, 'words'), 1203).data, { type: 'EMOTES_ONLY' });
    await say(server, moderator, ':fire:');
    await setChatStatus(server.services, { closed: false });

    await setChatStatus(server.services, { emoteonly: false });
    await say(server, alice, 'words again');
  }));

test('slow mode allows one message per user per interval (7 with retry_after); moderators are exempt', () =>
  withServer({}, async (server) => {
    const [alice, bob, moderator] = await Promise.all([signIn(server, ALICE), signIn(server, BOB), signIn(server, MODERATOR)]);
    await setChatStatus(server.services, { slowmode: true, slowmode_interval: 20 });

    await say(server, alice, 'first');
    const refused = await send(server, alice, 'second');
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '20');
    assert.deepEqual(fails(refused, 7).data, { retry_after: 20 });
    await say(server, bob, 'other users have their own limit');
    for (const text of ['one', 'two', 'three']) await say(server, moderator, text);

    server.clock.advance(15);
    assert.deepEqual(fails(await send(server, alice, 'still too soon'), 7).data, { retry_after: 5 });
    server.clock.advance(5);
    await say(server, alice, 'after the interval');

    // A refused message does not start the interval: closed and emote-only refusals come first.
    await setChatStatus(server.services, { emoteonly: true });
    server.clock.advance(20);
    fails(await send(server, bob, 'words'), 1203);
    await say(server, bob, ':smile:');

    // Switching slow mode off lifts the limit at once.
    await setChatStatus(server.services, { slowmode: false, emoteonly: false });
    await say(server, alice, 'a');
    await say(server, alice, 'b');
  }));

test('slow mode lowered: a message passes once the new interval has passed since the last one', () =>
  withServer({}, async (server) => {
    const alice = await signIn(server, ALICE);
    await setChatStatus(server.services, { slowmode: true, slowmode_interval: 60 });
    await say(server, alice, 'first');
    server.clock.advance(5);
    await setChatStatus(server.services, { slowmode_interval: 10 });
    server.clock.advance(5);
    await say(server, alice, 'ten seconds after the first');

    const refused = await send(server, alice, 'too soon');
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '10');
    assert.deepEqual(refused.body, { code: 7, description: 'slow mode: one message per 10 seconds', data: { retry_after: 10 } });
    server.clock.advance(10);
    await say(server, alice, 'ten seconds later');
  }));

test('slow mode switched off, given a shorter interval and switched on: the new interval counts', () =>
  withServer({}, async (server) => {
    const alice = await signIn(server, ALICE);
    await setChatStatus(server.services, { slowmode: true, slowmode_interval: 60 });
    await say(server, alice, 'first');
    await setChatStatus(server.services, { slowmode: false });
    await setChatStatus(server.services, { slowmode_interval: 20 });
    await setChatStatus(server.services, { slowmode: true });
    server.clock.advance(20);
    await say(server, alice, 'twenty seconds later');
    assert.deepEqual((await send(server, alice, 'too soon')).body, {
      code: 7,
      description: 'slow mode: one message per 20 seconds',
      data: { retry_after: 20 },
    });
  }));

test('slow mode holds under concurrent sends: exactly one of many passes', () =>
  withServer({}, async (server) => {
    const alice = await signIn(server, ALICE);
    await setChatStatus(server.services, { slowmode: true });
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => send(server, alice, `rush ${i}`)));
    assert.equal(answers.filter((a) => a.body.code === 0).length, 1);
    assert.equal(answers.filter((a) => a.body.code === 7).length, 11);
    assert.equal((await chat(server)).messages.length, 1);
  }));

test('a message starting with ! is pushed live to subscribers but not kept', () =>
  withServer({}, async (server) => {
    const alice = await signIn(server, ALICE);
    const feed = await connect(server);
    const command = await say(server, alice, '!roll @2');
    const frame = await feed.added(command);
    assert.deepEqual(frame.data.message.user_ids_mentioned, [BOB]);
    assert.deepEqual(
      frame.data.users.map((u: any) => u.user_id),
      [ALICE, BOB],
    );
    const kept = await say(server, alice, 'a kept message');
    await feed.added(kept);

    assert.deepEqual(
      (await chat(server)).messages.map((m: any) => m.msg_id),
      [kept],
    );
    assert.equal(
      await server.db.kysely.selectFrom('chat_messages').select('msg_id').where('msg_id', '=', command).executeTakeFirst(),
      undefined,
    );
    // is_public means nothing for users who are not bots.
    const withFlag = await say(server, alice, 'hi @3', { is_public: 0 });
    assert.ok((await chat(server)).messages.some((m: any) => m.msg_id === withFlag));
    feed.close();
  }));
