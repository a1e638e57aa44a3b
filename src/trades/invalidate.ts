import type { QueryCreator } from 'kysely';
import type { DialectName, Executor } from '../db/connection.js';
import type { Tables } from '../db/tables.js';
import { nowSeconds, type Services } from '../services.js';
import { TradeStatus, expiryCutoff } from './status.js';

export interface InvalidatedTrade {
  trade_id: number;
  user_id_from: number;
  user_id_to: number;
}

/** Ids per statement: keeps each well under PostgreSQL's parameter limit. */
const CHUNK = 1000;

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
  for (let i = 0; i < itemIds.length; i += CHUNK)
    for (const row of await openTradesHolding(trx, dialect, itemIds.slice(i, i + CHUNK), cutoff, options.except).execute())
      found.set(row.trade_id, row);
  const trades = [...found.values()].sort((a, b) => a.trade_id - b.trade_id);
  await closeInvalidated(trx, trades, now);
  return trades;
}

/**
 * The open trades made after `cutoff` that hold any of the items (at most CHUNK of them),
 * other than `except`, in id order; on PostgreSQL locked in that order until the
 * transaction ends.
 */
export function openTradesHolding(
  db: QueryCreator<Tables>,
  dialect: DialectName,
  itemIds: readonly number[],
  cutoff: number,
  except?: number,
) {
  let query = db
    .selectFrom('trades')
    .select(['trade_id', 'user_id_from', 'user_id_to'])
    .where('status', '=', TradeStatus.OPEN)
    .where('create_time', '>', cutoff)
    .where('trade_id', 'in', (eb) =>
      eb
        .selectFrom('trade_items')
        .select('trade_id')
        .where('item_id', 'in', [...itemIds]),
    )
    .orderBy('trade_id');
  if (except !== undefined) query = query.where('trade_id', '<>', except);
  if (dialect === 'postgres') query = query.forUpdate();
  return query;
}

/** Open trades found by openTradesHolding (and locked, on PostgreSQL) become invalid. */
export async function closeInvalidated(trx: Executor, trades: readonly InvalidatedTrade[], now: number): Promise<void> {
  const ids = trades.map((t) => t.trade_id);
  for (let i = 0; i < ids.length; i += CHUNK)
    await trx
      .updateTable('trades')
      .set({ status: TradeStatus.INVALID, reaction_time: now })
      .where('trade_id', 'in', ids.slice(i, i + CHUNK))
      .where('status', '=', TradeStatus.OPEN)
      .execute();
}
