import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { openDatabase, type Database } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { importWorld, importWorldIfEmpty, parseWorld, WorldError } from '../src/world/import.js';
import { exportWorld } from '../src/world/export.js';
import type { World } from '../src/world/schema.js';
import { hashPassword } from '../src/auth/passwords.js';
import { newDatabaseLocation, ok, startTestServer } from './helpers.js';

const demo = JSON.parse(readFileSync(new URL('../worlds/demo.json', import.meta.url), 'utf8')) as World;
const NOW = 1_767_225_600;
const hash = await hashPassword('world-test-password');

/** A migrated, empty database of the kind under test, removed by the returned dispose. */
async function emptyDatabase(): Promise<{ db: Database; dispose: () => Promise<void> }> {
  const location = await newDatabaseLocation();
  const db = await openDatabase(location.url, { schema: location.schema, poolSize: 3, secretKey: location.secretKey });
  await migrateToLatest(db);
  return {
    db,
    async dispose() {
      await db.close();
      await location.dispose();
    },
  };
}

/** A small world: two users, three prototypes, items (one equipped), a friendship and a chat message. */
function smallWorld(): World {
  return {
    collections: [{ collection_id: 1, title: 'Classic' }],
    item_protos: [
      { item_proto_id: 1, type: 0, title: 'Card one', quality_id: 1, collection_id: 1, monopoly_id: 1 },
      { item_proto_id: 2, type: 0, title: 'Card two', quality_id: 1, collection_id: 1, monopoly_id: 1 },
      { item_proto_id: 3, type: 4, title: 'Dice', quality_id: 2 },
    ],
    users: [
      { user_id: 1, email: 'one@example.com', password_hash: hash, domain: 'one', nick: 'One' },
      { user_id: 2, email: 'two@example.com', password_hash: hash, domain: 'two', nick: 'Two' },
    ],
    items: [
      { item_id: 1, user_id: 1, item_proto_id: 1, ts_owned: NOW - 100 },
      { item_id: 2, user_id: 1, item_proto_id: 3, ts_owned: NOW - 50, equip: { game: 'classic', slot: 'generator' } },
      { item_id: 3, user_id: 2, item_proto_id: 2, ts_owned: NOW - 10 },
    ],
    friends: [{ user_id: 1, friend_id: 2, since: NOW - 1000 }],
    gchat: { messages: [{ msg_id: 'm1', type: 1, user_id: 1, ts: NOW - 5, text: 'hello @2', user_ids_mentioned: [2] }] },
  };
}

