import type { Services } from '../services.js';

/** Values of a trade's `status` (ours: the reference service publishes none). */
export const TradeStatus = {
  OPEN: 0,
  ACCEPTED: 1,
  DECLINED: 2,
  REVOKED: 3,
  /** An item of it was no longer available: moved, crafted, revoked, equipped or consumed. */
  INVALID: 4,
  EXPIRED: 5,
} as const;

/** Which side of a trade an item is on. */
export const Side = { FROM: 0, TO: 1 } as const;

/**
 * Open trades made at or before this time have expired. Until the sweep writes status 5,
 * such a trade still reads 0 in its row: every query of open trades compares create_time
 * with this, and answers show it as expired.
 */
export function expiryCutoff(services: Pick<Services, 'config'>, now: number): number {
  return now - services.config.trades.ttl;
}

/** The status a trade row shows at `now`. */
export function shownStatus(row: { status: number; create_time: number }, cutoff: number): number {
  return row.status === TradeStatus.OPEN && row.create_time <= cutoff ? TradeStatus.EXPIRED : row.status;
}
