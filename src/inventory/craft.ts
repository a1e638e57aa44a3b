import { randomInt } from 'node:crypto';
import { SerializedData, defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { ApiError, Code, badParam } from '../api/errors.js';
import { nowSeconds, type Services } from '../services.js';
import { type Catalog, craftKey, getCatalog, ownedItemJson, type OwnedRow, type ProtoEntry } from '../catalog/index.js';
import { CraftResult } from './schemas.js';
import { announceInventoriesChanged } from './answer-cache.js';
import { createCraftResult, readCraftInputs, recordCraftConsuming, type ConsumedInput, type CraftInput } from './queries.js';
import { elementAt } from '../infra/elements.js';

export const CRAFT_INPUTS = 10;

const unusable = (description = 'one of the passed items cannot be used in crafting') =>
  new ApiError(Code.CRAFT_ITEM_UNUSABLE, description);

/**
 * The first reason one of the items cannot be used, as 603: unknown, not the caller's, no
 * longer owned, trade-locked or equipped; none when every one can.
 */
function refusal(userId: number, now: number, ids: number[], items: CraftInput[]): ApiError | undefined {
  if (items.length !== ids.length) return unusable('one of the passed items does not exist');
  for (const item of items) {
    if (item.user_id !== userId || item.state !== 'owned') return unusable('one of the passed items is not in your inventory');
    if (item.ts_can_trade === -1 || item.ts_can_trade > now) return unusable('one of the passed items is trade-locked');
    if (item.equipped) return unusable('one of the passed items is equipped');
  }
  return undefined;
}

/**
 * Picks the result's prototype from the consumed items: 624 when they are of one type and
 * class that crafting never takes (no prototype of that type in the next class: the top
 * class, say), whether or not their prototypes are marked craftable; else 603 when one is not
 * craftable; 605 when types or classes differ.
 */
function chooseResult(catalog: Catalog, items: ConsumedInput[]): ProtoEntry {
  const { type, quality_id } = elementAt(items, 0);
  const oneKind = items.every((item) => item.type === type && item.quality_id === quality_id);
  const candidates = catalog.craftResults.get(craftKey(type, quality_id + 1)) ?? [];
  if (oneKind && candidates.length === 0) throw new ApiError(Code.ITEM_NOT_APPLICABLE, 'items of this type and class cannot be crafted');
  if (items.some((item) => !catalog.protos.get(item.item_proto_id)?.canCraft)) throw unusable('one of the passed items cannot be crafted');
  if (!oneKind) throw new ApiError(Code.CRAFT_MIXED, 'items must be of the same type and class');
  return catalog.protos.get(elementAt(candidates, randomInt(candidates.length)))!;
}

/** The consume step changed fewer rows than the craft has items: the transaction rolls back. */
class ItemsUnusable extends Error {}

/**
 * Consumes ten items and creates one of the next class, in one transaction. The consume step
 * is a conditional update (owned by the caller, tradable, not equipped) that must change
 * exactly ten rows, so of two crafts racing for the same items one wins and the other
 * answers 603; what it returns decides the result. Every open trade holding a consumed item
 * becomes invalid in the same transaction. A refused craft reads the items again, after
 * rolling back, only to say which rule refused them.
 */
export async function craftItems(services: Services, userId: number, itemIds: number[]): Promise<{ row: OwnedRow; proto: ProtoEntry }> {
  const catalog = await getCatalog(services);
  const now = nowSeconds(services);
  const ids = [...itemIds].sort((a, b) => a - b);
  const dialect = services.db.dialect;
  let crafted;
  try {
    crafted = await services.db.kysely.transaction().execute(async (trx) => {
      const { craftId, consumed } = await recordCraftConsuming(trx, dialect, userId, ids, now);
      if (craftId === undefined || consumed.length !== CRAFT_INPUTS) throw new ItemsUnusable();
      const result = chooseResult(catalog, consumed);
      const made = { protoId: result.id, type: result.type, qualityId: result.qualityId };
      const holdingQuery = services.hooks.inventory.tradesHolding(services, trx, dialect, ids, now);
      const { row, holding } = await createCraftResult(trx, dialect, { userId, craftId }, made, now, holdingQuery);
      await services.hooks.inventory.closeTrades(trx, holding, now);
      return { row, proto: result, invalidated: holding };
    });
  } catch (error) {
    if (!(error instanceof ItemsUnusable)) throw error;
    const reason = refusal(userId, now, ids, await readCraftInputs(services.db.kysely, ids));
    // Another craft took some of the items first, and they are back as they were.
    throw reason ?? unusable('one of the passed items is no longer in your inventory');
  }
  services.metrics.count('craft', 'made');
  await announceInventoriesChanged(services, [userId]);
  await services.hooks.inventory.announceEndedTrades(services, crafted.invalidated);
  return crafted;
}

export const inventoryCraft = defineMethod({
  name: 'inventory.craft',
  summary: 'Craft one item of the next class from ten items',
  description:
    'Ten distinct owned items of one type and one class become one new item of the same type and the next class, its prototype drawn at random among the craft results of that type and class. ' +
    'All or nothing: the ten items are consumed and the new one received in one step, and the craft is recorded.',
  auth: 'required',
  bots: true,
  params: P.object({ item_ids: P.uintSet({ description: `exactly ${CRAFT_INPUTS} distinct ids of owned items` }) }),
  result: CraftResult,
  errors: {
    603: 'an item is unknown, not yours, not craftable, trade-locked or equipped',
    605: 'items must be of the same type and class',
    624: 'items of this type and class can never be crafted (top class, or no prototype in the next class)',
  },
  handler: async ({ services, caller }, params) => {
    const ids = params.item_ids;
    if (ids.length !== CRAFT_INPUTS || new Set(ids).size !== CRAFT_INPUTS)
      throw badParam('item_ids', `must be exactly ${CRAFT_INPUTS} distinct item ids`);
    const { row, proto } = await craftItems(services, caller.userId, ids);
    return new SerializedData(`{"item":${ownedItemJson(proto, row, false)}}`);
  },
});