describe('world files', () => {
  test('the demo world imports, exports and re-imports identically', async () => {
    const first = await emptyDatabase();
    const second = await emptyDatabase();
    try {
      const summary = await importWorld(first.db, demo, { mode: 'replace', now: NOW });
      assert.equal(summary.users, demo.users!.length);
      assert.equal(summary.items, demo.items!.length);
      const exported = await exportWorld(first.db);
      parseWorld(exported);
      assert.equal(exported.users!.length, demo.users!.length);
      assert.equal(exported.item_protos!.length, demo.item_protos!.length);
      assert.equal(exported.items!.length, demo.items!.length);
      assert.equal(exported.friends!.length, demo.friends!.length);
      assert.equal(exported.friend_requests!.length, demo.friend_requests!.length);
      assert.equal(exported.blocks!.length, demo.blocks!.length);
      assert.equal(exported.gchat!.messages!.length, demo.gchat!.messages!.length);
      // Passwords leave only as hashes.
      assert.ok(exported.users!.every((u) => u.password === undefined));
      assert.match(exported.users!.find((u) => u.user_id === 1)!.password_hash!, /^\$argon2id\$/);
      assert.equal(JSON.stringify(exported).includes('alice-demo-password'), false);
      // The equipped items keep their places.
      assert.deepEqual(
        exported.items!.filter((i) => i.equip).map((i) => i.item_id),
        demo.items!.filter((i) => i.equip).map((i) => i.item_id),
      );

      // Into another database, and again into the first one: the same world every time.
      await importWorld(second.db, JSON.parse(JSON.stringify(exported)), { mode: 'replace', now: NOW + 999 });
      assert.deepEqual(await exportWorld(second.db), exported);
      await importWorld(first.db, JSON.parse(JSON.stringify(exported)), { mode: 'replace', now: NOW + 999 });
      assert.deepEqual(await exportWorld(first.db), exported);
      // Merging a world into itself changes nothing.
      await importWorld(first.db, JSON.parse(JSON.stringify(exported)), { mode: 'merge', now: NOW + 999 });
      assert.deepEqual(await exportWorld(first.db), exported);
      // Derived per-user totals still match the items after all these imports.
      const owned = new Map<number, number>();
      for (const item of exported.items!) owned.set(item.user_id, (owned.get(item.user_id) ?? 0) + 1);
      const counts = await first.db.kysely.selectFrom('inventory_counts').select(['user_id', 'owned']).where('owned', '>', 0).execute();
      assert.deepEqual(new Map(counts.map((c) => [c.user_id, c.owned])), owned);
    } finally {
      await first.dispose();
      await second.dispose();
    }
  });

  test('a server on the demo world answers from it', async () => {
    const server = await startTestServer({ world: demo });
    try {
      const users = ok(await server.call('users.get', { user_ids: 'alice,bob,7' }, { http: 'GET' }));
      assert.deepEqual(
        users.map((u: { user_id: number }) => u.user_id),
        [1, 2, 7],
      );
      const protos = ok(await server.call('data.getItemProtos', { item_proto_ids: '1010,3000,9010' }, { http: 'GET' }));
      assert.equal(protos.item_protos.length, 3);
      const chat = ok(await server.call('gchat.get', {}, { http: 'GET' }));
      assert.equal(chat.messages.length, demo.gchat!.messages!.length);

      // The demo accounts behave as the README's table says.
      const signIn = (user: string) => server.call('auth.signin', { email: `${user}@example.com`, password: `${user}-demo-password` });
      const alice = ok(await signIn('alice')).access_token as string;
      assert.equal(typeof ok(await signIn('bob')).totp_session_token, 'string', 'bob signs in with TOTP');
      assert.equal((await signIn('grace')).body.code, 412, 'grace is globally blocked');
      assert.equal((await signIn('heidi')).body.code, 8, 'heidi is always asked for a captcha');
      assert.equal((await server.call('inventory.get', { user_id: 5 }, { token: alice })).body.code, 701, "erin's inventory is private");
      const bot = ok(await server.call('bots.getToken', { user_id: 10 }, { token: alice }));
      assert.equal(typeof bot.access_token, 'string', 'alice owns the bot DiceBot (user 10)');
    } finally {
      await server.close();
    }
  });

  test('a bad file changes nothing and the error names the bad entry', async () => {
    const { db, dispose } = await emptyDatabase();
    try {
      await importWorld(db, smallWorld(), { mode: 'replace', now: NOW });
      const before = await exportWorld(db);
      const cases: { world: World; problem: RegExp }[] = [
        {
          // Valid everywhere but one item, placed after entries that would otherwise be written.
          world: {
            ...smallWorld(),
            users: [...smallWorld().users!, { user_id: 5, nick: 'New' }],
            items: [...smallWorld().items!, { user_id: 999, item_proto_id: 1 }],
          },
          problem: /items\[3\]\.user_id: unknown user 999/,
        },
        {
          world: { ...smallWorld(), gchat: { messages: [{ type: 1, user_id: 1, text: 'hi', user_ids_mentioned: [77] }] } },
          problem: /gchat\.messages\[0\]\.user_ids_mentioned: unknown user 77/,
        },
        {
          world: { ...smallWorld(), items: [{ user_id: 1, item_proto_id: 404 }] },
          problem: /items\[0\]\.item_proto_id: unknown item_proto_id 404/,
        },
        { world: { users: [{ user_id: 1, email: 'x@example.com' }] } as unknown as World, problem: /users\[0\]/ },
        {
          world: { ...smallWorld(), users: [smallWorld().users![0], { ...smallWorld().users![1], user_id: 1 }] },
          problem: /users\[1\]\.user_id: duplicate 1/,
        },
        {
          world: { ...smallWorld(), items: [{ user_id: 1, item_proto_id: 1, equip: { game: 'classic', slot: 'generator' } }] },
          problem: /items\[0\]\.equip: slot generator takes items of type 4/,
        },
        {
          world: { ...smallWorld(), blocks: [{ user_id: 1, blocked_user_id: 2 }] },
          problem: /blocks\[0\]: users 1 and 2 are also friends/,
        },
      ];
      for (const mode of ['merge', 'replace'] as const) {
        for (const { world, problem } of cases) {
          await assert.rejects(importWorld(db, world, { mode, now: NOW }), (error: unknown) => {
            assert.ok(error instanceof WorldError, String(error));
            assert.match(error.message, problem);
            return true;
          });
          assert.deepEqual(await exportWorld(db), before, `${mode}: nothing changed after ${problem}`);
        }
      }
      // In a merge, an e-mail of another stored user is caught before anything is written.
      const taken = {
        users: [{ user_id: 9, email: 'ONE@example.com', nick: 'Nine' }],
        item_protos: [{ item_proto_id: 50, type: 0, title: 'x' }],
      };
      await assert.rejects(importWorld(db, taken, { mode: 'merge', now: NOW }), /users\[0\]\.email: already used by user 1/);
      assert.deepEqual(await exportWorld(db), before);
    } finally {
      await dispose();
    }
  });

  test('merge adds and replaces entries by id; replace makes the world exactly the file', async () => {
    const { db, dispose } = await emptyDatabase();
    try {
      await importWorld(db, smallWorld(), { mode: 'replace', now: NOW });
      const update: World = {
        users: [
          { user_id: 2, email: 'two@example.com', password_hash: hash, domain: 'two', nick: 'Two renamed' },
          { user_id: 3, email: 'three@example.com', password_hash: hash, nick: 'Three' },
        ],
        item_protos: [{ item_proto_id: 4, type: 8, title: 'Taunt', quality_id: 1 }],
        // Refers to user 1 and prototype 1, which only the database holds.
        items: [
          { item_id: 10, user_id: 1, item_proto_id: 4, ts_owned: NOW },
          { user_id: 3, item_proto_id: 1, copies: 2, ts_owned: NOW },
        ],
        friend_requests: [{ from: 3, to: 1, ts: NOW }],
      };

      await importWorld(db, update, { mode: 'merge', now: NOW });
      const merged = await exportWorld(db);
      assert.deepEqual(
        merged.users!.map((u) => [u.user_id, u.nick]),
        [
          [1, 'One'],
          [2, 'Two renamed'],
          [3, 'Three'],
        ],
      );
      assert.deepEqual(
        merged.item_protos!.map((p) => p.item_proto_id),
        [1, 2, 3, 4],
      );
      assert.deepEqual(
        merged.items!.map((i) => [i.user_id, i.item_proto_id]),
        [
          [1, 1],
          [1, 3],
          [2, 2],
          [1, 4],
          [3, 1],
          [3, 1],
        ],
      );
      assert.equal(merged.items!.find((i) => i.item_id === 2)!.equip?.slot, 'generator', 'untouched entries keep their state');
      assert.equal(merged.friends!.length, 1);
      assert.equal(merged.gchat!.messages!.length, 1);
      assert.equal(merged.qualities!.length, 6, 'default classes');
      assert.equal(merged.item_types!.length, 10, 'default item types');

      // Replace with the same file fails: user 1 and prototype 1 are not in it.
      await assert.rejects(importWorld(db, update, { mode: 'replace', now: NOW }), /items\[0\]\.user_id: unknown user 1/);
      const selfContained = { ...update, items: [{ user_id: 3, item_proto_id: 4, ts_owned: NOW }], friend_requests: [] };
      await importWorld(db, selfContained, { mode: 'replace', now: NOW });
      const replaced = await exportWorld(db);
      assert.deepEqual(
        replaced.users!.map((u) => u.user_id),
        [2, 3],
      );
      assert.deepEqual(
        replaced.item_protos!.map((p) => p.item_proto_id),
        [4],
      );
      assert.deepEqual(
        replaced.items!.map((i) => [i.user_id, i.item_proto_id]),
        [[3, 4]],
      );
      assert.deepEqual(replaced.friends, []);
      assert.deepEqual(replaced.gchat!.messages, []);
      assert.deepEqual(replaced.collections, []);
    } finally {
      await dispose();
    }
  });

  test('a merge that bans users reports those whose sessions it ended', async () => {
    const server = await startTestServer({ world: smallWorld() });
    try {
      const signin = (email: string) => server.call('auth.signin', { email, password: 'world-test-password' });
      const token = ok(await signin('two@example.com')).access_token as string;
      const [one, two] = smallWorld().users!;
      const summary = await importWorld(
        server.db,
        {
          users: [
            { ...one, global_ban: 1 },
            { ...two, global_ban: 1 },
          ],
        },
        { mode: 'merge', now: NOW },
      );
      assert.deepEqual(summary.endedSessionsOf, [2], 'user 1 had no session to end');
      assert.equal((await server.call('users.get', {}, { token })).body.code, 1);
      assert.equal((await signin('one@example.com')).body.code, 412);

      const again = await importWorld(server.db, { users: [{ ...two, global_ban: 1 }] }, { mode: 'merge', now: NOW });
      assert.deepEqual(again.endedSessionsOf, [], 'nothing left to end');
      const replaced = await importWorld(server.db, smallWorld(), { mode: 'replace', now: NOW });
      assert.deepEqual(replaced.endedSessionsOf, []);
    } finally {
      await server.close();
    }
  });

  test('a new installation imports its world once, also when several processes start together', async () => {
    const { db, dispose } = await emptyDatabase();
    try {
      const results = await Promise.all([
        importWorldIfEmpty(db, smallWorld(), NOW),
        importWorldIfEmpty(db, smallWorld(), NOW),
        importWorldIfEmpty(db, smallWorld(), NOW),
      ]);
      assert.equal(results.filter((r) => r !== null).length, 1);
      assert.equal((await exportWorld(db)).items!.length, 3);
      assert.equal(await importWorldIfEmpty(db, demo, NOW), null, 'a database with a world is left alone');
      assert.equal((await exportWorld(db)).users!.length, 2);
    } finally {
      await dispose();
    }
  });
});
