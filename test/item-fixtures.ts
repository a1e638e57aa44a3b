import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import { allMethods } from '../src/domains.js';
import { newToken, sha256 } from '../src/infra/secrets.js';
import type { World } from '../src/world/schema.js';
import { ok, type Answer, type TestServer } from './helpers.js';

/** Opens a session for a user straight in the database and returns its access token. */
export async function tokenFor(server: TestServer, userId: number, options: { bot?: boolean } = {}): Promise<string> {
  const token = newToken();
  const now = Math.floor(server.clock.now() / 1000);
  await server.db.kysely
    .insertInto('sessions')
    .values({
      user_id: userId,
      family_id: randomUUID(),
      access_hash: sha256(token),
      refresh_hash: null,
      ip: null,
      is_bot: options.bot ? 1 : 0,
      expires_at: options.bot ? 0 : now + 86400 * 365,
      created_at: now,
    })
    .execute();
  return token;
}

const checkers = new Map<string, TypeCheck<TSchema>>();

/** Asserts that a successful answer's `data` matches the method's published result schema. */
export function assertResultSchema(method: string, answer: Answer): void {
  let check = checkers.get(method);
  if (!check) {
    const definition = allMethods().find((m) => m.name === method);
    assert.ok(definition?.result, `${method} publishes a result schema`);
    check = TypeCompiler.Compile(definition.result);
    checkers.set(method, check);
  }
  const data = answer.body.data;
  if (!check.Check(data)) {
    const errors = [...check.Errors(data)].slice(0, 5).map((e) => `${e.path}: ${e.message}`);
    assert.fail(`${method} answer does not match its schema:\n  ${errors.join('\n  ')}`);
  }
}

/** Calls a method, asserts success and the result schema, and returns `data`. */
export async function callOk(
  server: TestServer,
  method: string,
  params: Record<string, unknown> = {},
  options: Parameters<TestServer['call']>[2] = {},
): Promise<any> {
  const answer = await server.call(method, params, options);
  const data = ok(answer);
  assertResultSchema(method, answer);
  return data;
}

/** Calls a method that answers `{ code: 0 }` alone on success, and asserts that it did. */
export async function callVoid(
  server: TestServer,
  method: string,
  params: Record<string, unknown> = {},
  options: Parameters<TestServer['call']>[2] = {},
): Promise<void> {
  assert.deepEqual((await server.call(method, params, options)).body, { code: 0 }, method);
}

/** Calls a method and asserts it failed with the given code. */
export async function callFails(
  server: TestServer,
  method: string,
  params: Record<string, unknown>,
  code: number,
  options: Parameters<TestServer['call']>[2] = {},
): Promise<Answer> {
  const answer = await server.call(method, params, options);
  assert.equal(answer.body.code, code, `expected code ${code}, got ${JSON.stringify(answer.body)}`);
  return answer;
}

/** A bcrypt-free user: no password, signed in through tokenFor. */
export function user(userId: number, extra: Partial<NonNullable<World['users']>[number]> = {}): NonNullable<World['users']>[number] {
  return { user_id: userId, nick: `user${userId}`, ...extra };
}

/**
 * A small catalogue: cards of classes 0 to 5 in two monopolies, a case and its key, dice with
 * no higher class, stickers, a subscription, a badge and a taunt.
 */
export const catalogWorld: World = {
  collections: [
    { collection_id: 1, title: 'Alpha' },
    { collection_id: 2, title: 'Beta' },
    { collection_id: 3, title: 'Unused' },
  ],
  item_protos: [
    {
      item_proto_id: 101,
      type: 0,
      quality_id: 1,
      title: 'Card A1',
      description: 'First card',
      image: 'https://img.example/a1.png',
      monopoly_id: 1,
      collection_id: 1,
      prices: { buy: 5, quick_sell: 0.5 },
      twin_item_proto_ids: [102],
    },
    { item_proto_id: 102, type: 0, quality_id: 1, title: 'Card B1', monopoly_id: 2, collection_id: 1 },
    { item_proto_id: 103, type: 0, quality_id: 1, title: 'Card A1 uncraftable', monopoly_id: 1, can_craft: 0 },
    { item_proto_id: 201, type: 0, quality_id: 2, title: 'Card A2', monopoly_id: 1, collection_id: 2 },
    { item_proto_id: 202, type: 0, quality_id: 2, title: 'Card B2', monopoly_id: 2 },
    { item_proto_id: 203, type: 0, quality_id: 2, title: 'Card A2 promo', monopoly_id: 1, craft_result: 0 },
    { item_proto_id: 301, type: 0, quality_id: 3, title: 'Card A3', monopoly_id: 1 },
    {
      item_proto_id: 501,
      type: 2,
      quality_id: 1,
      title: 'Case',
      image: 'https://img.example/case.png',
      collection_id: 2,
      key_item_proto_id: 502,
      prices: { quick_sell: 0.3 },
      drop: [{ item_proto_id: 101 }, { item_proto_id: 201, is_secondary: 1 }, { item_proto_id: 301, is_rare: 1 }],
      can_craft: 0,
    },
    {
      item_proto_id: 502,
      type: 3,
      quality_id: 1,
      title: 'Key',
      prices: { buy: 33 },
      case_item_proto_ids: [501],
      can_craft: 0,
      extra: { buy_cost: 39 },
    },
    { item_proto_id: 601, type: 4, quality_id: 1, title: 'Dice' },
    { item_proto_id: 701, type: 9, quality_id: 1, title: 'Sticker', sticker_group_id: 1 },
    { item_proto_id: 702, type: 9, quality_id: 2, title: 'Sticker 2', sticker_group_id: 7 },
    { item_proto_id: 801, type: 0, quality_id: 0, title: 'Stock card', monopoly_id: 1 },
    { item_proto_id: 802, type: 0, quality_id: 0, title: 'Stock card 2', monopoly_id: 2 },
    {
      item_proto_id: 901,
      type: 7,
      quality_id: 1,
      title: 'Subscription',
      item_proto_status: 1,
      can_craft: 0,
      extra: { uses: { left: 5, origin: 5 } },
    },
    { item_proto_id: 951, type: 0, quality_id: 5, title: 'Card A5', monopoly_id: 1 },
    { item_proto_id: 550, type: 5, quality_id: 1, title: 'Badge', can_craft: 0 },
    { item_proto_id: 850, type: 8, quality_id: 1, title: 'Taunt' },
  ],
};

/** Every prototype id of catalogWorld in ascending order. */
export const CATALOG_IDS = catalogWorld.item_protos!.map((p) => p.item_proto_id).sort((a, b) => a - b);

/** Item ids of a user's owned items of one prototype, ascending. */
export async function ownedIds(server: TestServer, userId: number, itemProtoId?: number): Promise<number[]> {
  let query = server.db.kysely.selectFrom('items').select('item_id').where('user_id', '=', userId).where('state', '=', 'owned');
  if (itemProtoId !== undefined) query = query.where('item_proto_id', '=', itemProtoId);
  const rows = await query.orderBy('item_id').execute();
  return rows.map((r) => r.item_id);
}
