import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, adminCall, fails, startAdminServer } from './admin-support.js';
import { callOk, tokenFor, user } from './item-fixtures.js';
import type { World } from '../src/world/schema.js';

/*
 * World files carry private conversations: an export holds every message left and each user's
 * messages privacy; importing it (replace, or merge into another server) gives the same
 * conversations back, unread counts and the timeline rebuilt from the messages; bad entries are
 * refused and change nothing.
 */

const IM = { burst: 1000, perHour: 1000, youngAccountDays: 0, newDialogsPerDay: 1, deleteWindow: 600 };
const world: World = { users: [user(1), user(2), user(3, { messages_privacy: 'friends' })] };

test('export and import carry conversations both ways, with their unread counts', async () => {
  const server = await startAdminServer({ world, config: { im: IM } });
  const copy = await startAdminServer({ config: { im: IM } });
  try {
    const [one, two] = [await tokenFor(server, 1), await tokenFor(server, 2)];
    const send = async (token: string, to: number, text: string) =>
      (await callOk(server, 'im.send', { user_id: to, text }, { token })).msg_id;
    const a = await send(one, 2, 'first');
    const b = await send(two, 1, 'second');
    const gone = await send(one, 2, 'deleted');
    await callOk(server, 'im.historyGet', { user_id: 2 }, { token: one });
    const c = await send(one, 2, 'third');
    assert.deepEqual((await adminCall(server, 'imDelete', { msg_id: gone })).body, { code: 0, data: { msg_id: gone } });
    const ts = Math.floor(server.clock.now() / 1000);

    const exported = (await admin(server, 'exportWorld')).world as World;
    assert.deepEqual(exported.private_messages, [
      { msg_id: a, from: 1, to: 2, text: 'first', ts_created: ts, is_read: 0 },
      { msg_id: b, from: 2, to: 1, text: 'second', ts_created: ts, is_read: 1 },
      { msg_id: c, from: 1, to: 2, text: 'third', ts_created: ts, is_read: 0 },
    ]);
    assert.equal(exported.users!.find((u) => u.user_id === 3)!.messages_privacy, 'friends');

    for (const [target, mode] of [
      [server, 'replace'],
      [copy, 'merge'],
    ] as const) {
      await admin(target, 'importWorld', { world: JSON.stringify(exported), mode });
      assert.deepEqual(((await admin(target, 'exportWorld')).world as World).private_messages, exported.private_messages);
      const token = await tokenFor(target, 2);
      const dialogs = await callOk(target, 'im.dialogsGet', {}, { token });
      assert.deepEqual(
        dialogs.dialogs.map((d: any) => [d.user_id, d.message.msg_id, d.new_counter]),
        [[1, c, 2]],
      );
      // New messages follow the highest id of the file.
      const next = (await callOk(target, 'im.send', { user_id: 1, text: 'after' }, { token })).msg_id;
      assert.ok(next > c);
    }
  } finally {
    await copy.close();
    await server.close();
  }
});

test('bad conversation entries are refused, naming the entry, and change nothing', async () => {
  const server = await startAdminServer({ world, config: { im: IM } });
  try {
    const before = (await admin(server, 'exportWorld')).world;
    for (const [messages, problem] of [
      [[{ msg_id: 5, from: 1, to: 1, text: 'me' }], /private_messages\[0\]: a user cannot write to themselves/],
      [
        [
          { msg_id: 5, from: 1, to: 2, text: 'a' },
          { msg_id: 5, from: 2, to: 1, text: 'b' },
        ],
        /private_messages\[1\]\.msg_id: duplicate 5/,
      ],
      [[{ msg_id: 5, from: 1, to: 99, text: 'a' }], /private_messages\[0\]\.to/],
      [[{ msg_id: 5, from: 1, to: 2, text: '' }], /private_messages/],
    ] as const) {
      const answer = await adminCall(server, 'importWorld', {
        world: JSON.stringify({ ...world, private_messages: messages }),
        mode: 'replace',
      });
      assert.match(fails(answer, 2).description ?? '', problem);
    }
    assert.deepEqual((await admin(server, 'exportWorld')).world, before);
  } finally {
    await server.close();
  }
});
