import type { DomainEvents } from '../operations/metrics.js';
import type { Services } from '../services.js';
import { TradeStatus } from './status.js';

/** A trade and its two parties. */
export interface TradeParties {
  trade_id: number;
  user_id_from: number;
  user_id_to: number;
}

/** Realtime event types of trades, sent to the receiver's connections on every process. */
export const TradeEvent = {
  /** A trade was offered to the user: `{trade_id, user_id_from, status}` (status 1 for a gift accepted at once). */
  OFFERED: 'trades.new',
  /** A trade offered to the user is no longer open: `{trade_id, status}`. */
  CLOSED: 'trades.closed',
} as const;

type Announced = Pick<Services, 'realtime' | 'metrics' | 'log'>;
type TradeOutcome = DomainEvents['trade'];

const CLOSING_OUTCOMES = {
  [TradeStatus.ACCEPTED]: 'accepted',
  [TradeStatus.DECLINED]: 'declined',
  [TradeStatus.REVOKED]: 'revoked',
  [TradeStatus.INVALID]: 'invalidated',
  [TradeStatus.EXPIRED]: 'expired',
} as const satisfies Record<number, TradeOutcome>;

type ClosingStatus = keyof typeof CLOSING_OUTCOMES;

/**
 * Sends an event to a trade's receiver. Called once the change is committed; the change stands
 * whatever happens to its announcement, so a failure is logged, not answered.
 */
async function tellReceiver(services: Announced, receiverId: number, type: string, fields: Record<string, number>): Promise<void> {
  try {
    await services.realtime.pushToUser(receiverId, { type, fields, json: fields });
  } catch (error) {
    services.log.error({ err: error }, 'could not announce a trade on the realtime feed');
  }
}

/** A trade was created (and, for a gift accepted at once, completed): counted, and its receiver told. */
export async function announceOffered(services: Announced, trade: TradeParties, completed: boolean): Promise<void> {
  services.metrics.count('trade', 'created');
  if (completed) services.metrics.count('trade', 'accepted');
  const status = completed ? TradeStatus.ACCEPTED : TradeStatus.OPEN;
  await tellReceiver(services, trade.user_id_to, TradeEvent.OFFERED, {
    trade_id: trade.trade_id,
    user_id_from: trade.user_id_from,
    status,
  });
}

/**
 * Open trades that ended with `status`: counted (as `outcome`, by default the status's own),
 * and each receiver told.
 */
export async function announceClosed(
  services: Announced,
  trades: readonly TradeParties[],
  status: ClosingStatus,
  outcome: TradeOutcome = CLOSING_OUTCOMES[status],
): Promise<void> {
  if (trades.length === 0) return;
  services.metrics.count('trade', outcome, trades.length);
  // One after another: the events' ids follow the trades' order.
  for (const trade of trades) await tellReceiver(services, trade.user_id_to, TradeEvent.CLOSED, { trade_id: trade.trade_id, status });
}

/** Open trades an item's move, craft, opening or revocation made invalid. */
export const announceInvalidated = (services: Announced, trades: readonly TradeParties[]) =>
  announceClosed(services, trades, TradeStatus.INVALID);
