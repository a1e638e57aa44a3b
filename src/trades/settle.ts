import type { Catalog } from '../catalog/index.js';
import type { Executor } from '../db/connection.js';
import { elementAt } from '../infra/elements.js';
import { nowSeconds, type Services } from '../services.js';
import { invalidateTradesHolding } from './invalidate.js';
import type { TradeParties } from './announce.js';
import { untradable } from './items.js';
import {
  acceptInOneStatement,
  markAccepted,
  markInvalid,
  moveItems,
  readItemsToSettle,
  tradeEntries,
  type CheckedItem,
  type InvalidatedTrade,
  type ItemMove,
  type TradeEntry,
} from './queries.js';
import { Side, expiryCutoff } from './status.js';

export type { TradeParties };

export type Settlement =
  /** Every item moved. */
  | { kind: 'accepted'; invalidated: InvalidatedTrade[] }
  /** An item was no longer available: the trade is now invalid (4), nothing moved. */
  | { kind: 'invalid' }
  /** The trade was no longer open (another transition, or expiry, came first). */
  | { kind: 'closed' };

/** An item's `data` after it changed hands: the giver joins its earlier owners; a gift says so, anything else clears it. */
export function dataAfterMove(data: string | null, giverId: number, receiverId: number, gift: boolean, now: number): string {
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

/** The moves of a trade's items, each carrying its data as offered and as it will be. */
function movesOf(trade: TradeParties, entries: TradeEntry[], now: number): ItemMove[] {
  const gift = entries.every((e) => e.side === Side.FROM);
  return entries.map((entry) => {
    const giver = entry.side === Side.FROM ? trade.user_id_from : trade.user_id_to;
    const receiver = entry.side === Side.FROM ? trade.user_id_to : trade.user_id_from;
    return { item_id: entry.item_id, giver, receiver, expected: entry.data, data: dataAfterMove(entry.data, giver, receiver, gift, now) };
  });
}

/**
 * Accepts an open trade: all of its items move, or none. `executor`: on SQLite the caller's
 * transaction; on PostgreSQL the acceptance is one statement (settleAsCaller), its own
 * transaction unless the caller runs it in theirs.
 *
 * Order of locks (PostgreSQL, see migration 011): the trade's items in id order, then both
 * parties' inventory counts, then the trades it touches (its own and every open one holding its
 * items) in id order, in the statement that moves it out of `open`; crafts and revocations take
 * items, then counts, then trades too, so all of them wait for each other instead of deadlocking.
 * The trade leaves `open` by a conditional update: of several concurrent transitions exactly one
 * changes the row. Every item is checked again under those locks: one that is no longer its
 * side's, tradable, free and as it was offered (its per-item data) makes the trade invalid
 * instead. Each move is conditional on the item still being owned by the giver, and recorded in
 * the ledger; every other open trade holding a moved item becomes invalid in the same
 * transaction. `knownEntries` (SQLite): the trade's items, when the caller read them with the
 * trade (they never change).
 */
export async function settleTrade(
  services: Services,
  executor: Executor,
  catalog: Catalog,
  trade: TradeParties,
  knownEntries?: TradeEntry[],
): Promise<Settlement> {
  if (services.db.dialect === 'postgres') {
    const settled = await settleAsCaller(services, executor, trade.trade_id, trade.user_id_to);
    if (settled.kind === 'none' || settled.kind === 'forbidden') throw new Error(`trade ${trade.trade_id} has changed parties`);
    return settled;
  }
  const now = nowSeconds(services);
  const cutoff = expiryCutoff(services, now);
  const hold = services.config.trades.hold;
  const entries = knownEntries ?? (await tradeEntries(executor, trade.trade_id));
  const moves = movesOf(trade, entries, now);
  // SQLite runs one transaction at a time: what the items say about other open trades holds until commit.
  const ids = entries.map((e) => e.item_id);
  const items = await readItemsToSettle(executor, ids, { except: trade.trade_id, cutoff });
  if (!(await markAccepted(executor, trade.trade_id, now, cutoff))) return { kind: 'closed' };
  const byId = new Map<number, CheckedItem>(items.map((item) => [item.item_id, item]));
  const unavailable = (move: ItemMove) => {
    const item = byId.get(move.item_id);
    return untradable(catalog, item, move.giver, now) !== undefined || item?.data !== move.expected;
  };
  if (moves.some(unavailable)) {
    await markInvalid(executor, trade.trade_id);
    return { kind: 'invalid' };
  }
  // Only a writer that skipped the locks (another process on one SQLite file) gets here.
  if ((await moveItems(executor, trade.trade_id, moves, now, hold)) !== moves.length)
    throw new Error(`an item changed during trade ${trade.trade_id}`);
  const held = items.some((item) => item.held);
  const invalidated = held ? await invalidateTradesHolding(services, executor, ids, { except: trade.trade_id }) : [];
  return { kind: 'accepted', invalidated };
}

/** A settlement found by the trade's id alone: with the trade's parties, or why the caller may not settle it. */
export type CallerSettlement =
  | (Settlement & { trade: TradeParties })
  /** No such trade of the caller's. */
  | { kind: 'none' }
  /** The caller is the trade's sender. */
  | { kind: 'forbidden' };

/**
 * PostgreSQL: `callerId` accepts the trade `tradeId` as settleTrade does, in one statement that
 * also reads the trade and its items (the function trade_accept).
 */
export async function settleAsCaller(services: Services, executor: Executor, tradeId: number, callerId: number): Promise<CallerSettlement> {
  const now = nowSeconds(services);
  const options = { now, cutoff: expiryCutoff(services, now), hold: services.config.trades.hold };
  const rows = await acceptInOneStatement(executor, tradeId, callerId, options);
  const first = elementAt(rows, 0);
  if (first.kind === 'none' || first.kind === 'forbidden') return { kind: first.kind };
  const trade = { trade_id: first.trade_id, user_id_from: first.user_id_from, user_id_to: first.user_id_to };
  if (first.kind === 'closed' || first.kind === 'invalid') return { kind: first.kind, trade };
  const invalidated = rows
    .filter((row) => row.kind === 'invalidated')
    .map(({ trade_id, user_id_from, user_id_to }) => ({ trade_id, user_id_from, user_id_to }));
  return { kind: 'accepted', invalidated: invalidated.sort((a, b) => a.trade_id - b.trade_id), trade };
}
