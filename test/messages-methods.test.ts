import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callFails, callOk, callVoid, tokenFor, user } from './item-fixtures.js';
import type { World } from '../src/world/schema.js';

/*
 * Private messages over the HTTP surface: im.send, im.dialogsGet, im.historyGet, im.sync,
 * im.delete, the admin methods, and the rules (blocks, privacy, bans, mutes). Users 1 and 2
 * write to each other; 3 blocked 1; 4 takes messages from friends only (2 is a friend); 5
 * takes none; 6 is muted; 7 is a bot of 3; 8 is banned; 9 a partner of 2.
 */

const ADMIN_KEY = 'admin-key-of-the-messages-test';
const MUTED_UNTIL = 2_000_000_000;

const world: World = {
  users: [
    user(1),
    user(2),
    user(3),
    user(4),
    user(5),
    user(6, { muted_until: MUTED_UNTIL }),
    user(7, { bot_owner: 3 }),
    user(8, { global_ban: 1 }),
    user(9),
  ],
  friends: [[2, 4]],
  blocks: [{ user_id: 3, blocked_user_id: 1 }],
};

let server: TestServer;
const tokens = new Map<number, string>();

before(async () => {
  server = await startTestServer({
    world,
    config: { adminKey: ADMIN_KEY, im: { burst: 1000, perHour: 1000, youngAccountDays: 0, newDialogsPerDay: 1, deleteWindow: 600 } },
  });
  for (const id of [1, 2, 3, 4, 5, 6, 9]) tokens.set(id, await tokenFor(server, id));
  tokens.set(7, await tokenFor(server, 7, { bot: true }));
  await callVoid(server, 'privacy.update', { messages: 'friends' }, as(4));
  await callVoid(server, 'privacy.update', { messages: 'nobody' }, as(5));
});
after(async () => {
  await server.close();
});

const as = (id: number) => ({ token: tokens.get(id) });
const admin = { headers: { 'x-admin-key': ADMIN_KEY } };
const send = async (from: number, to: number, text: string, extra: Record<string, unknown> = {}) =>
  (await callOk(server, 'im.send', { user_id: to, text, ...extra }, as(from))).msg_id as number;
const now = () => Math.floor(server.clock.now() / 1000);

