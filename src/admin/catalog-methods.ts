import { Type } from '@sinclair/typebox';
import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { parseJsonParam } from '../api/depth.js';
import { ApiError, Code, badParam } from '../api/errors.js';
import { Strict, Uint } from '../api/schema-types.js';
import type { Services } from '../services.js';
import type { InTransaction } from '../db/connection.js';
import { nowSeconds } from '../services.js';
import { importWorld, itemProtoEntry, type World, WorldError, WorldItemProto } from '../world/index.js';
import { announceInvalidated } from '../trades/index.js';
import { grantItems, revokeItem } from '../inventory/index.js';
import { requireUser } from '../users/index.js';
import { announceCatalogChanged } from '../catalog/index.js';
import { loadProto, protoClass, protoHasItems } from './queries.js';

/** Largest prototype entry accepted, as JSON text. */
const MAX_PROTO_JSON = 60_000;
export const MAX_GRANT_COPIES = 1000;

/** The one entry a catalogue method imports: where the world's problems name it, and how its own answer names their rest. */
interface CatalogEntry {
  world: Partial<Record<keyof World, unknown[]>>;
  path: string;
  describe: (problem: string) => string;
}

/** A problem of the entry at `path` without its place: `item_protos[0].title: …` is `title: …`, `item_protos[0]: …` is `…`. */
function withoutPlace(problem: string, path: string): string {
  for (const place of [`${path}.`, `${path}: `]) if (problem.startsWith(place)) return problem.slice(place.length);
  return problem;
}

/** Imports a partial world (merge), answering a bad entry with code 2, and tells every process the catalogue changed. */
async function mergeIntoCatalog(services: Services, entry: CatalogEntry, inTransaction: InTransaction): Promise<void> {
  let summary;
  try {
    summary = await importWorld(services.db, entry.world, { mode: 'merge', now: nowSeconds(services), inTransaction });
  } catch (error) {
    if (!(error instanceof WorldError)) throw error;
    const own = error.problems.map((problem) => withoutPlace(problem, entry.path));
    throw new ApiError(Code.BAD_PARAM, own.map(entry.describe).join('; '));
  }
  await announceCatalogChanged(services);
  await announceInvalidated(services, summary.invalidatedTrades);
}

/**
 * Items carry their prototype's type and class (inventory order, crafting and craft history
 * rely on them), so a prototype that has items keeps both.
 */
async function refuseIfItemsExist(services: Services, itemProtoId: number): Promise<void> {
  if (await protoHasItems(services.db.kysely, itemProtoId))
    throw badParam('item_proto', `prototype ${itemProtoId} already has items: its type and quality_id cannot change`);
}

function parseJsonObject(name: string, text: string): Record<string, unknown> {
  const value = parseJsonParam(name, text);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badParam(name, 'must be a JSON object');
  return value as Record<string, unknown>;
}

export const catalogMethods: AnyMethod[] = [
  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.upsertItemProto',
    summary: 'Create an item prototype, or replace a stored one',
    description:
      'item_proto is a prototype entry of the world file, as JSON text; the prototype becomes exactly that entry (absent fields take their defaults), as a world import would make it. Referenced collections and prototypes must exist. The type and quality_id of a prototype that has items cannot change.',
    params: P.object({
      item_proto: P.string({
        maxLength: MAX_PROTO_JSON,
        description: 'JSON object: a world-file item_protos entry (item_proto_id, type, title, ...)',
      }),
    }),
    result: Type.Object({ item_proto: WorldItemProto }, Strict),
    handler: async ({ services, inTransaction }, params) => {
      const entry = parseJsonObject('item_proto', params.item_proto);
      const id = entry.item_proto_id;
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1)
        throw badParam('item_proto', 'needs item_proto_id, a positive integer');
      const stored = await protoClass(services.db.kysely, id);
      if (stored && (entry.type !== stored.type || (entry.quality_id ?? 0) !== stored.quality_id)) await refuseIfItemsExist(services, id);
      const describe = (problem: string) => `parameter item_proto: ${problem}`;
      await mergeIntoCatalog(services, { world: { item_protos: [entry] }, path: 'item_protos[0]', describe }, inTransaction);
      return { item_proto: itemProtoEntry(await loadProto(services.db.kysely, id)) };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.upsertCollection',
    summary: 'Create a collection or change its title',
    params: P.object({
      collection_id: P.uint({ minimum: 1, description: 'id of the collection to add or replace' }),
      title: P.string({ minLength: 1, maxLength: 200, description: 'name of the collection' }),
    }),
    result: Type.Object({ collection_id: Uint, title: Type.String() }, Strict),
    handler: async ({ services, inTransaction }, params) => {
      const world = { collections: [{ collection_id: params.collection_id, title: params.title }] };
      await mergeIntoCatalog(services, { world, path: 'collections[0]', describe: (problem) => `parameter ${problem}` }, inTransaction);
      return { collection_id: params.collection_id, title: params.title };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.grantItems',
    summary: 'Give a user copies of an item',
    description: `At most ${MAX_GRANT_COPIES} copies per call. ts_can_trade: Unix time from which the items may be traded and crafted (0 = at once, -1 = never).`,
    params: P.object({
      user_id: P.idOrDomain({ description: 'id or domain of the receiver' }),
      item_proto_id: P.uint({ minimum: 1, description: 'prototype of the new items' }),
      copies: P.uint({ minimum: 1, maximum: MAX_GRANT_COPIES, default: 1, description: 'how many identical items to grant' }),
      ts_can_trade: P.optional(P.int({ minimum: -1, description: 'Unix time; -1 = never' })),
    }),
    result: Type.Object({ user_id: Uint, item_ids: Type.Array(Uint) }, Strict),
    errors: { 101: 'user does not exist' },
    handler: async ({ services, inTransaction }, params) => {
      const userId = await requireUser(services, params.user_id);
      const grant = {
        userId,
        itemProtoId: params.item_proto_id,
        copies: params.copies,
        ...(params.ts_can_trade !== undefined ? { tsCanTrade: params.ts_can_trade } : {}),
      };
      const itemIds = await grantItems(services, grant, inTransaction);
      return { user_id: userId, item_ids: itemIds };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.revokeItem',
    summary: 'Take an owned item away from its owner',
    description: 'The item leaves the inventory (and whatever it was equipped on) and is kept in history as revoked, with the reason.',
    params: P.object({
      item_id: P.uint({ minimum: 1, description: 'the item to take away' }),
      reason: P.optional(P.string({ maxLength: 500, description: 'kept in the audit log' })),
    }),
    result: Type.Object({ item_id: Uint }, Strict),
    handler: async ({ services, inTransaction }, params) => {
      await revokeItem(services, params.item_id, params.reason ?? null, inTransaction);
      return { item_id: params.item_id };
    },
  }),
];
