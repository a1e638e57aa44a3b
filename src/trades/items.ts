import { ApiError, Code } from '../api/errors.js';
import type { Catalog } from '../catalog/index.js';
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

/** The items of a new trade as read, and what they are checked against. */
export interface SideCheck {
  catalog: Catalog;
  byId: Map<number, CheckedItem>;
  now: number;
}

/** One side of a new trade: its items, whose they must be, and the parameter that named them. */
export interface TradeSide {
  ids: readonly number[];
  ownerId: number;
  name: string;
}

/** 603 naming the first of the sender's own items that cannot change hands, and why. */
export function checkOwnSide({ catalog, byId, now }: SideCheck, { ids, ownerId, name }: TradeSide): void {
  for (const id of ids) {
    const reason = untradable(catalog, byId.get(id), ownerId, now);
    if (reason !== undefined) throw new ApiError(Code.CRAFT_ITEM_UNUSABLE, `parameter ${name}: item ${id} ${reason}`);
  }
}

/**
 * 603 for the partner's items asked for when any of them cannot change hands, without saying
 * which or why: an answer about one item (whose it is, whether it sits on a board) would tell
 * the sender more than inventory.get shows them, and stock-class items, which no one but their
 * owner sees, count as unavailable.
 */
export function checkPartnerSide({ catalog, byId, now }: SideCheck, { ids, ownerId, name }: TradeSide): void {
  const available = (id: number) => {
    const item = byId.get(id);
    return untradable(catalog, item, ownerId, now) === undefined && item!.quality_id > 0;
  };
  if (!ids.every(available))
    throw new ApiError(
      Code.CRAFT_ITEM_UNUSABLE,
      `parameter ${name}: not every item asked for is in the partner's inventory and tradable now`,
    );
}
