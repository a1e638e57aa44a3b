import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { needsRedis, callsInTurn, startProcesses, type Processes } from './race-support.js';
import { tokenFor, user } from './item-fixtures.js';
import type { TestServer } from './helpers.js';
import { missing } from './components.js';

/*
 * Private messages under concurrent requests, spread over two processes on PostgreSQL: one
 * message for one send_id however many arrive at once, and unread counters that equal the
 * unread rows after sends, reads and deletions race (a replay of the rows).
 */

let processes: Processes;
let server: TestServer;
const tokens = new Map<number, string>();
let call: ReturnType<typeof callsInTurn>;

before(async () => {
  if (needsRedis) return;
  processes = await startProcesses({
    redis: !missing.redis,
    world: { users: [user(1), user(2), user(3), user(4)] },
    config: { im: { burst: 100_000, perHour: 100_000, youngAccountDays: 0, newDialogsPerDay: 1, deleteWindow: 3600 } },
  });
  server = processes.servers[0]!;
  for (const id of [1, 2, 3, 4]) tokens.set(id, await tokenFor(server, id));
  call = callsInTurn(processes, (id) => tokens.get(id));
});
after(async () => {
  if (!needsRedis) await processes.close();
});

/** The unread counters as stored, and as the unread rows say they should be, by `receiver:sender`. */
async function replayUnread(): Promise<{ stored: Record<string, number>; replayed: Record<string, number> }> {
  const k = server.db.kysely;
  const dialogs = await k.selectFrom('im_dialogs').select(['user_id', 'partner_id', 'new_counter']).execute();
  const unread = await k
    .selectFrom('im_messages')
    .select(['receiver_id', 'sender_id'])
    .where('is_read', '=', 0)
    .where('deleted_at', 'is', null)
    .execute();
  const stored: Record<string, number> = {};
  const replayed: Record<string, number> = {};
  for (const d of dialogs) {
    stored[`${d.user_id}:${d.partner_id}`] = d.new_counter;
    replayed[`${d.user_id}:${d.partner_id}`] = 0;
  }
  for (const m of unread) replayed[`${m.receiver_id}:${m.sender_id}`]! += 1;
  return { stored, replayed };
}

test('the same send_id sent many times at once stores one message, and every answer names it', { skip: needsRedis }, async () => {
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, i) => call(1, 'im.send', { user_id: 2, text: `copy ${i}`, send_id: 'the-one' })),
  );
  assert.deepEqual(
    answers.map((a) => a.code),
    answers.map(() => 0),
    JSON.stringify(answers),
  );
  const ids = new Set(answers.map((a) => a.data.msg_id));
  assert.equal(ids.size, 1);
  const rows = await server.db.kysely.selectFrom('im_messages').select('msg_id').where('send_id', '=', 'the-one').execute();
  assert.deepEqual(
    rows.map((r) => r.msg_id),
    [...ids],
  );
});

test(
  'sends, reads and deletions racing: the unread counters equal the unread rows, and every message is in the sync in id order',
  { skip: needsRedis },
  async () => {
    const work: Promise<any>[] = [];
    for (let i = 0; i < 40; i++) {
      work.push(call(3, 'im.send', { user_id: 4, text: `to four ${i}` }));
      work.push(call(4, 'im.send', { user_id: 3, text: `to three ${i}` }));
      if (i % 4 === 0) work.push(call(4, 'im.historyGet', { user_id: 3 }), call(3, 'im.historyGet', { user_id: 4 }));
    }
    const answers = await Promise.all(work);
    assert.deepEqual(
      answers.filter((a) => a.code !== 0),
      [],
    );
    const sent = answers.filter((a) => typeof a.data?.msg_id === 'number').map((a) => a.data.msg_id as number);
    // Some deleted while reads and sends go on.
    const more = await Promise.all([
      ...sent.slice(0, 10).map((msgId, i) => call(i % 2 === 0 ? 3 : 4, 'im.delete', { msg_id: msgId })),
      call(4, 'im.historyGet', { user_id: 3 }),
      call(3, 'im.send', { user_id: 4, text: 'last' }),
    ]);
    assert.ok(more.every((a) => a.code === 0 || a.code === 2));
    const { stored, replayed } = await replayUnread();
    assert.deepEqual(stored, replayed);

    // The sync from the start holds every message of the pair, in order of id.
    const sync = await call(4, 'im.sync', { id_last: 0 });
    const newIds = sync.data.events.filter((e: any) => e.data.type === 1 && e.data.dialog.user_id === 3).map((e: any) => e.data.msg_id);
    const all = await server.db.kysely.selectFrom('im_messages').select('msg_id').where('user_low', '=', 3).orderBy('msg_id').execute();
    assert.deepEqual(newIds, all.map((r) => r.msg_id).slice(0, newIds.length));
  },
);
