import { ApiError, Code } from '../api/errors.js';
import type { Catalog } from '../catalog/cache.js';
import type { CheckedItem } from './queries.js';

/** Whether items of this prototype may change hands at all. */
export function protoTradable(catalog: Catalog, protoId: number): boolean {
  const proto = catalog.protos.get(protoId);
  return proto !== undefined && proto.item.item_proto_status !== 1;
}

/** Why an item cannot change hands from `ownerId` at `now`, or undefined when it can. */
export function untradable(catalog: Catalog, item: CheckedItem | undefined, ownerId: number, now: number): string | undefined {
  if (!item) return 'does not exist';
  if (item.user_id !== ownerId || item.state !== 'owned') return 'is not in the inventory of its side';
  if (!protoTradable(catalog, item.item_proto_id) || item.ts_can_trade === -1) return 'can never be traded';
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
