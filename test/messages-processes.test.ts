import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DB_KIND } from './helpers.js';
import { api, withServeProcesses, type ServerProcess } from './process-support.js';
import { ExtwsClient } from './extws-client.js';
import { missing } from './components.js';

/*
 * Private messages told live by two server processes on one PostgreSQL and Redis: sends, reads
 * and deletions of one user's conversations race through both, and every connection of the
 * parties, on either process, hears each event of theirs once, in the order of the event ids,
 * exactly the events `im.sync` lists; an event is told only once it has committed.
 */

const PASSWORD = 'messages-processes-password';
const RECEIVER = 1;
const SENDERS = [2, 3, 4, 5];
const world = {
  users: [RECEIVER, ...SENDERS].map((id) => ({ user_id: id, email: `u${id}@example.com`, password: PASSWORD, nick: `User ${id}` })),
};
const env = { IM_BURST: '100000', IM_PER_HOUR: '100000', IM_YOUNG_ACCOUNT_DAYS: '0' };

/** The event ids a connection heard, in the order it heard them. */
const heard = (client: ExtwsClient) =>
  client
    .events()
    .filter((event) => event.type === 'im.sync')
    .map((event) => event.id_last as number);

/** Every event of the user's conversations, in order, as `im.sync` lists them (in pages). */
async function syncedIds(server: ServerProcess, token: string): Promise<number[]> {
  const ids: number[] = [];
  for (;;) {
    const page = await api(server, 'im.sync', { access_token: token, id_last: ids.at(-1) ?? 0 });
    if (page.events.length === 0) return ids;
    ids.push(...page.events.map((event: { id: number }) => event.id));
  }
}

test(
  'two processes: racing sends, reads and deletions reach every connection of the parties once each, in id order',
  { skip: (DB_KIND !== 'postgres' && 'several processes share a database on PostgreSQL only') || missing.redis, timeout: 180_000 },
  () =>
    withServeProcesses({ count: 2, world, redis: true, env }, async (servers) => {
      const tokens = new Map<number, string>();
      for (const id of [RECEIVER, ...SENDERS])
        tokens.set(id, (await api(servers[0]!, 'auth.signin', { email: `u${id}@example.com`, password: PASSWORD })).access_token);
      const token = (id: number) => tokens.get(id)!;
      const on = (i: number) => servers[i % servers.length]!;
      const connect = (server: ServerProcess, id: number) =>
        ExtwsClient.connect(server.url.replace(/^http/, 'ws'), { access_token: token(id), subs: '' });
      const receivers = await Promise.all([0, 1, 2, 3].map((i) => connect(on(i), RECEIVER)));
      const sender = await connect(on(1), SENDERS[0]!);
      for (const client of [...receivers, sender]) await client.next((f) => f.event === 'auth');

      const send = (i: number, from: number, text: string) =>
        api(on(i), 'im.send', { access_token: token(from), user_id: RECEIVER, text }).then((data) => data.msg_id as number);
      const read = (i: number, partner: number) =>
        api(on(i), 'im.historyGet', { access_token: token(RECEIVER), user_id: partner, count: 1 });
      const rounds = 2;
      const sent: number[][] = [];
      for (let round = 0; round < rounds; round++) {
        const work: Promise<unknown>[] = [];
        const ids: Promise<number>[] = [];
        for (let i = 0; i < 12; i++) for (const from of SENDERS) ids.push(send(i + from, from, `round ${round} message ${i} from ${from}`));
        for (let i = 0; i < 8; i++) work.push(read(i, SENDERS[i % SENDERS.length]!));
        // Busy processes answer late: what one commits may wait while the other commits and tells more.
        for (let i = 0; i < 60; i++) work.push(api(on(i), 'im.sync', { access_token: token(RECEIVER), id_last: 0 }));
        // The second round deletes some messages of the first while new ones race in.
        if (round > 0)
          for (const [i, msgId] of sent[0]!.entries())
            if (i % 6 === 0) work.push(api(on(i), 'im.delete', { access_token: token(SENDERS[i % SENDERS.length]!), msg_id: msgId }));
        sent.push(await Promise.all(ids));
        await Promise.all(work);
      }
      // The last event: a connection that heard it has heard every one before it, if they came in order.
      const marker = await send(0, SENDERS[0]!, 'marker');
      for (const client of [...receivers, sender]) await client.next(() => heard(client).includes(marker));

      const all = await syncedIds(servers[1]!, token(RECEIVER));
      assert.equal(all.at(-1), marker);
      assert.ok(all.length > 100, `${all.length} events`);
      for (const [i, client] of receivers.entries()) assert.deepEqual(heard(client), all, `receiver connection ${i}`);
      assert.deepEqual(heard(sender), await syncedIds(servers[0]!, token(SENDERS[0]!)), 'the sender');
      for (const client of [...receivers, sender]) client.close();
    }),
);
