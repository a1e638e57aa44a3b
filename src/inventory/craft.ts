import { randomInt } from 'node:crypto';
import { sql, type ExpressionBuilder, type QueryCreator, type RawBuilder } from 'kysely';
import { SerializedData, defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { ApiError, Code, badParam } from '../api/errors.js';
import type { Tables } from '../db/tables.js';
import { nowSeconds, type Services } from '../services.js';
import { craftKey, getCatalog, type Catalog, type ProtoEntry } from '../catalog/cache.js';
import { ownedItemJson, type OwnedRow } from '../catalog/serialize.js';
import { CraftResult } from './schemas.js';
import { announceInventoriesChanged } from './answer-cache.js';
import { OWNED } from './queries.js';
import { elementAt } from '../infra/elements.js';
import { invalidateTradesHolding } from '../trades/invalidate.js';
import { announceInvalidated } from '../trades/announce.js';

export const CRAFT_INPUTS = 10;

const unusable = (description = 'one of the passed items cannot be used in crafting') =>
  new ApiError(Code.CRAFT_ITEM_UNUSABLE, description);

/** Whether an item sits on a board or the profile. */
const isEquipped = (eb: ExpressionBuilder<Tables, 'items'>) =>
  eb.exists(eb.selectFrom('equipped').select('equipped.item_id').whereRef('equipped.item_id', '=', 'items.item_id'));

/**
 * Checks the ten items and picks the result's prototype: 603 when an item is unknown, not
 * the caller's, no longer owned, not craftable, trade-locked or equipped; 605 when types
 * or classes differ; 624 when no prototype of that type exists in the next class.
 */
function chooseResult(
  catalog: Catalog,
  userId: number,
  now: number,
  items: {
    user_id: number;
    item_proto_id: number;
    type: number;
    quality_id: number;
    ts_can_trade: number;
    state: string;
    equipped: unknown;
  }[],
): ProtoEntry {
  if (items.length !== CRAFT_INPUTS) throw unusable('one of the passed items does not exist');
  for (const item of items) {
    if (item.user_id !== userId || item.state !== 'owned') throw unusable('one of the passed items is not in your inventory');
    if (!catalog.protos.get(item.item_proto_id)?.canCraft) throw unusable('one of the passed items cannot be crafted');
    if (item.ts_can_trade === -1 || item.ts_can_trade > now) throw unusable('one of the passed items is trade-locked');
    if (item.equipped) throw unusable('one of the passed items is equipped');
  }
  const { type, quality_id } = elementAt(items, 0);
  if (items.some((item) => item.type !== type || item.quality_id !== quality_id))
    throw new ApiError(Code.CRAFT_MIXED, 'items must be of the same type and class');
  const candidates = catalog.craftResults.get(craftKey(type, quality_id + 1)) ?? [];
  if (candidates.length === 0) throw new ApiError(Code.ITEM_NOT_APPLICABLE, 'items of this type and class cannot be crafted');
  return catalog.protos.get(elementAt(candidates, randomInt(candidates.length)))!;
}

/**
 * Consumes ten items and creates one of the next class, in one transaction. The consume step
 * is a conditional update that must change exactly ten rows, so of two crafts racing for
 * the same items one wins and the other answers 603; on PostgreSQL the items are also
 * locked in id order first, so overlapping crafts wait for each other instead of deadlocking.
 * Every open trade holding a consumed item becomes invalid in the same transaction.
 */
export async function craftItems(services: Services, userId: number, itemIds: number[]): Promise<{ row: OwnedRow; proto: ProtoEntry }> {
  const catalog = await getCatalog(services);
  const now = nowSeconds(services);
  const ids = [...itemIds].sort((a, b) => a - b);
  const postgres = services.db.dialect === 'postgres';
  // SQLite would pick an index of owned items (by user) over the primary key and walk the
  // whole inventory; a unary plus keeps those columns out of its index choice.
  const notIndexed = (column: 'user_id' | 'state') => (postgres ? sql.ref(column) : sql`+${sql.ref(column)}`);
  const crafted = await services.db.kysely.transaction().execute(async (trx) => {
    let select = trx
      .selectFrom('items')
      .select(['item_id', 'user_id', 'item_proto_id', 'type', 'quality_id', 'ts_can_trade', 'state'])
      .select((eb) => isEquipped(eb).as('equipped'))
      .where('item_id', 'in', ids)
      .orderBy('item_id');
    if (postgres) select = select.forUpdate();
    const items = await select.execute();
    const result = chooseResult(catalog, userId, now, items);

    const record = trx
      .insertInto('crafts')
      .values({ user_id: userId, ts: now, result_item_id: null, consumed_item_ids: JSON.stringify(ids) })
      .returning('craft_id');
    const consume = (db: QueryCreator<Tables>, craftId: number | RawBuilder<number>) =>
      db
        .updateTable('items')
        .set({ state: 'consumed', ended_at: now, craft_id: craftId })
        .where('item_id', 'in', ids)
        .where(notIndexed('user_id'), '=', userId)
        .where(notIndexed('state'), '=', OWNED)
        .where('ts_can_trade', '<>', -1)
        .where('ts_can_trade', '<=', now)
        .where((eb) => eb.not(isEquipped(eb)));
    let craftId: number;
    let consumedCount: number;
    if (postgres) {
      // One round trip records the craft and consumes the items (data-modifying CTEs; the
      // statements name the CTE only in raw SQL, hence the plain query creator).
      const done = await trx
        .with('craft', () => record)
        .with('consumed', (db) =>
          consume(db as unknown as QueryCreator<Tables>, sql<number>`(select craft_id from craft)`).returning('item_id'),
        )
        .selectNoFrom((eb) => [
          eb.selectFrom('craft').select('craft_id').as('craft_id'),
          eb.selectFrom('consumed').select(eb.fn.countAll<string>().as('n')).as('consumed'),
        ])
        .executeTakeFirstOrThrow();
      craftId = Number(done.craft_id);
      consumedCount = Number(done.consumed);
    } else {
      craftId = (await record.executeTakeFirstOrThrow()).craft_id;
      consumedCount = Number((await consume(trx, craftId).executeTakeFirst()).numUpdatedRows);
    }
    // Another craft took some of the items first: roll everything back.
    if (consumedCount !== CRAFT_INPUTS) throw unusable('one of the passed items is no longer in your inventory');
    const invalidated = await invalidateTradesHolding(services, trx, ids);

    const create = trx
      .insertInto('items')
      .values({
        user_id: userId,
        item_proto_id: result.id,
        type: result.type,
        quality_id: result.qualityId,
        ts_owned: now,
        ts_can_trade: 0,
        state: 'owned',
        created_by_craft_id: craftId,
      })
      .returning(['item_id', 'user_id', 'item_proto_id', 'ts_owned', 'ts_can_trade', 'data']);
    const link = (db: QueryCreator<Tables>, itemId: number | RawBuilder<number>) =>
      db.updateTable('crafts').set({ result_item_id: itemId }).where('craft_id', '=', craftId);
    if (postgres) {
      // One round trip creates the result and links it to the craft.
      const row = await trx
        .with('created', () => create)
        .with('linked', (db) =>
          link(db as unknown as QueryCreator<Tables>, sql<number>`(select item_id from created)`).returning('craft_id'),
        )
        .selectFrom('created')
        .selectAll()
        .executeTakeFirstOrThrow();
      return { row, proto: result, invalidated };
    }
    const row = await create.executeTakeFirstOrThrow();
    await link(trx, row.item_id).execute();
    return { row, proto: result, invalidated };
  });
  services.metrics.count('craft', 'made');
  await announceInventoriesChanged(services, [userId]);
  await announceInvalidated(services, crafted.invalidated);
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
