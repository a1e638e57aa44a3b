import type { Domain } from '../api/method.js';
import type { Runtime, Services } from '../services.js';
import { marketMethods, shopMethods, walletMethods } from './methods.js';
import { marketAdminMethods } from './admin-methods.js';
import { readBalance } from './queries.js';
import { toUnits } from './money.js';
import { sweepExpiredListings } from './trading.js';

export const marketDomain: Domain = {
  name: 'market',
  methods: [...walletMethods, ...marketMethods, ...shopMethods, ...marketAdminMethods],
};

/** Seconds between sweeps of expired listings. */
export const MARKET_SWEEP_INTERVAL = 60;

/** Returns expired listings' items now and then, and shows the balance in realtime `auth` frames; started once every capability's runtime exists. */
export interface MarketRuntime extends Runtime {
  start(services: Services): void;
}

export function createMarket(): MarketRuntime {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  return {
    start(services) {
      services.realtime.addAuthCounter('balance', async (userId) => toUnits(await readBalance(services.db.kysely, userId)));
      const sweep = () => {
        running = sweepExpiredListings(services).catch((err: unknown) => services.log.warn({ err }, 'market expiry sweep failed'));
      };
      timer = setInterval(sweep, MARKET_SWEEP_INTERVAL * 1000);
      timer.unref();
      sweep();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}

// What the other folders use of this one.
export { announceBalances, checkLedger, LEDGER_KINDS, payMissionMoney, payPromocodeMoney, type LedgerKind } from './ledger.js';
export { checkListings, checkMarket } from './checks.js';
export { PlatformAccount } from './queries.js';
export { unitsToKopecks } from './money.js';
