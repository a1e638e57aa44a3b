import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { DB_KIND, startTestServer, type TestServer } from './helpers.js';
import { catalogWorld, tokenFor, user } from './item-fixtures.js';
import { openDatabase, type Database } from '../src/db/connection.js';
import type { World } from '../src/world/schema.js';

const root = join(import.meta.dirname, '..');
const run = promisify(execFile);

/** Runs the game-platform command; resolves to its exit code and output. */
async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', join(root, 'src/cli/main.ts'), ...args], {
      cwd: root,
      env: { ...process.env, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const POOL = 400;
const FIRST_ID = 1000;
const world: World = {
  ...catalogWorld,
  users: [user(1), user(2)],
  items: Array.from({ length: POOL }, (_, i) => ({ item_id: FIRST_ID + i, user_id: 1 + (i % 2), item_proto_id: 101, ts_owned: 100 + i })),
};

/** Every item accounted for: owned, or consumed by exactly one recorded craft whose result exists. */
async function checkConsistent(db: Database): Promise<{ crafts: number }> {
  const k = db.kysely;
  const crafts = await k.selectFrom('crafts').select(['craft_id', 'user_id', 'result_item_id']).execute();
  const items = await k.selectFrom('items').select(['item_id', 'user_id', 'state', 'craft_id', 'created_by_craft_id']).execute();
  assert.equal(items.length, POOL + crafts.length, 'one new item per craft, none lost');
  for (const craft of crafts) {
    const consumed = items.filter((i) => i.craft_id === craft.craft_id);
    assert.equal(consumed.length, 10, `craft ${craft.craft_id} consumed ten items`);
    assert.ok(consumed.every((i) => i.state === 'consumed' && i.user_id === craft.user_id));
    const result = items.find((i) => i.item_id === craft.result_item_id);
    assert.ok(result, `the result of craft ${craft.craft_id} exists`);
    assert.equal(result.created_by_craft_id, craft.craft_id);
  }
  for (const item of items)
    if (item.state === 'consumed')
      assert.ok(
        crafts.some((c) => c.craft_id === item.craft_id),
        `item ${item.item_id} was consumed by a recorded craft`,
      );
  return { crafts: crafts.length };
}

test(
  'backup during a write storm, then restore: the copy is consistent and the server runs on it',
  {
    skip: DB_KIND === 'postgres' ? 'PostgreSQL databases are backed up with pg_dump (the next test checks the command says so)' : false,
    timeout: 240_000,
  },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gp-backup-'));
    const server = await startTestServer({ world });
    let restored: TestServer | undefined;
    try {
      await server.app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = server.app.server.address() as AddressInfo;
      const tokens = [await tokenFor(server, 1), await tokenFor(server, 2)];
      // Each of four clients crafts its own items, one craft after another, until told to stop.
      let stop = false;
      const failures: string[] = [];
      const crafted = [0, 0, 0, 0];
      const client = async (n: number) => {
        const owner = n % 2;
        const mine = Array.from({ length: POOL }, (_, i) => FIRST_ID + i).filter(
          (id, i) => i % 2 === owner && Math.floor(i / 2) % 2 === Math.floor(n / 2),
        );
        for (let next = 0; !stop && next + 10 <= mine.length; next += 10) {
          const response = await fetch(`http://127.0.0.1:${port}/api/inventory.craft`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ access_token: tokens[owner], item_ids: mine.slice(next, next + 10).join(',') }),
          });
          const body = (await response.json()) as { code: number };
          if (body.code !== 0) failures.push(JSON.stringify(body));
          else crafted[n]++;
        }
      };
      const storm = Promise.all([0, 1, 2, 3].map(client));
      while (crafted.reduce((a, b) => a + b) < 4) await new Promise((r) => setTimeout(r, 20));

      const file = join(dir, 'backup.db');
      const backup = await cli(['backup', file], { DATABASE_URL: server.location.url });
      const craftsWhenDone = crafted.reduce((a, b) => a + b);
      stop = true;
      await storm;
      assert.equal(backup.code, 0, backup.stderr);
      assert.match(backup.stdout, /backed up to .*backup\.db: 2 users, \d+ items \(integrity checked\)/);
      assert.deepEqual(failures, []);

      // The live database and the copy are both consistent; the copy holds the crafts made before it was done.
      const live = await checkConsistent(server.db);
      const target = `sqlite:${join(dir, 'restored.db')}`;
      // The key file goes with the database: the copy's TOTP secrets are sealed with it.
      copyFileSync(`${server.location.url.slice('sqlite:'.length)}.key`, `${join(dir, 'restored.db')}.key`);
      const restore = await cli(['restore', file], { DATABASE_URL: target });
      assert.equal(restore.code, 0, restore.stderr);
      const copy = await openDatabase(target);
      let inCopy: { crafts: number };
      try {
        inCopy = await checkConsistent(copy);
      } finally {
        await copy.close();
      }
      assert.ok(
        inCopy.crafts >= 4 && inCopy.crafts <= craftsWhenDone,
        `${inCopy.crafts} crafts in the copy, ${craftsWhenDone} when it was done`,
      );
      assert.ok(inCopy.crafts <= live.crafts);

      // A server on the restored database answers from it.
      restored = await startTestServer({ location: { url: target, redisPrefix: 'gp:restored:', dispose: async () => undefined } });
      const token = await tokenFor(restored, 1);
      const answer = await restored.call('inventory.get', { user_id: 1 }, { token });
      const owned = await restored.db.kysely
        .selectFrom('items')
        .select('item_id')
        .where('user_id', '=', 1)
        .where('state', '=', 'owned')
        .execute();
      assert.equal(answer.body.code, 0);
      assert.equal(answer.body.data.count, owned.length);
    } finally {
      await restored?.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('backup and restore refuse what they cannot do, and say how to back up PostgreSQL', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gp-backup-'));
  try {
    const postgres = await cli(['backup', join(dir, 'x.dump')], { DATABASE_URL: 'postgres://app:secret@db.example.com:5432/game' });
    assert.equal(postgres.code, 1);
    assert.match(postgres.stderr, /pg_dump --format=custom --file FILE 'postgres:\/\/app:\*\*\*@db\.example\.com:5432\/game'/);
    assert.match(postgres.stderr, /pg_restore/);
    assert.doesNotMatch(postgres.stderr, /secret/);
    const missing = await cli(['restore', join(dir, 'none.db')], { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no backup at/);
    const usage = await cli(['backup'], { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` });
    assert.equal(usage.code, 2);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
