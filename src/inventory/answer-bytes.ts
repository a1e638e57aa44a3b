import type { CallContext } from '../api/method.js';
import { ANSWER_BYTES_PER_REQUEST } from '../api/address-limits.js';
import { requireUser } from '../users/index.js';
import { checkInventoryPrivacy } from './privacy.js';
import { ownedCounts } from './answer-cache.js';

/** Bytes an item takes in an inventory.get answer, about (a little less than a plain one takes). */
const ITEM_BYTES = { legacy: 500, plain: 260 } as const;

interface InventoryAsked {
  user_id?: number | string;
  include_stock: number;
  count?: number;
  add_legacy: number;
}

/**
 * inventory.get's answer size, from the inventory's count (one row of inventory_counts, or the
 * answer cache's copy of it) rather than its items: what the request limits charge before the
 * list is read. An inventory the caller may not read is estimated at nothing, so that a refusal
 * for its size never tells it.
 */
export async function inventoryAnswerBytes({ services, caller }: CallContext, params: InventoryAsked): Promise<number> {
  const perItem = params.add_legacy === 1 ? ITEM_BYTES.legacy : ITEM_BYTES.plain;
  if (params.count !== undefined && params.count * perItem < ANSWER_BYTES_PER_REQUEST) return params.count * perItem;
  const viewerId = caller?.userId;
  const ownerId =
    params.user_id === undefined || typeof params.user_id === 'number'
      ? (params.user_id ?? viewerId)
      : await requireUser(services, params.user_id);
  if (ownerId === undefined) return 0;
  const counts = await ownedCounts(services, ownerId);
  const own = ownerId === viewerId;
  const listed = Math.min(params.count ?? Infinity, own && params.include_stock === 1 ? counts.owned : counts.owned - counts.stock);
  const bytes = listed * perItem;
  if (bytes < ANSWER_BYTES_PER_REQUEST || own) return bytes;
  try {
    await checkInventoryPrivacy(services, ownerId, viewerId);
  } catch {
    return 0;
  }
  return bytes;
}
