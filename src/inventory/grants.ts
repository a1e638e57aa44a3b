import type { Insertable } from 'kysely';
import { ApiError, Code, badParam } from '../api/errors.js';
import { ownTransaction, type Executor } from '../db/connection.js';
import type { ItemsTable } from '../db/tables.js';
import { nowSeconds, type Services } from '../services.js';
import { announceInventoriesChanged } from './answer-cache.js';
import { insertItems, readProtoClass, recordRevocation, revokeOwnedItem, unequipItems, userExists } from './queries.js';

export interface Grant {
  userId: number;
  itemProtoId: number;
  copies: number;
  /** Unix time from which the items may be traded and crafted; 0 = at once, -1 = never. */
  tsCanTrade?: number;
}

/** Rows per INSERT: keeps every statement well under PostgreSQL's parameter limit. */
const INSERT_BATCH = 1000;

/**
 * Gives a user new copies of a prototype, received at `now`, in the caller's transaction;
 * returns their ids in insertion order. The caller announces the changed inventory once it
 * has committed (announceInventoriesChanged).
 */
export async function insertGrantedItems(trx: Executor, grant: Grant, now: number): Promise<number[]> {
  const { userId, itemProtoId, copies } = grant;
  const proto = await readProtoClass(trx, itemProtoId);
  if (!(await userExists(trx, userId))) throw new ApiError(Code.USER_NOT_FOUND, 'user does not exist');
  if (!proto) throw new ApiError(Code.BAD_PARAM, `parameter item_proto_id: prototype ${itemProtoId} does not exist`);
  const row: Insertable<ItemsTable> = {
    user_id: userId,
    item_proto_id: itemProtoId,
    type: proto.type,
    quality_id: proto.quality_id,
    ts_owned: now,
    ts_can_trade: grant.tsCanTrade ?? 0,
    state: 'owned',
  };
  const ids: number[] = [];
  for (let done = 0; done < copies; done += INSERT_BATCH) {
    const rows = Array.from({ length: Math.min(INSERT_BATCH, copies - done) }, () => row);
    ids.push(...(await insertItems(trx, rows)));
  }
  return ids.sort((a, b) => a - b);
}

/** Gives a user new copies of a prototype, received now; returns their ids in insertion order. */
export async function grantItems(services: Services, grant: Grant, inTransaction = ownTransaction(services.db)): Promise<number[]> {
  const { userId, copies } = grant;
  if (!Number.isSafeInteger(copies) || copies < 1) throw new ApiError(Code.BAD_PARAM, 'parameter copies: must be at least 1');
  const now = nowSeconds(services);
  const granted = await inTransaction((trx) => insertGrantedItems(trx, grant, now));
  await announceInventoriesChanged(services, [userId]);
  return granted;
}

/**
 * Takes an owned item away: it becomes `revoked` (kept in history with a `revocations` row)
 * and is unequipped; every open trade holding it becomes invalid. Code 2 when the item does
 * not exist or is no longer owned.
 */
export async function revokeItem(
  services: Services,
  itemId: number,
  reason: string | null,
  inTransaction = ownTransaction(services.db),
): Promise<void> {
  const now = nowSeconds(services);
  const revoked = await inTransaction(async (trx) => {
    const ownerId = await revokeOwnedItem(trx, itemId, now);
    if (ownerId === undefined) throw badParam('item_id', `item ${itemId} does not exist or is no longer owned`);
    await recordRevocation(trx, { itemId, userId: ownerId, now, reason });
    await unequipItems(trx, [itemId]);
    const invalidated = await services.hooks.inventory.endTradesHolding(services, trx, [itemId]);
    return { ownerId, invalidated };
  });
  await announceInventoriesChanged(services, [revoked.ownerId]);
  await services.hooks.inventory.announceEndedTrades(services, revoked.invalidated);
}
