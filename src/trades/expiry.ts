import { nowSeconds, type Services } from '../services.js';
import { announceClosed } from './announce.js';
import { expiredOpenTrades, markExpired } from './queries.js';
import { TradeStatus, expiryCutoff } from './status.js';

/** Trades written as expired per statement. */
const SWEEP_BATCH = 1000;
/** Seconds between sweeps. */
export const SWEEP_INTERVAL = 60;

/**
 * Writes status 5 into open trades past their time, their reaction time being the moment
 * they expired. Answers already show such trades as expired (see expiryCutoff); the sweep
 * keeps the rows and the lists' indexes free of them, and tells each receiver. Returns how many it wrote.
 */
export async function sweepExpiredTrades(services: Services): Promise<number> {
  const cutoff = expiryCutoff(services, nowSeconds(services));
  const ttl = services.config.trades.ttl;
  let total = 0;
  for (;;) {
    const batch = await services.db.kysely.transaction().execute(async (trx) => {
      // Trades being settled right now are left to the next sweep (they may not expire under it).
      const ids = (await expiredOpenTrades(trx, services.db.dialect, cutoff, SWEEP_BATCH).execute()).map((row) => row.trade_id);
      if (ids.length === 0) return { seen: 0, expired: [] };
      const expired = await markExpired(trx, ids, ttl);
      return { seen: ids.length, expired };
    });
    await announceClosed(services, batch.expired, TradeStatus.EXPIRED);
    total += batch.expired.length;
    if (batch.seen < SWEEP_BATCH) return total;
  }
}

/** The running sweep of one server process. */
export interface ExpirySweep {
  /** Stops sweeping, once a sweep under way has finished. */
  stop(): Promise<void>;
}

/** Sweeps now and then every SWEEP_INTERVAL seconds. */
export function startExpirySweep(services: Services): ExpirySweep {
  let running: Promise<unknown> = Promise.resolve();
  const sweep = () => {
    running = sweepExpiredTrades(services).catch((err) => services.log.warn({ err }, 'trade expiry sweep failed'));
  };
  const timer = setInterval(sweep, SWEEP_INTERVAL * 1000);
  timer.unref();
  sweep();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
