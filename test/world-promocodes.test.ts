import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newDatabaseLocation, processDatabaseEnv, startTestServer, type TestServer } from './helpers.js';
import { ADMIN_KEY, admin, adminCall, fails, signIn, smallWorld, startAdminServer } from './admin-support.js';
import { runCli } from './process-support.js';
import type { World } from '../src/world/schema.js';

const REFUSED = { code: 1501, description: 'the promo code is unknown, expired, used up or already used' };

function redeem(server: TestServer, token: string, promocode: string) {
  return server.call('wallet.promocodeActivate', { promocode }, { token });
}

async function redeemed(server: TestServer, token: string, promocode: string): Promise<number[]> {
  const answer = await redeem(server, token, promocode);
  assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
  return answer.body.data.items.map((i: { item_id: number }) => i.item_id);
}

async function refused(server: TestServer, token: string, promocode: string): Promise<void> {
  assert.deepEqual((await redeem(server, token, promocode)).body, REFUSED, promocode);
}

/** The codes as admin.listPromocodes shows them, newest first. */
async function listed(server: TestServer): Promise<{ code: string; uses: number; created_at: number }[]> {
  return (await admin(server, 'listPromocodes', { count: 100 })).promocodes;
}

/**
 * Two codes a minute apart, ONE-SHOT (max_uses 1) redeemed by alice and OPEN by alice and bob;
 * the granted item ids by user and code.
 */
async function redeemTwoCodes(server: TestServer): Promise<Map<string, number[]>> {
  await admin(server, 'createPromocode', { code: 'one-shot', item_proto_ids: '100', max_uses: 1 });
  server.clock.advance(60);
  await admin(server, 'createPromocode', { code: 'open', item_proto_ids: '100,101' });
  server.clock.advance(60);
  const alice = await signIn(server, 'alice@example.com');
  const bob = await signIn(server, 'bob@example.com');
  const granted = new Map<string, number[]>();
  granted.set('1:ONE-SHOT', await redeemed(server, alice, 'one-shot'));
  server.clock.advance(5);
  granted.set('1:OPEN', await redeemed(server, alice, 'open'));
  server.clock.advance(5);
  granted.set('2:OPEN', await redeemed(server, bob, 'open'));
  return granted;
}

/** Alice and bob cannot redeem either code again, carol cannot redeem the used-up one, and can the other. */
async function stillRedeemed(server: TestServer): Promise<void> {
  const alice = await signIn(server, 'alice@example.com');
  const bob = await signIn(server, 'bob@example.com');
  const carol = await signIn(server, 'carol@example.com');
  for (const code of ['ONE-SHOT', 'OPEN']) {
    await refused(server, alice, code);
    await refused(server, bob, code);
  }
  await refused(server, carol, 'one-shot');
  assert.equal((await redeemed(server, carol, 'open')).length, 2);
}

