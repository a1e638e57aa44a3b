import { sql } from 'kysely';
import type { Catalog } from '../catalog/cache.js';
import type { Executor } from '../db/connection.js';
import { nowSeconds, type Services } from '../services.js';
import { invalidateTradesHolding, type InvalidatedTrade } from './invalidate.js';
import { readItems, untradable, type CheckedItem } from './items.js';
import { Side, TradeStatus, expiryCutoff } from './status.js';

export interface TradeParties {
  trade_id: number;
  user_id_from: number;
  user_id_to: number;
}

export type Settlement =
  /** Every item moved. */
  | { kind: 'accepted'; invalidated: InvalidatedTrade[] }
  /** An item was no longer available: the trade is now invalid (4), nothing moved. */
  | { kind: 'invalid' }
  /** The trade was no longer open (another transition, or expiry, came first). */
  | { kind: 'closed' };

/** An item's `data` after it changed hands: the giver joins its earlier owners; a gift says so, anything else clears it. */
function dataAfterMove(data: string | null, giverId: number, receiverId: number, gift: boolean, now: number): string {
  let parsed: Record<string, unknown> = {};
  if (data !== null) {
    try {
      const value: unknown = JSON.parse(data);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) parsed = value as Record<string, unknown>;
    } catch {
      // Unreadable per-item data is replaced by the provenance alone.
    }
  }
  const earlier = Array.isArray(parsed.previous_owners_user_ids) ? parsed.previous_owners_user_ids : [];
  const next: Record<string, unknown> = { ...parsed, previous_owners_user_ids: [...earlier, giverId] };
  if (gift) next.gift = { from_user_id: giverId, to_user_id: receiverId, ts: now };
  else delete next.gift;
  return JSON.stringify(next);
}

/**
 * PostgreSQL: the two parties' rows of inventory_counts, created when missing and locked in
 * user order. The triggers that keep the counts change both rows with every item that moves,
 * in no particular order; two trades between the same users the other way round would
 * otherwise lock them crosswise. Crafts and revocations change one user's row after locking
 * their items, as this does, and before they touch trades.
 */
async function lockInventoryCounts(trx: Executor, userIds: number[]): Promise<void> {
  const ids = [...new Set(userIds)].sort((a, b) => a - b);
  await trx
    .insertInto('inventory_counts')
    .values(ids.map((user_id) => ({ user_id, owned: 0, stock: 0 })))
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute();
  await sql`select user_id from inventory_counts where user_id in (${sql.join(ids)}) order by user_id for update`.execute(trx);
}

/**
 * Accepts an open trade inside the caller's transaction: all of its items move, or none.
 *
 * Order of locks (PostgreSQL): the trade's items in id order, then both parties' inventory
 * counts, then the trades it touches (its own and every open one holding its items) in id
 * order; crafts and revocations take items, then counts, then trades too, so all of them
 * wait for each other instead of deadlocking. The trade then
 * leaves `open` by a conditional update: of several concurrent transitions exactly one
 * changes the row. Every item is checked again under those locks: one that is no longer its
 * side's, tradable and free makes the trade invalid instead. Each move is conditional on
 * the item still being owned by the giver, and recorded in the ledger; every other open
 * trade holding a moved item becomes invalid in the same transaction.
 */
export async function settleTrade(services: Services, trx: Executor, catalog: Catalog, trade: TradeParties): Promise<Settlement> {
  const now = nowSeconds(services);
  const postgres = services.db.dialect === 'postgres';
  const entries = await trx
    .selectFrom('trade_items')
    .select(['item_id', 'side'])
    .where('trade_id', '=', trade.trade_id)
    .orderBy('item_id')
    .execute();
  const ids = entries.map((e) => e.item_id);
  const items = await readItems(trx, ids, { lock: 'update', postgres });
  if (postgres) {
    await lockInventoryCounts(trx, [trade.user_id_from, trade.user_id_to]);
    await sql`select trade_id from trades where trade_id = ${trade.trade_id} or (status = 0 and trade_id in (select trade_id from trade_items where item_id in (${sql.join(ids)}))) order by trade_id for update`.execute(
      trx,
    );
  }

  const opened = await trx
    .updateTable('trades')
    .set({ status: TradeStatus.ACCEPTED, reaction_time: now })
    .where('trade_id', '=', trade.trade_id)
    .where('status', '=', TradeStatus.OPEN)
    .where('create_time', '>', expiryCutoff(services, now))
    .executeTakeFirst();
  if (opened.numUpdatedRows !== 1n) return { kind: 'closed' };

  const byId = new Map<number, CheckedItem>(items.map((item) => [item.item_id, item]));
  const giverOf = (side: number) => (side === Side.FROM ? trade.user_id_from : trade.user_id_to);
  if (entries.some((e) => untradable(catalog, byId.get(e.item_id), giverOf(e.side), now) !== undefined)) {
    await trx.updateTable('trades').set({ status: TradeStatus.INVALID }).where('trade_id', '=', trade.trade_id).execute();
    return { kind: 'invalid' };
  }

  const gift = entries.every((e) => e.side === Side.FROM);
  const hold = services.config.trades.hold;
  for (const entry of entries) {
    const item = byId.get(entry.item_id)!;
    const giver = giverOf(entry.side);
    const receiver = entry.side === Side.FROM ? trade.user_id_to : trade.user_id_from;
    const moved = await trx
      .updateTable('items')
      .set({
        user_id: receiver,
        ts_owned: now,
        ts_can_trade: hold > 0 ? now + hold : item.ts_can_trade,
        data: dataAfterMove(item.data, giver, receiver, gift, now),
      })
      .where('item_id', '=', entry.item_id)
      .where('user_id', '=', giver)
      .where('state', '=', 'owned')
      .executeTakeFirst();
    // Only a writer that skipped the locks (another process on one SQLite file) gets here.
    if (moved.numUpdatedRows !== 1n) throw new Error(`item ${entry.item_id} changed during trade ${trade.trade_id}`);
  }
  await trx
    .insertInto('trade_moves')
    .values(
      entries.map((e) => ({
        trade_id: trade.trade_id,
        item_id: e.item_id,
        from_user_id: giverOf(e.side),
        to_user_id: e.side === Side.FROM ? trade.user_id_to : trade.user_id_from,
        ts: now,
      })),
    )
    .execute();
  const invalidated = await invalidateTradesHolding(services, trx, ids, { except: trade.trade_id });
  return { kind: 'accepted', invalidated };
}
