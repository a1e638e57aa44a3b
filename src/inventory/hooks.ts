import type { SelectQueryBuilder } from 'kysely';
import type { DialectName, Executor } from '../db/connection.js';
import type { Tables } from '../db/tables.js';
import type { Services } from '../services.js';

/** An open trade that ended because an item it held left its owner. */
export interface InvalidatedTrade {
  trade_id: number;
  user_id_from: number;
  user_id_to: number;
}

/**
 * How the domains above the inventory react to its changes, as hooks the composition root
 * registers (src/hooks.ts: the trades answer them). The inventory calls them inside the
 * transaction that takes items from their owner, so that no trade outlives the items it holds,
 * and announces what they answer once that transaction has committed.
 */
export interface InventoryHooks {
  /** In the caller's transaction: the open trades holding any of the items end; answers them. */
  endTradesHolding(services: Services, trx: Executor, itemIds: readonly number[]): Promise<InvalidatedTrade[]>;
  /**
   * For a craft, which finds them within its own statement: the query of the open trades
   * holding any of the items (locked, on PostgreSQL, until the transaction ends).
   */
  tradesHolding(
    services: Services,
    trx: Executor,
    dialect: DialectName,
    itemIds: readonly number[],
    now: number,
  ): SelectQueryBuilder<Tables, 'trades', InvalidatedTrade>;
  /** In the caller's transaction: the trades that query found end. */
  closeTrades(trx: Executor, trades: readonly InvalidatedTrade[], now: number): Promise<void>;
  /** After the commit: tells the parties of the ended trades. */
  announceEndedTrades(services: Services, trades: readonly InvalidatedTrade[]): Promise<void>;
  /** In the caller's transaction: 701 when the receiver's settings refuse items from a friend (a gift set opened for them). */
  requireGiftAdmitted(trx: Executor, receiverId: number): Promise<void>;
}
