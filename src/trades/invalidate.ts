import { followedBy, type DialectName, type Executor, type InTransaction } from '../db/connection.js';
import { announceInvalidated } from './announce.js';
import { nowSeconds, type Services } from '../services.js';
import { IDS_PER_STATEMENT, closeInvalidated, openTradesHolding, openTradesOf, type InvalidatedTrade } from './queries.js';
import { expiryCutoff } from './status.js';

/**
 * Every open trade holding any of these items becomes invalid (status 4), in the caller's
 * transaction. Whoever moves, crafts, consumes, revokes or equips items calls this inside
 * the transaction that does so, so open lists never show a trade that cannot complete.
 * `except`: a trade the caller settles itself (the accepted one).
 *
 * On PostgreSQL the trades are locked in id order before they change: every writer locks
 * its items first and then trades in id order, so writers wait for each other instead of
 * deadlocking.
 */
export async function invalidateTradesHolding(
  services: Pick<Services, 'db' | 'clock' | 'config'>,
  trx: Executor,
  itemIds: readonly number[],
  options: { except?: number } = {},
): Promise<InvalidatedTrade[]> {
  const now = nowSeconds(services);
  return invalidateTradesHoldingAt(trx, services.db.dialect, itemIds, { now, cutoff: expiryCutoff(services, now), except: options.except });
}

/**
 * invalidateTradesHolding for writers that run without the server's services (a world
 * import): `now` is the reaction time, and trades made at or before `cutoff` count as
 * expired and stay as they are.
 */
export async function invalidateTradesHoldingAt(
  trx: Executor,
  dialect: DialectName,
  itemIds: readonly number[],
  options: { now: number; cutoff: number; except?: number },
): Promise<InvalidatedTrade[]> {
  if (itemIds.length === 0) return [];
  const { now, cutoff } = options;
  const found = new Map<number, InvalidatedTrade>();
  for (let i = 0; i < itemIds.length; i += IDS_PER_STATEMENT)
    for (const row of await openTradesHolding(trx, dialect, itemIds.slice(i, i + IDS_PER_STATEMENT), cutoff, options.except).execute())
      found.set(row.trade_id, row);
  const trades = [...found.values()].sort((a, b) => a.trade_id - b.trade_id);
  await closeInvalidated(trx, trades, now);
  return trades;
}

/**
 * Every open trade of `userId` (with `partnerId`, only those between the two) becomes invalid
 * (status 4), in the caller's transaction: a globally blocked account, or two users one of whom
 * has blocked the other, can no longer trade. Answers them, to announce once committed.
 */
export async function invalidateTradesOf(
  services: Pick<Services, 'db' | 'clock' | 'config'>,
  trx: Executor,
  userId: number,
  partnerId?: number,
): Promise<InvalidatedTrade[]> {
  const now = nowSeconds(services);
  const trades = await openTradesOf(trx, services.db.dialect, userId, expiryCutoff(services, now), partnerId).execute();
  await closeInvalidated(trx, trades, now);
  return trades;
}

/**
 * Runs `change` (a block, a ban) with a transaction that also makes the open trades of
 * `parties.userId` invalid (with `parties.partnerId`, only those between the two; see
 * invalidateTradesOf), and announces them once it has committed.
 */
export async function endingOpenTrades<T>(
  services: Services,
  inTransaction: InTransaction,
  parties: { userId: number; partnerId?: number },
  change: (inTransaction: InTransaction) => Promise<T>,
): Promise<T> {
  let invalidated: InvalidatedTrade[] = [];
  const result = await change(
    followedBy(inTransaction, async (trx) => {
      invalidated = await invalidateTradesOf(services, trx, parties.userId, parties.partnerId);
    }),
  );
  await announceInvalidated(services, invalidated);
  return result;
}
