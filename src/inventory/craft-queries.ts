import { sql, type ExpressionBuilder, type QueryCreator, type RawBuilder } from 'kysely';
import type { DialectName, Executor } from '../db/connection.js';
import type { Tables } from '../db/tables.js';
import type { OwnedRow } from '../catalog/serialize.js';
import { OWNED } from './queries.js';
import { openTradesHolding, type InvalidatedTrade } from '../trades/invalidate.js';

/** Whether an item sits on a board or the profile. */
const isEquipped = (eb: ExpressionBuilder<Tables, 'items'>) =>
  eb.exists(eb.selectFrom('equipped').select('equipped.item_id').whereRef('equipped.item_id', '=', 'items.item_id'));

/** An item as a craft checks it before consuming it. */
export interface CraftInput {
  item_id: number;
  user_id: number;
  item_proto_id: number;
  type: number;
  quality_id: number;
  ts_can_trade: number;
  state: string;
  equipped: unknown;
}

/** The items by id, in ascending id, with what decides whether a craft may consume them. */
export function readCraftInputs(executor: Executor, ids: number[]): Promise<CraftInput[]> {
  return executor
    .selectFrom('items')
    .select(['item_id', 'user_id', 'item_proto_id', 'type', 'quality_id', 'ts_can_trade', 'state'])
    .select((eb) => isEquipped(eb).as('equipped'))
    .where('item_id', 'in', ids)
    .orderBy('item_id')
    .execute();
}

/** An item a craft consumed: what decides the result. */
export interface ConsumedInput {
  item_id: number;
  item_proto_id: number;
  type: number;
  quality_id: number;
}

/**
 * Records a craft and consumes those of its items that are the user's, owned, tradable now
 * and not equipped, in the caller's transaction; answers the craft's id and the items
 * consumed (fewer than asked when some were not usable, and then possibly no craft id).
 * On PostgreSQL the items are locked in id order before any of them changes, in the same
 * statement, so overlapping crafts wait for each other instead of deadlocking.
 */
export async function recordCraftConsuming(
  trx: Executor,
  dialect: DialectName,
  userId: number,
  ids: number[],
  now: number,
): Promise<{ craftId: number | undefined; consumed: ConsumedInput[] }> {
  const postgres = dialect === 'postgres';
  // SQLite would pick an index of owned items (by user) over the primary key and walk the
  // whole inventory; a unary plus keeps those columns out of its index choice.
  const notIndexed = (column: 'user_id' | 'state') => (postgres ? sql.ref(column) : sql`+${sql.ref(column)}`);
  const record = trx
    .insertInto('crafts')
    .values({ user_id: userId, ts: now, result_item_id: null, consumed_item_ids: JSON.stringify(ids) })
    .returning('craft_id');
  const consume = (db: QueryCreator<Tables>, craftId: number | RawBuilder<number>) =>
    db
      .updateTable('items')
      .set({ state: 'consumed', ended_at: now, craft_id: craftId })
      .where(notIndexed('user_id'), '=', userId)
      .where(notIndexed('state'), '=', OWNED)
      .where('ts_can_trade', '<>', -1)
      .where('ts_can_trade', '<=', now)
      .where((eb) => eb.not(isEquipped(eb)))
      .returning(['item_id', 'item_proto_id', 'type', 'quality_id']);
  if (!postgres) {
    const craftId = (await record.executeTakeFirstOrThrow()).craft_id;
    const consumed = await consume(trx, craftId).where('item_id', 'in', ids).execute();
    return { craftId, consumed };
  }
  // One round trip locks the items, records the craft and consumes them (data-modifying
  // CTEs; the statements name the CTEs only in raw SQL, hence the plain query creator).
  const rows = await trx
    .with('locked', (db) => db.selectFrom('items').select('item_id').where('item_id', 'in', ids).orderBy('item_id').forUpdate())
    .with('craft', () => record)
    .with('consumed', (db) =>
      consume(db as unknown as QueryCreator<Tables>, sql<number>`(select craft_id from craft)`).where(
        'item_id',
        'in',
        sql<number>`(select item_id from locked)`,
      ),
    )
    .selectFrom('consumed')
    .selectAll()
    .select(sql<string>`(select craft_id from craft)`.as('craft_id'))
    .execute();
  const first = rows[0];
  return {
    craftId: first === undefined ? undefined : Number(first.craft_id),
    consumed: rows.map(({ item_id, item_proto_id, type, quality_id }) => ({ item_id, item_proto_id, type, quality_id })),
  };
}

/** The item a craft made. */
export interface CraftResultItem {
  protoId: number;
  type: number;
  qualityId: number;
}

/**
 * Creates a craft's result for the user and links it to the craft, in the caller's
 * transaction, and finds the open trades holding any of the consumed items (made after
 * `cutoff`), which the caller makes invalid; on PostgreSQL in one statement, which locks those
 * trades in id order (after the consume step has locked the items and the user's counts).
 */
export async function createCraftResult(
  trx: Executor,
  dialect: DialectName,
  craft: { userId: number; craftId: number; consumedIds: number[] },
  result: CraftResultItem,
  now: number,
  cutoff: number,
): Promise<{ row: OwnedRow; holding: InvalidatedTrade[] }> {
  const { userId, craftId, consumedIds } = craft;
  const create = trx
    .insertInto('items')
    .values({
      user_id: userId,
      item_proto_id: result.protoId,
      type: result.type,
      quality_id: result.qualityId,
      ts_owned: now,
      ts_can_trade: 0,
      state: 'owned',
      created_by_craft_id: craftId,
    })
    .returning(['item_id', 'user_id', 'item_proto_id', 'ts_owned', 'ts_can_trade', 'data']);
  const link = (db: QueryCreator<Tables>, itemId: number | RawBuilder<number>) =>
    db.updateTable('crafts').set({ result_item_id: itemId }).where('craft_id', '=', craftId);
  if (dialect === 'postgres') {
    const { holding, ...row } = await trx
      .with('created', () => create)
      .with('linked', (db) => link(db as unknown as QueryCreator<Tables>, sql<number>`(select item_id from created)`).returning('craft_id'))
      .with('holding', (db) => openTradesHolding(db as unknown as QueryCreator<Tables>, dialect, consumedIds, cutoff))
      .selectFrom('created')
      .selectAll()
      .select(
        sql<
          InvalidatedTrade[]
        >`(select coalesce(json_agg(json_build_object('trade_id', trade_id, 'user_id_from', user_id_from, 'user_id_to', user_id_to) order by trade_id), '[]') from holding)`.as(
          'holding',
        ),
      )
      .executeTakeFirstOrThrow();
    return {
      row,
      holding: holding.map((t) => ({
        trade_id: Number(t.trade_id),
        user_id_from: Number(t.user_id_from),
        user_id_to: Number(t.user_id_to),
      })),
    };
  }
  const holding = await openTradesHolding(trx, dialect, consumedIds, cutoff).execute();
  const row = await create.executeTakeFirstOrThrow();
  await link(trx, row.item_id).execute();
  return { row, holding };
}
