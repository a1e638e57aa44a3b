import type { Executor } from '../db/connection.js';
import type { Services } from '../services.js';

/**
 * What the promo codes ask of the wallet above them, as hooks the composition root registers
 * (src/hooks.ts: the market answers them). A code's money is paid in the transaction that
 * counts its use, so a redemption pays once or not at all.
 */
export interface PromocodesHooks {
  /** In the caller's transaction: credits the user `kopecks` through the ledger (kind `promocode`); answers the new balance. */
  payMoney(trx: Executor, userId: number, kopecks: number, code: string, now: number): Promise<number>;
  /** After the commit: tells the user's connections their new balance (kopecks). */
  announceBalance(services: Services, userId: number, kopecks: number): Promise<void>;
}
