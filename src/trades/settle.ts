import type { Catalog } from '../catalog/cache.js';
import type { Executor } from '../db/connection.js';
import { nowSeconds, type Services } from '../services.js';
import { invalidateTradesHolding } from './invalidate.js';
import type { InvalidatedTrade } from './queries.js';
import { untradable } from './items.js';
import {
  lockInventoryCounts,
  markAccepted,
  markInvalid,
  moveItems,
  readItems,
  tradeEntries,
  type CheckedItem,
  type TradeEntry,
} from './queries.js';
import { Side, expiryCutoff } from './status.js';

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
 * Accepts an open trade inside the caller's transaction: all of its items move, or none.
 *
 * Order of locks (PostgreSQL): the trade's items in id order, then both parties' inventory
 * counts, then the trades it touches (its own and every open one holding its items) in id
 * order, in the statement that moves it out of `open`; crafts and revocations take items,
 * then counts, then trades too, so all of them wait for each other instead of deadlocking.
 * The trade leaves `open` by a conditional update: of several concurrent transitions exactly
 * one changes the row. Every item is checked again under those locks: one that is no longer its
 * side's, tradable and free makes the trade invalid instead. Each move is conditional on
 * the item still being owned by the giver, and recorded in the ledger; every other open
 * trade holding a moved item becomes invalid in the same transaction. `knownEntries`: the
 * trade's items, when the caller read them with the trade (they never change).
 */
export async function settleTrade(
  services: Services,
  trx: Executor,
  catalog: Catalog,
  trade: TradeParties,
  knownEntries?: TradeEntry[],
): Promise<Settlement> {
  const now = nowSeconds(services);
  const dialect = services.db.dialect;
  const postgres = dialect === 'postgres';
  const entries = knownEntries ?? (await tradeEntries(trx, trade.trade_id));
  const ids = entries.map((e) => e.item_id);
  const cutoff = expiryCutoff(services, now);
  // SQLite runs one transaction at a time: what the items say about other open trades holds
  // until commit. PostgreSQL finds those trades again once they are locked.
  const items = await readItems(trx, ids, {
    lock: 'update',
    postgres,
    ...(postgres ? {} : { heldElsewhere: { except: trade.trade_id, cutoff } }),
  });
  if (postgres) await lockInventoryCounts(trx, [trade.user_id_from, trade.user_id_to]);
  if (!(await markAccepted(trx, dialect, trade.trade_id, ids, now, cutoff))) return { kind: 'closed' };

  const byId = new Map<number, CheckedItem>(items.map((item) => [item.item_id, item]));
  const giverOf = (side: number) => (side === Side.FROM ? trade.user_id_from : trade.user_id_to);
  if (entries.some((e) => untradable(catalog, byId.get(e.item_id), giverOf(e.side), now) !== undefined)) {
    await markInvalid(trx, trade.trade_id);
    return { kind: 'invalid' };
  }

  const gift = entries.every((e) => e.side === Side.FROM);
  const hold = services.config.trades.hold;
  const moves = entries.map((entry) => {
    const item = byId.get(entry.item_id)!;
    const giver = giverOf(entry.side);
    const receiver = entry.side === Side.FROM ? trade.user_id_to : trade.user_id_from;
    return {
      item_id: entry.item_id,
      giver,
      receiver,
      ts_can_trade: hold > 0 ? now + hold : item.ts_can_trade,
      data: dataAfterMove(item.data, giver, receiver, gift, now),
    };
  });
  // Only a writer that skipped the locks (another process on one SQLite file) gets here.
  if ((await moveItems(trx, dialect, trade.trade_id, moves, now)) !== moves.length)
    throw new Error(`an item changed during trade ${trade.trade_id}`);
  const held = postgres || items.some((item) => item.held);
  const invalidated = held ? await invalidateTradesHolding(services, trx, ids, { except: trade.trade_id }) : [];
  return { kind: 'accepted', invalidated };
}