describe('a conversation', () => {
  test('sending, the dialogs, reading and the sync of both parties', async () => {
    const first = await send(1, 2, '  hello  ');
    const second = await send(2, 1, 'hi');
    const third = await send(1, 2, 'how are you?');
    assert.ok(first < second && second < third, 'ids increase');
    const ts = now();

    const dialogs = await callOk(server, 'im.dialogsGet', {}, as(2));
    assert.deepEqual(dialogs.dialogs, [
      { message: { msg_id: third, is_read: 0, text: 'how are you?', ts_created: ts, type: 1, user_id: 1 }, new_counter: 2, user_id: 1 },
    ]);
    assert.deepEqual(dialogs.sync, { events: [], dialogs: [], messages: [] });
    assert.deepEqual(
      dialogs.users_data.map((u: any) => u.user_id),
      [1, 2],
    );
    assert.equal((await callOk(server, 'im.dialogsGet', {}, as(1))).dialogs[0].new_counter, 1);

    // Reading the history marks the partner's messages read, not one's own.
    const history = await callOk(server, 'im.historyGet', { user_id: 1 }, as(2));
    assert.deepEqual(
      history.messages.map((m: any) => [m.msg_id, m.user_id, m.text, m.is_read]),
      [
        [third, 1, 'how are you?', 1],
        [second, 2, 'hi', 0],
        [first, 1, 'hello', 1],
      ],
    );
    assert.equal((await callOk(server, 'im.dialogsGet', {}, as(2))).dialogs[0].new_counter, 0);

    // The sender's sync from before the conversation: three messages, then the read mark.
    const sync = await callOk(server, 'im.sync', { id_last: first - 1 }, as(1));
    assert.deepEqual(
      sync.events.map((e: any) => [e.chain, e.data]),
      [
        [[first - 1, first], { type: 1, msg_id: first, dialog: { user_id: 2 } }],
        [[first, second], { type: 1, msg_id: second, dialog: { user_id: 2 } }],
        [[second, third], { type: 1, msg_id: third, dialog: { user_id: 2 } }],
        [[third, sync.events[3].id], { type: 2, msg_id: third, dialog: { user_id: 2 } }],
      ],
    );
    assert.deepEqual(sync.dialogs, [{ user_id: 2, new_counter: 1 }]);
    assert.deepEqual(
      sync.messages.map((m: any) => [m.msg_id, m.is_read]),
      [
        [first, 1],
        [second, 0],
        [third, 1],
      ],
    );
    // Nothing after the last event; the python client's large id_last sees nothing new and every dialog.
    assert.deepEqual((await callOk(server, 'im.sync', { id_last: sync.events[3].id }, as(1))).events, []);
    const python = await callOk(server, 'im.dialogsGet', { id_last: 419729250000, offset: 0, count: 30 }, as(1));
    assert.equal(python.dialogs.length, 1);
    assert.deepEqual(python.sync.events, []);

    // Paging: older than id_last, or skipping offset.
    const older = await callOk(server, 'im.historyGet', { user_id: 2, id_last: third, count: 1 }, as(1));
    assert.deepEqual(
      older.messages.map((m: any) => m.msg_id),
      [second],
    );
    // User 1 read 2's message just now: the sync after `third` holds both read marks.
    assert.deepEqual(
      older.sync.events.map((e: any) => [e.data.type, e.data.msg_id]),
      [
        [2, third],
        [2, second],
      ],
    );
    const skipped = await callOk(server, 'im.historyGet', { user_id: 2, offset: 2, count: 5 }, as(1));
    assert.deepEqual(
      skipped.messages.map((m: any) => m.msg_id),
      [first],
    );
  });

  test('the same send_id from the same sender stores one message', async () => {
    const a = await send(9, 2, 'once', { send_id: 'key-1' });
    assert.equal(await send(9, 2, 'once again', { send_id: 'key-1' }), a);
    const other = await send(2, 9, 'reply', { send_id: 'key-1' });
    assert.notEqual(other, a);
    const history = await callOk(server, 'im.historyGet', { user_id: 2 }, as(9));
    assert.deepEqual(
      history.messages.map((m: any) => m.text),
      ['reply', 'once'],
    );
  });

  test('deleting: the author within the window, a moderator always', async () => {
    const msg = await send(1, 9, 'oops');
    const kept = await send(1, 9, 'kept');
    await callFails(server, 'im.delete', { msg_id: msg }, 2, as(9));
    await callFails(server, 'im.delete', { msg_id: 999_999 }, 2, as(1));
    await callVoid(server, 'im.delete', { msg_id: msg }, as(1));
    await callFails(server, 'im.delete', { msg_id: msg }, 2, as(1));
    const dialogs = await callOk(server, 'im.dialogsGet', {}, as(9));
    const withOne = dialogs.dialogs.find((d: any) => d.user_id === 1);
    assert.deepEqual([withOne.message.msg_id, withOne.new_counter], [kept, 1]);

    server.clock.advance(601);
    await callFails(server, 'im.delete', { msg_id: kept }, 4, as(1));
    const read = await callOk(server, 'admin.imHistory', { user_id: 9, partner_id: 1 }, admin);
    assert.deepEqual(
      read.messages.map((m: any) => m.msg_id),
      [kept],
    );
    assert.deepEqual(await callOk(server, 'admin.imDelete', { msg_id: kept }, admin), { msg_id: kept });
    assert.equal(
      (await callOk(server, 'im.dialogsGet', {}, as(9))).dialogs.find((d: any) => d.user_id === 1),
      undefined,
    );
    const sync = await callOk(server, 'im.sync', { id_last: kept }, as(9));
    assert.deepEqual(
      sync.events.map((e: any) => e.data),
      [
        { type: 3, msg_id: msg, dialog: { user_id: 1 } },
        { type: 3, msg_id: kept, dialog: { user_id: 1 } },
      ],
    );
    assert.deepEqual(sync.dialogs, [{ user_id: 1, new_counter: 0 }]);
  });
});

