import type { ExpressionBuilder } from 'kysely';
import { ApiError, Code } from '../api/errors.js';
import type { Catalog } from '../catalog/cache.js';
import type { OwnedRow } from '../catalog/serialize.js';
import type { Executor } from '../db/connection.js';
import type { Tables } from '../db/tables.js';
import { OWNED } from '../inventory/queries.js';

/** An item as a trade checks it: who owns it, whether it is still owned, tradable and free. */
export interface CheckedItem extends OwnedRow {
  state: string;
  equipped: unknown;
}

/** Whether an item sits on a board or the profile. */
const isEquipped = (eb: ExpressionBuilder<Tables, 'items'>) =>
  eb.exists(eb.selectFrom('equipped').select('equipped.item_id').whereRef('equipped.item_id', '=', 'items.item_id'));

/**
 * The items by id, in ascending id. With `lock`, on PostgreSQL their rows stay locked until
 * the transaction ends, taken in id order (writers of overlapping items wait, never
 * deadlock): `update` for a writer that moves them, `share` for one that only needs them to
 * stay where they are until it commits.
 */
export async function readItems(
  executor: Executor,
  ids: readonly number[],
  options: { lock: 'update' | 'share' | false; postgres: boolean },
): Promise<CheckedItem[]> {
  if (ids.length === 0) return [];
  let query = executor
    .selectFrom('items')
    .select(['item_id', 'user_id', 'item_proto_id', 'ts_owned', 'ts_can_trade', 'data', 'state'])
    .select((eb) => isEquipped(eb).as('equipped'))
    .where('item_id', 'in', [...ids])
    .orderBy('item_id');
  if (options.lock === 'update' && options.postgres) query = query.forUpdate();
  if (options.lock === 'share' && options.postgres) query = query.forShare();
  return query.execute();
}

/** Why an item cannot change hands from `ownerId` at `now`, or undefined when it can. */
export function untradable(catalog: Catalog, item: CheckedItem | undefined, ownerId: number, now: number): string | undefined {
  if (!item) return 'does not exist';
  if (item.user_id !== ownerId || item.state !== 'owned') return 'is not in the inventory of its side';
  const proto = catalog.protos.get(item.item_proto_id);
  if (!proto || proto.item.item_proto_status === 1 || item.ts_can_trade === -1) return 'can never be traded';
  if (item.ts_can_trade > now) return 'cannot be traded yet';
  if (item.equipped) return 'is equipped';
  return undefined;
}

/** 603 naming the first item of a side that cannot change hands. */
export function checkSide(
  catalog: Catalog,
  byId: Map<number, CheckedItem>,
  ids: readonly number[],
  ownerId: number,
  now: number,
  name: string,
): void {
  for (const id of ids) {
    const reason = untradable(catalog, byId.get(id), ownerId, now);
    if (reason !== undefined) throw new ApiError(Code.CRAFT_ITEM_UNUSABLE, `parameter ${name}: item ${id} ${reason}`);
  }
}

/**
 * A user's items that may change hands now, newest first: owned, not equipped, not
 * trade-locked (the prototype's status is checked by the caller against the catalogue).
 */
export async function tradableItemsOf(executor: Executor, userId: number, now: number): Promise<OwnedRow[]> {
  return executor
    .selectFrom('items')
    .select(['item_id', 'user_id', 'item_proto_id', 'ts_owned', 'ts_can_trade', 'data'])
    .where('user_id', '=', userId)
    .where('state', '=', OWNED)
    .where('ts_can_trade', '<>', -1)
    .where('ts_can_trade', '<=', now)
    .where((eb) => eb.not(isEquipped(eb)))
    .orderBy('ts_owned', 'desc')
    .orderBy('item_id', 'desc')
    .execute();
}