async function withAdminServer(run: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startAdminServer({ world: await smallWorld() });
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

describe('promo codes in world files', () => {
  test('export carries each code with its uses and redemptions, and a replace import gives the same world back', () =>
    withAdminServer(async (server) => {
      const granted = await redeemTwoCodes(server);
      const before = await listed(server);
      const { world } = (await admin(server, 'exportWorld')) as { world: World };
      const created = new Map(before.map((p) => [p.code, p.created_at]));
      assert.deepEqual(world.promocodes, [
        {
          code: 'ONE-SHOT',
          item_proto_ids: [100],
          max_uses: 1,
          created_at: created.get('ONE-SHOT'),
          uses: 1,
          used_by: [{ user_id: 1, ts: created.get('OPEN')! + 60, item_ids: granted.get('1:ONE-SHOT') }],
        },
        {
          code: 'OPEN',
          item_proto_ids: [100, 101],
          created_at: created.get('OPEN'),
          uses: 2,
          used_by: [
            { user_id: 1, ts: created.get('OPEN')! + 65, item_ids: granted.get('1:OPEN') },
            { user_id: 2, ts: created.get('OPEN')! + 70, item_ids: granted.get('2:OPEN') },
          ],
        },
      ]);

      server.clock.advance(3600);
      await admin(server, 'importWorld', { world: JSON.stringify(world), mode: 'replace' });
      assert.deepEqual((await admin(server, 'exportWorld')).world, world);
      assert.deepEqual(await listed(server), before, 'the same uses, times and order');
      await stillRedeemed(server);
    }));

  test('the command line exports and re-imports the world of a stopped server, and the restarted server refuses redeemed codes', async () => {
    const location = await newDatabaseLocation();
    const dir = mkdtempSync(join(tmpdir(), 'gp-promocodes-'));
    try {
      const first = await startAdminServer({ world: await smallWorld(), location });
      try {
        await redeemTwoCodes(first);
      } finally {
        await first.close();
      }
      const env = processDatabaseEnv(location);
      const file = join(dir, 'w.json');
      const exported = await runCli(['export', file], env);
      assert.equal(exported.code, 0, exported.stderr);
      const imported = await runCli(['import', file, '--mode', 'replace'], env);
      assert.equal(imported.code, 0, imported.stderr);
      const again = await runCli(['export'], env);
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(JSON.parse(again.stdout), JSON.parse(readFileSync(file, 'utf8')));

      const restarted = await startTestServer({ location, config: { adminKey: ADMIN_KEY } });
      try {
        assert.deepEqual(
          (await listed(restarted)).map((p) => [p.code, p.uses]),
          [
            ['OPEN', 2],
            ['ONE-SHOT', 1],
          ],
        );
        await stillRedeemed(restarted);
      } finally {
        await restarted.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await location.dispose();
    }
  });

  test('a merge adds the redemptions of its entry and undoes none; an entry without uses keeps them and the creation time', () =>
    withAdminServer(async (server) => {
      await redeemTwoCodes(server);
      const { world } = (await admin(server, 'exportWorld')) as { world: World };
      const before = await listed(server);
      server.clock.advance(3600);

      await admin(server, 'importWorld', { world: JSON.stringify(world) });
      assert.deepEqual((await admin(server, 'exportWorld')).world, world, 'merging a world into itself changes nothing');

      // Carol redeems OPEN after the file was written; merging the file undoes no redemption.
      const carol = await signIn(server, 'carol@example.com');
      await redeemed(server, carol, 'open');
      const current = (await admin(server, 'exportWorld')).world.promocodes as NonNullable<World['promocodes']>;
      await admin(server, 'importWorld', { world: JSON.stringify({ promocodes: world.promocodes }) });
      assert.deepEqual((await admin(server, 'exportWorld')).world.promocodes, current);
      assert.equal(current.find((p) => p.code === 'OPEN')!.uses, world.promocodes!.find((p) => p.code === 'OPEN')!.uses! + 1);
      await refused(server, carol, 'open');
      const after = await listed(server);

      // Entries as older files write them: the definition changes, the uses and creation time stay.
      const ts_expires = Math.floor(server.clock.now() / 1000) + 86400;
      const definitions = world.promocodes!.map(({ code, item_proto_ids, max_uses }) => ({ code, item_proto_ids, max_uses, ts_expires }));
      await admin(server, 'importWorld', { world: JSON.stringify({ promocodes: definitions }) });
      assert.deepEqual(
        await listed(server),
        after.map((p) => ({ ...p, ts_expires })),
      );
      assert.deepEqual(
        after.map(({ code, created_at }) => [code, created_at]),
        before.map(({ code, created_at }) => [code, created_at]),
      );
    }));

  test('older world files import: codes without uses are unused after a replace; used_by alone sets the count', () =>
    withAdminServer(async (server) => {
      await redeemTwoCodes(server);
      const base = await smallWorld();
      const now = Math.floor(server.clock.now() / 1000);
      const world: World = {
        ...base,
        promocodes: [
          { code: 'ONE-SHOT', item_proto_ids: [100], max_uses: 1 },
          { code: 'OPEN', item_proto_ids: [100, 101], used_by: [{ user_id: 2 }] },
        ],
      };
      await admin(server, 'importWorld', { world: JSON.stringify(world), mode: 'replace' });
      const exported = (await admin(server, 'exportWorld')).world as World;
      assert.deepEqual(exported.promocodes, [
        { code: 'ONE-SHOT', item_proto_ids: [100], max_uses: 1, created_at: now, uses: 0 },
        { code: 'OPEN', item_proto_ids: [100, 101], created_at: now, uses: 1, used_by: [{ user_id: 2, ts: now, item_ids: [] }] },
      ]);
      const alice = await signIn(server, 'alice@example.com');
      const bob = await signIn(server, 'bob@example.com');
      await redeemed(server, alice, 'one-shot');
      await refused(server, bob, 'open');
    }));

  test('redemptions of unknown users, a count below the redemptions or a user twice are refused and change nothing', () =>
    withAdminServer(async (server) => {
      await redeemTwoCodes(server);
      await server.services.presence.write();
      const before = (await admin(server, 'exportWorld')).world as World;
      const code = (entry: Record<string, unknown>) => ({ code: 'OPEN', item_proto_ids: [100], ...entry });
      const cases: { promocodes: Record<string, unknown>[]; problem: RegExp }[] = [
        {
          promocodes: [code({ used_by: [{ user_id: 1 }, { user_id: 404 }] })],
          problem: /promocodes\[0\]\.used_by\[1\]\.user_id: unknown user 404/,
        },
        {
          promocodes: [code({ uses: 1, used_by: [{ user_id: 1 }, { user_id: 2 }] })],
          problem: /promocodes\[0\]\.uses: 1 is fewer than the 2 redemptions in used_by/,
        },
        {
          promocodes: [code({ used_by: [{ user_id: 2 }, { user_id: 2 }] })],
          problem: /promocodes\[0\]\.used_by\[1\]\.user_id: duplicate 2/,
        },
        { promocodes: [code({ uses: -1 })], problem: /promocodes\[0\]\.uses/ },
      ];
      for (const mode of ['merge', 'replace'] as const) {
        for (const { promocodes, problem } of cases) {
          const world = { ...(mode === 'replace' ? await smallWorld() : {}), promocodes };
          const answer = fails(await adminCall(server, 'importWorld', { world: JSON.stringify(world), mode }), 2);
          assert.match(answer.description!, problem, mode);
          assert.deepEqual((await admin(server, 'exportWorld')).world, before, `${mode}: nothing changed after ${problem}`);
        }
      }
    }));
});
