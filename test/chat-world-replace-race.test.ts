import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DB_KIND, type Answer, type TestServer } from './helpers.js';
import { missing } from './components.js';
import { admin, passwordHashOnce, signIn as signInWith, startAdminServer } from './admin-support.js';
import { EMAIL, botToken, say, send, signIn } from './chat-support.js';
import type { World } from '../src/world/schema.js';

/*
 * gchat.send racing admin.importWorld with mode replace: a send either stores a message the new
 * world holds (its author and the users it mentions are in it, under a msg_seq of its own) or
 * answers 1 (the replace ended its session); never 3. The world exported afterwards imports again.
 */

const USERS = [1, 2, 3, 4, 5];
/** Bots and their owners. A bot's public message is counted (on Redis when there is one) between the check of its author and its storing. */
const BOTS = new Map([
  [6, 1],
  [7, 3],
]);
/** Users the replacing world keeps (same ids), with the bot of a kept owner; the others are gone once it is imported. */
const KEPT = [1, 2, 6];
const NEWCOMER = 20;
/** Sends of each sender on their way at once, so that some are at every step of a send when the import starts. */
const LANES = 6;
/** Items of the replacing world: enough to keep its transaction open while sends arrive. */
const COPIES = 40_000;
const BODY_LIMIT = 64 * 1024 * 1024;

const database = {
  skip: DB_KIND === 'postgres' && !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL: TEST_DB=postgres names no PostgreSQL',
};

async function oldWorld(): Promise<World> {
  const password_hash = await passwordHashOnce();
  return {
    item_protos: [{ item_proto_id: 100, type: 0, title: 'Old Street', quality_id: 1 }],
    users: [
      ...USERS.map((id) => ({ user_id: id, email: EMAIL[id], password_hash, nick: `Old ${id}` })),
      ...[...BOTS].map(([id, owner]) => ({ user_id: id, nick: `Bot ${id}`, bot_owner: owner })),
    ],
  };
}

async function newWorld(): Promise<World> {
  const password_hash = await passwordHashOnce();
  return {
    item_protos: [{ item_proto_id: 100, type: 0, title: 'Old Street', quality_id: 1 }],
    users: [
      ...KEPT.map((id) =>
        BOTS.has(id)
          ? { user_id: id, nick: `New bot ${id}`, bot_owner: BOTS.get(id)! }
          : { user_id: id, email: EMAIL[id], password_hash, nick: `New ${id}` },
      ),
      { user_id: NEWCOMER, email: 'newcomer@example.com', password_hash, nick: 'Newcomer' },
    ],
    items: [{ user_id: NEWCOMER, item_proto_id: 100, copies: COPIES }],
    gchat: {
      messages: [
        { type: 1, user_id: NEWCOMER, ts: 1_700_000_000, text: 'first of the new world' },
        { type: 1, user_id: 1, ts: 1_700_000_001, text: 'hello @20', user_ids_mentioned: [NEWCOMER] },
      ],
    },
  };
}

/** Sends from `userId` (mentioning a user who may be gone) until `stop()`, then twice more; every answer. */
async function keepSending(server: TestServer, token: string, sender: { userId: number; lane: number }, stop: () => boolean) {
  const answers: Answer[] = [];
  const mentioned = USERS[(sender.userId + sender.lane) % USERS.length];
  for (let i = 0, after = 0; after < 2; i++) {
    if (stop()) after++;
    // Each text differs: a bot may not repeat one.
    const text = `message ${i} of lane ${sender.lane} for @${mentioned}`;
    answers.push(await send(server, token, text, BOTS.has(sender.userId) ? { is_public: 1 } : {}));
  }
  return answers;
}

/** The authors and mentioned users of the stored messages. */
async function storedNames(server: TestServer): Promise<{ user_id: number; mentioned: number[] }[]> {
  const rows = await server.db.kysely.selectFrom('chat_messages').select(['user_id', 'user_ids_mentioned']).execute();
  return rows.map((row) => ({ user_id: Number(row.user_id), mentioned: JSON.parse(row.user_ids_mentioned ?? '[]') }));
}

test('gchat.send racing a replace import stores only messages of the new world, or answers 1', database, async () => {
  const config = { bodyLimit: BODY_LIMIT, chat: { historySize: 50, slowmodeInterval: 10, emoticons: [], botHourlyLimit: 100_000 } };
  const server = await startAdminServer({ world: await oldWorld(), config, redis: !missing.redis });
  try {
    const tokens = new Map<number, string>();
    for (const id of USERS) tokens.set(id, await signIn(server, id));
    for (const [bot, owner] of BOTS) tokens.set(bot, await botToken(server, tokens.get(owner)!, bot));
    for (const [id, token] of tokens) await say(server, token, `before the import, from ${id}`);

    let imported = false;
    const senders = [...tokens].flatMap(([userId, token]) =>
      Array.from({ length: LANES }, (_, lane) => keepSending(server, token, { userId, lane }, () => imported)),
    );
    // Every lane is sending when the import starts.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const summary = await admin(server, 'importWorld', { world: JSON.stringify(await newWorld()), mode: 'replace' }).finally(
      () => (imported = true),
    );
    assert.equal(summary.users, KEPT.length + 1);
    const answers = (await Promise.all(senders)).flat();

    const codes = new Map<number, number>();
    for (const answer of answers) codes.set(answer.body.code, (codes.get(answer.body.code) ?? 0) + 1);
    assert.deepEqual(
      answers.filter((a) => a.body.code !== 0 && a.body.code !== 1).map((a) => a.body),
      [],
      `every send answers 0 or 1 (answers by code: ${JSON.stringify([...codes])})`,
    );
    assert.ok(answers.every((a) => a.status === 200));

    const users = new Set([...KEPT, NEWCOMER]);
    const strangers = (await storedNames(server)).filter((m) => !users.has(m.user_id) || m.mentioned.some((id) => !users.has(id)));
    assert.deepEqual(strangers, [], 'every stored message names users of the new world only');

    // msg_seq goes on past every stored message.
    const kept = await signIn(server, KEPT[0]);
    const newcomer = await signInWith(server, 'newcomer@example.com');
    for (let i = 0; i < 10; i++) {
      await say(server, kept, `after the import ${i} for @${NEWCOMER}`);
      await say(server, newcomer, `welcome ${i}`);
    }

    const { world } = await admin(server, 'exportWorld');
    const copy = await startAdminServer({ config: { bodyLimit: BODY_LIMIT } });
    try {
      const again = await admin(copy, 'importWorld', { world: JSON.stringify(world), mode: 'replace' });
      assert.equal(again.messages, world.gchat.messages.length);
    } finally {
      await copy.close();
    }
  } finally {
    await server.close();
  }
});
