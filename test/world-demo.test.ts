import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { makeDemoWorld } from '../scripts/make-demo-world.js';
import { worldJsonSchema } from '../scripts/make-world-schema.js';
import { parseWorld } from '../src/world/import.js';
import { demoAccounts } from '../src/cli/serve.js';
import type { World } from '../src/world/schema.js';

const demoFile = new URL('../worlds/demo.json', import.meta.url);
const demo = JSON.parse(readFileSync(demoFile, 'utf8')) as World;

test('worlds/demo.json is valid and is exactly what scripts/make-demo-world.ts generates', () => {
  parseWorld(demo);
  assert.deepEqual(demo, JSON.parse(JSON.stringify(makeDemoWorld())));
});

test('worlds/world.schema.json is exactly the schema imports check, and the demo world names it', () => {
  const committed = JSON.parse(readFileSync(new URL('../worlds/world.schema.json', import.meta.url), 'utf8'));
  assert.deepEqual(committed, worldJsonSchema());
  assert.equal(demo.$schema, './world.schema.json');
});

test('the demo catalogue covers every item type and class, with collections, cases, keys, monopolies and sticker groups', () => {
  const protos = demo.item_protos!;
  assert.ok(protos.length >= 200);
  const types = new Set(protos.map((p) => p.type));
  const classes = new Set(protos.map((p) => p.quality_id ?? 0));
  assert.deepEqual(
    [...types].sort((a, b) => a - b),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
  assert.deepEqual(
    [...classes].sort((a, b) => a - b),
    [0, 1, 2, 3, 4, 5],
  );
  assert.ok(demo.collections!.length >= 5);
  assert.ok(
    protos.every((p) => p.type !== 0 || p.monopoly_id !== undefined),
    'every card belongs to a monopoly',
  );
  assert.ok(new Set(protos.filter((p) => p.monopoly_id).map((p) => p.monopoly_id)).size >= 5);
  assert.ok(new Set(protos.filter((p) => p.sticker_group_id).map((p) => p.sticker_group_id)).size >= 2);
  const byId = new Map(protos.map((p) => [p.item_proto_id, p]));
  const cases = protos.filter((p) => p.type === 2);
  assert.ok(cases.length >= 3);
  for (const c of cases) {
    const key = byId.get(c.key_item_proto_id!);
    assert.equal(key?.type, 3, `the key of case ${c.item_proto_id}`);
    assert.ok(key.case_item_proto_ids?.includes(c.item_proto_id));
    assert.ok((c.drop ?? []).length > 0);
  }
  assert.ok(cases.some((c) => c.drop!.some((d) => d.is_rare === 1)) && cases.some((c) => c.drop!.some((d) => d.is_secondary === 1)));
});

test('the demo accounts cover every kind of user the README promises', () => {
  const users = demo.users!;
  assert.ok(users.length >= 24 && users.length <= 60, 'a few dozen users');
  const withPassword = users.filter((u) => u.password && u.email);
  assert.ok(withPassword.length >= 8);
  assert.ok(
    withPassword.some((u) => u.totp_secret),
    'one with TOTP',
  );
  assert.ok(
    withPassword.some((u) => u.global_ban === 1),
    'one globally blocked',
  );
  assert.ok(
    withPassword.some((u) => u.captcha === 'always'),
    'one with captcha always',
  );
  assert.ok(
    withPassword.some((u) => u.inventory_privacy === 'nobody'),
    'one with a private inventory',
  );
  assert.ok(users.filter((u) => u.moderator === 1).length >= 2, 'moderators');
  assert.ok(
    users.some((u) => u.vip === 1),
    'vip',
  );
  assert.ok(
    users.some((u) => u.muted_until !== undefined),
    'a muted user',
  );
  const bot = users.find((u) => u.bot_owner !== undefined);
  assert.ok(bot && withPassword.some((u) => u.user_id === bot.bot_owner), 'a bot whose owner can sign in');
});

test('the demo world has craftable sets, equipped items, relations and every kind of chat message', () => {
  const protos = new Map(demo.item_protos!.map((p) => [p.item_proto_id, p]));
  const craftable = new Map<string, number>();
  for (const item of demo.items!) {
    const proto = protos.get(item.item_proto_id)!;
    if (proto.can_craft === 0 || (item.ts_can_trade ?? 0) > 1_767_225_600 || item.ts_can_trade === -1) continue;
    const key = `${item.user_id}:${proto.type}:${proto.quality_id}`;
    craftable.set(key, (craftable.get(key) ?? 0) + (item.copies ?? 1));
  }
  assert.ok(
    [...craftable.values()].some((n) => n >= 10),
    'someone owns ten craftable items of one type and class',
  );
  const equipped = demo.items!.filter((i) => i.equip);
  for (const slot of ['cards', 'generator', 'joke', 'badge'])
    assert.ok(
      equipped.some((i) => i.equip!.slot === slot),
      `an item in slot ${slot}`,
    );
  assert.ok(demo.friends!.length >= 10);
  assert.ok(demo.friend_requests!.length >= 2);
  assert.ok(demo.blocks!.length >= 2);
  const types = new Set(demo.gchat!.messages!.map((m) => m.type));
  assert.deepEqual([...types].sort(), [1, 2, 3, 4]);
  assert.ok(demo.gchat!.status);
});

test('serve prints every demo account with its password and what it shows', () => {
  const accounts = demoAccounts(demo);
  const signIns = demo.users!.filter((u) => u.email && u.password);
  assert.deepEqual(
    accounts.map((a) => [a.email, a.password]),
    signIns.map((u) => [u.email, u.password]),
  );
  const notes = (email: string) => accounts.find((a) => a.email === email)!.notes;
  const bob = demo.users!.find((u) => u.totp_secret)!;
  assert.ok(notes(bob.email!).includes(`TOTP secret ${bob.totp_secret}`));
  const bot = demo.users!.find((u) => u.bot_owner !== undefined)!;
  const owner = demo.users!.find((u) => u.user_id === bot.bot_owner)!;
  assert.ok(notes(owner.email!).includes(`owns bot ${bot.user_id}`));
  assert.ok(notes(demo.users!.find((u) => u.global_ban === 1)!.email!).includes('globally blocked'));
  assert.ok(notes(demo.users!.find((u) => u.inventory_privacy === 'nobody')!.email!).includes('inventory: nobody'));
});

test('the demo world has weighted cases, gift sets and promo codes, one of them open to every user', () => {
  const protos = new Map(demo.item_protos!.map((p) => [p.item_proto_id, p]));
  const cases = demo.item_protos!.filter((p) => p.type === 2);
  for (const c of cases)
    assert.equal(
      c.drop!.reduce((sum, d) => sum + (d.weight ?? 1), 0),
      100,
      `weights of case ${c.item_proto_id}`,
    );
  assert.ok(
    demo.item_protos!.some((p) => p.type === 1 && (p.drop ?? []).length > 1),
    'a gift set',
  );
  const alice = demo.items!.filter((i) => i.user_id === 1);
  const ownsKeyOf = (c: number) => alice.some((i) => i.item_proto_id === protos.get(c)!.key_item_proto_id);
  assert.ok(
    alice.some((i) => protos.get(i.item_proto_id)!.type === 2 && ownsKeyOf(i.item_proto_id)),
    'Alice owns a case and its key',
  );
  const open = demo.promocodes!.filter((p) => p.max_uses === undefined && p.ts_expires === undefined && !p.disabled);
  assert.ok(open.length >= 1, 'a code any new user can redeem');
  for (const code of demo.promocodes!) for (const id of code.item_proto_ids) assert.ok(protos.has(id));
});
