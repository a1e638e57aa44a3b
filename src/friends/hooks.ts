import type { InTransaction } from '../db/connection.js';
import type { Services } from '../services.js';

/**
 * How the domains above the social graph react to its changes, as hooks the composition root
 * registers (src/hooks.ts: the trades answer them).
 */
export interface FriendsHooks {
  /**
   * Runs `change` (a block) with a transaction that also ends the open trades between the two
   * parties, and tells them once it has committed.
   */
  endingTradesBetween<T>(
    services: Services,
    inTransaction: InTransaction,
    parties: { userId: number; partnerId: number },
    change: (inTransaction: InTransaction) => Promise<T>,
  ): Promise<T>;
}