describe('what im.send refuses', () => {
  test('bad input answers 2 naming the parameter', async () => {
    for (const [params, name] of [
      [{ chat_id: 5, text: 'x' }, 'chat_id'],
      [{ user_id: 2, image_token: 'abc' }, 'image_token'],
      [{ text: 'x' }, 'user_id'],
      [{ user_id: 2 }, 'text'],
      [{ user_id: 1, text: 'me' }, 'user_id'],
      [{ user_id: 2, text: '   ' }, 'text'],
      [{ user_id: 2, text: '\u200b' }, 'text'],
      [{ user_id: 2, text: 'x'.repeat(1001) }, 'text'],
      [{ user_id: 2, text: 'a\u202eb' }, 'text'],
      [{ user_id: 2, text: 'x', send_id: 'k'.repeat(65) }, 'send_id'],
    ] as [Record<string, unknown>, string][]) {
      const answer = await callFails(server, 'im.send', params, 2, as(1));
      assert.match(answer.body.description ?? '', new RegExp(name), JSON.stringify(params));
    }
    assert.equal(await send(1, 2, 'x'.repeat(1000)).then((id) => id > 0), true);
  });

  test('blocks, privacy, bans and mutes', async () => {
    await callFails(server, 'im.send', { user_id: 3, text: 'hey' }, 107, as(1));
    await callFails(server, 'im.send', { user_id: 1, text: 'hey' }, 107, as(3));
    // A bot follows its owner's blocks, and may write to its owner.
    await callFails(server, 'im.send', { user_id: 1, text: 'hey' }, 107, as(7));
    await send(7, 3, 'to my owner');
    await callFails(server, 'im.send', { user_id: 4, text: 'hey' }, 701, as(1));
    await send(2, 4, 'friends may');
    await callFails(server, 'im.send', { user_id: 5, text: 'hey' }, 701, as(2));
    await callFails(server, 'im.send', { user_id: 8, text: 'hey' }, 101, as(1));
    await callFails(server, 'im.send', { user_id: 12345, text: 'hey' }, 101, as(1));
    const muted = await callFails(server, 'im.send', { user_id: 1, text: 'hey' }, 104, as(6));
    assert.deepEqual(muted.body.data, { muted_until: MUTED_UNTIL });
    assert.deepEqual(await callOk(server, 'privacy.get', {}, as(4)), {
      inventory: 'everyone',
      messages: 'friends',
      trades_income: 1,
      trades_income_from_friends: 0,
      trades_income_gifts: 1,
      trades_income_gifts_autoaccept: 0,
    });
  });

  test('a banned partner shows as users.get shows them, their messages kept', async () => {
    await callOk(server, 'admin.banUser', { user_id: 9 }, admin);
    const history = await callOk(server, 'im.historyGet', { user_id: 9 }, as(2));
    assert.deepEqual(
      history.messages.map((m: any) => m.text),
      ['reply', 'once'],
    );
    const [shown] = await callOk(server, 'users.get', { user_ids: 9 });
    assert.equal(shown.inactive, 'global_ban');
    assert.deepEqual(
      history.users_data.find((u: any) => u.user_id === 9),
      shown,
    );
    await callFails(server, 'im.send', { user_id: 9, text: 'hey' }, 101, as(2));
  });
});

describe('the sending limits', () => {
  test('a burst, and new conversations of young accounts', async () => {
    const limited = await startTestServer({
      world: { users: [user(1, { created_at: 0 }), user(2), user(3), user(4)] },
      config: { im: { burst: 2, perHour: 1000, youngAccountDays: 7, newDialogsPerDay: 1, deleteWindow: 0 } },
    });
    try {
      const [old, young] = [await tokenFor(limited, 1), await tokenFor(limited, 2)];
      await callOk(limited, 'im.send', { user_id: 2, text: 'a' }, { token: old });
      await callOk(limited, 'im.send', { user_id: 3, text: 'b' }, { token: old });
      const refused = await callFails(limited, 'im.send', { user_id: 4, text: 'c' }, 7, { token: old });
      assert.equal(refused.body.data.retry_after > 0, true);
      limited.clock.advance(10);
      await callOk(limited, 'im.send', { user_id: 4, text: 'c' }, { token: old });

      // The young account may start one conversation a day; answering an existing one is free.
      await callOk(limited, 'im.send', { user_id: 3, text: 'new' }, { token: young });
      await callOk(limited, 'im.send', { user_id: 1, text: 'reply' }, { token: young });
      limited.clock.advance(10);
      await callFails(limited, 'im.send', { user_id: 4, text: 'another' }, 7, { token: young });
      // A refused message counts nothing: the burst still has room.
      await callOk(limited, 'im.send', { user_id: 3, text: 'again' }, { token: young });
    } finally {
      await limited.close();
    }
  });
});
