import type { Domain } from '../api/method.js';
import type { Runtime, Services } from '../services.js';
import { tradeMethods } from './methods.js';
import { startExpirySweep, type ExpirySweep } from './expiry.js';
import { countIncoming } from './lists.js';
import { openTradesHolding } from './queries.js';
import { expiryCutoff } from './status.js';
import type { Executor } from '../db/connection.js';

export const tradesDomain: Domain = {
  name: 'trades',
  methods: tradeMethods,
};

/** Writes expiry into open trades past their time, and counts the open ones offered to a user in realtime `auth` frames; started once every capability's runtime exists. */
export interface TradesRuntime extends Runtime {
  start(services: Services): void;
}

export function createTrades(): TradesRuntime {
  let expiry: ExpirySweep | undefined;
  return {
    start(services) {
      expiry = startExpirySweep(services);
      // Realtime connections show the open trades offered to the user.
      services.realtime.addAuthCounter('trades_new', (userId) => countIncoming(services, userId));
    },
    async stop() {
      await expiry?.stop();
      expiry = undefined;
    },
  };
}

/** Whether an open trade holds any of the items: an item it holds may not go on the market. */
export async function heldByOpenTrade(
  services: Pick<Services, 'config' | 'db'>,
  executor: Executor,
  itemIds: number[],
  now: number,
): Promise<boolean> {
  const found = await openTradesHolding(executor, services.db.dialect, itemIds, expiryCutoff(services, now)).execute();
  return found.length > 0;
}
// What the other folders use of this one.
export { tradeAdminMethods } from './admin-methods.js';
export { announceInvalidated } from './announce.js';
export { endingOpenTrades, invalidateTradesHoldingAt } from './invalidate.js';
export type { InvalidatedTrade } from './queries.js';
