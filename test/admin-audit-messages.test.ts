import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyFingerprint } from '../src/api/admin-key.js';
import { ADMIN_KEY, admin, adminCall, fails, startAdminServer } from './admin-support.js';
import { callOk, tokenFor, user } from './item-fixtures.js';

/*
 * Reading someone's private messages is an admin action like the others: every admin.imHistory
 * call, successful or not, leaves an audit entry naming the key, the address, the conversation
 * asked for and the answer's code; the read itself changes nothing (nothing is marked read, no
 * party is told).
 */

const TS = 1_767_225_600;
const world = {
  users: [user(1), user(2), user(3)],
  private_messages: [
    { msg_id: 1, from: 1, to: 2, text: 'first', ts_created: TS, is_read: 1 as const },
    { msg_id: 2, from: 2, to: 1, text: 'second', ts_created: TS + 1 },
    { msg_id: 3, from: 1, to: 3, text: 'elsewhere', ts_created: TS + 2 },
  ],
};

/** The audit entries of admin.imHistory, oldest first. */
const imHistoryEntries = async (server: Awaited<ReturnType<typeof startAdminServer>>) =>
  ((await admin(server, 'auditLog', { action: 'admin.imHistory', count: 50 })).entries as any[]).reverse();

test('admin.imHistory: each read is on record with who asked, from where, for which conversation and how it ended', async () => {
  const server = await startAdminServer({ world });
  try {
    const now = Math.floor(server.clock.now() / 1000);
    const read = await admin(server, 'imHistory', { user_id: 2, partner_id: 1, count: 5 });
    assert.deepEqual(
      read.messages.map((m: any) => [m.msg_id, m.user_id, m.text, m.is_read]),
      [
        [2, 2, 'second', 0],
        [1, 1, 'first', 1],
      ],
    );
    assert.deepEqual(
      read.users_data.map((u: any) => u.user_id),
      [1, 2],
    );
    // Read again, from another address, with an older page: a second entry, nothing cached away.
    const older = await adminCall(server, 'imHistory', { user_id: 1, partner_id: 2, id_last: 2 }, { ip: '203.0.113.9' });
    assert.deepEqual(
      older.body.data.messages.map((m: any) => m.msg_id),
      [1],
    );
    // Refused calls are on record with their code: a bad parameter, a wrong key's call is not an admin's.
    fails(await adminCall(server, 'imHistory', { user_id: 1, partner_id: 0 }), 2);
    const wrongKey = await adminCall(server, 'imHistory', { user_id: 1, partner_id: 2 }, { key: 'not-the-admin-key' });
    assert.notEqual(wrongKey.body.code, 0);
    assert.equal(JSON.stringify(wrongKey.body).includes('second'), false, 'a wrong key reads nothing');

    const entries = await imHistoryEntries(server);
    const fingerprint = keyFingerprint(ADMIN_KEY);
    assert.deepEqual(
      entries.map((e) => [e.action, e.key_fingerprint, e.ip, e.ts, e.params, e.result_code]),
      [
        ['admin.imHistory', fingerprint, '127.0.0.1', now, { user_id: 2, partner_id: 1, count: 5 }, 0],
        ['admin.imHistory', fingerprint, '203.0.113.9', now, { user_id: 1, partner_id: 2, id_last: 2 }, 0],
        ['admin.imHistory', fingerprint, '127.0.0.1', now, { user_id: 1, partner_id: 0 }, 2],
      ],
    );

    // Reading marked nothing read and told no one: the receiver still has the message unread, and no event was recorded.
    const one = await tokenFor(server, 1);
    const dialogs = await callOk(server, 'im.dialogsGet', {}, { token: one });
    assert.deepEqual(
      dialogs.dialogs.map((d: any) => [d.user_id, d.new_counter, d.message.msg_id, d.message.is_read]),
      [
        [3, 0, 3, 0],
        [2, 1, 2, 0],
      ],
    );
    assert.deepEqual((await callOk(server, 'im.sync', { id_last: 3 }, { token: one })).events, []);
  } finally {
    await server.close();
  }
});
