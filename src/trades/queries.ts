import { sql, type Insertable } from 'kysely';
import type { DialectName, Executor } from '../db/connection.js';
import type { TradeItemsTable, TradesTable } from '../db/tables.js';
import { OWNED } from '../inventory/queries.js';
import { TradeStatus } from './status.js';

/** A trade's row, as the parties and transitions read it. */
export interface TradeRecord {
  trade_id: number;
  user_id_from: number;
  user_id_to: number;
  status: number;
  create_time: number;
  reaction_time: number | null;
}

/** An item of a trade and its side. */
export interface TradeEntry {
  item_id: number;
  side: number;
}

/** A trade and its items in ascending item id, in one statement; undefined when there is no such trade. */
export async function tradeWithEntries(
  executor: Executor,
  tradeId: number,
): Promise<{ trade: TradeRecord; entries: TradeEntry[] } | undefined> {
  const rows = await executor
    .selectFrom('trades')
    .leftJoin('trade_items', 'trade_items.trade_id', 'trades.trade_id')
    .select([
      'trades.trade_id',
      'trades.user_id_from',
      'trades.user_id_to',
      'trades.status',
      'trades.create_time',
      'trades.reaction_time',
      'trade_items.item_id',
      'trade_items.side',
    ])
    .where('trades.trade_id', '=', tradeId)
    .orderBy('trade_items.item_id')
    .execute();
  const first = rows[0];
  if (first === undefined) return undefined;
  const { trade_id, user_id_from, user_id_to, status, create_time, reaction_time } = first;
  const entries: TradeEntry[] = [];
  for (const row of rows) if (row.item_id !== null && row.side !== null) entries.push({ item_id: row.item_id, side: row.side });
  return { trade: { trade_id, user_id_from, user_id_to, status, create_time, reaction_time }, entries };
}

/** A trade's items in ascending item id. */
export function tradeEntries(executor: Executor, tradeId: number): Promise<TradeEntry[]> {
  return executor.selectFrom('trade_items').select(['item_id', 'side']).where('trade_id', '=', tradeId).orderBy('item_id').execute();
}

/**
 * PostgreSQL: the users' rows of inventory_counts, created when missing and locked in user
 * order, in one statement (rows of an insert are taken in the order of its values; an
 * existing row is locked by its no-op update). The triggers that keep the counts change the
 * rows with every item that moves, in no particular order; two trades between the same users
 * the other way round would otherwise lock them crosswise.
 */
export async function lockInventoryCounts(trx: Executor, userIds: number[]): Promise<void> {
  const ids = [...new Set(userIds)].sort((a, b) => a - b);
  await trx
    .insertInto('inventory_counts')
    .values(ids.map((user_id) => ({ user_id, owned: 0, stock: 0 })))
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ owned: sql.ref('inventory_counts.owned') }))
    .execute();
}

/**
 * Moves an open trade to accepted, when it is still open and not expired: a conditional
 * update, so of concurrent transitions exactly one changes the row. On PostgreSQL the same
 * statement first locks, in id order, the trade and every open trade holding one of
 * `itemIds`. False when the trade was no longer open.
 */
export async function markAccepted(
  trx: Executor,
  dialect: DialectName,
  tradeId: number,
  itemIds: number[],
  now: number,
  cutoff: number,
): Promise<boolean> {
  let update = trx
    .updateTable('trades')
    .set({ status: TradeStatus.ACCEPTED, reaction_time: now })
    .where('trade_id', '=', tradeId)
    .where('status', '=', TradeStatus.OPEN)
    .where('create_time', '>', cutoff);
  if (dialect === 'postgres') {
    const holding =
      itemIds.length === 0 ? sql`false` : sql`trade_id in (select trade_id from trade_items where item_id in (${sql.join(itemIds)}))`;
    update = update.where(
      'trade_id',
      'in',
      sql<number>`(select trade_id from trades where trade_id = ${tradeId} or (status = ${sql.lit(TradeStatus.OPEN)} and ${holding}) order by trade_id for update)`,
    );
  }
  const opened = await update.executeTakeFirst();
  return opened.numUpdatedRows === 1n;
}

/** Marks a trade invalid (an item of it was no longer available). */
export async function markInvalid(trx: Executor, tradeId: number): Promise<void> {
  await trx.updateTable('trades').set({ status: TradeStatus.INVALID }).where('trade_id', '=', tradeId).execute();
}

/** One item changing hands in a trade, with what it carries afterwards. */
export interface ItemMove {
  item_id: number;
  giver: number;
  receiver: number;
  ts_can_trade: number;
  data: string;
}

/**
 * Moves the items, each only when still owned by its giver, and records each move in the
 * ledger (in ascending item id), in the caller's transaction: on PostgreSQL in one
 * statement. Answers how many items moved.
 */
export async function moveItems(trx: Executor, dialect: DialectName, tradeId: number, moves: ItemMove[], now: number): Promise<number> {
  if (moves.length === 0) return 0;
  const sorted = [...moves].sort((a, b) => a.item_id - b.item_id);
  if (dialect === 'postgres') {
    const values = sql.join(
      sorted.map((m) => sql`(${m.item_id}::bigint, ${m.giver}::bigint, ${m.receiver}::bigint, ${m.ts_can_trade}::bigint, ${m.data}::text)`),
    );
    const { rows } = await sql<{ item_id: number }>`
      with moved as (
        update items set user_id = m.receiver, ts_owned = ${now}::bigint, ts_can_trade = m.ts_can_trade, data = m.data
        from (values ${values}) as m (item_id, giver, receiver, ts_can_trade, data)
        where items.item_id = m.item_id and items.user_id = m.giver and items.state = ${OWNED}
        returning items.item_id, m.giver, m.receiver
      )
      insert into trade_moves (trade_id, item_id, from_user_id, to_user_id, ts)
      select ${tradeId}::bigint, item_id, giver, receiver, ${now}::bigint from moved order by item_id
      returning item_id`.execute(trx);
    return rows.length;
  }
  let moved = 0;
  for (const m of sorted) {
    const result = await trx
      .updateTable('items')
      .set({ user_id: m.receiver, ts_owned: now, ts_can_trade: m.ts_can_trade, data: m.data })
      .where('item_id', '=', m.item_id)
      .where('user_id', '=', m.giver)
      .where('state', '=', OWNED)
      .executeTakeFirst();
    moved += Number(result.numUpdatedRows);
  }
  await trx
    .insertInto('trade_moves')
    .values(sorted.map((m) => ({ trade_id: tradeId, item_id: m.item_id, from_user_id: m.giver, to_user_id: m.receiver, ts: now })))
    .execute();
  return moved;
}

/** Records a new trade and its items, in the caller's transaction (on PostgreSQL in one statement); answers its id. */
export async function insertTrade(
  trx: Executor,
  dialect: DialectName,
  trade: Insertable<TradesTable>,
  items: Omit<Insertable<TradeItemsTable>, 'trade_id'>[],
): Promise<number> {
  const record = trx.insertInto('trades').values(trade).returning('trade_id');
  if (dialect === 'postgres' && items.length > 0) {
    const created = await trx
      .with('created', () => record)
      .insertInto('trade_items')
      .values(items.map((item) => ({ ...item, trade_id: sql<number>`(select trade_id from created)` })))
      .returning('trade_id')
      .executeTakeFirstOrThrow();
    return Number(created.trade_id);
  }
  const { trade_id } = await record.executeTakeFirstOrThrow();
  if (items.length > 0)
    await trx
      .insertInto('trade_items')
      .values(items.map((item) => ({ ...item, trade_id })))
      .execute();
  return trade_id;
}
