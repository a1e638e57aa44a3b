import { sql } from 'kysely';
import type { ItemState } from '../db/tables.js';
import type { Services } from '../services.js';
import { elementAt } from '../infra/elements.js';
import type { OwnedRow } from '../catalog/serialize.js';

export type InventoryOrder = 'time' | 'quality';

export interface ListOptions {
  includeStock: boolean;
  order: InventoryOrder;
  /** Absent: every item. */
  limit?: number;
  /**
   * How many stock-class items the user owns, when known: a walk of items_by_time that skips
   * them reads through them, so with no more of them than `limit` it is the cheaper plan.
   */
  stockOwned?: number;
}

const OWNED_COLUMNS = ['item_id', 'user_id', 'item_proto_id', 'ts_owned', 'ts_can_trade', 'data'] as const;

/**
 * `state = 'owned'` as a literal, as the indexes of owned items (items_by_time, items_by_quality)
 * name it: compared with a bound value, SQLite would compile the statement again on every run.
 */
export const OWNED = sql.lit<ItemState>('owned');

function ownedBy(services: Services, userId: number) {
  return services.db.kysely.selectFrom('items').select(OWNED_COLUMNS).where('user_id', '=', userId).where('state', '=', OWNED);
}

/**
 * The classes above stock that a user's owned items have, highest first: a walk down
 * items_by_quality, one index seek per class, however large the inventory.
 */
export function ownedClassesQuery(userId: number) {
  return sql<{ quality_id: number }>`
    with recursive classes (quality_id) as (
      select max(quality_id) from items where user_id = ${userId} and state = 'owned'
      union all
      select (select max(i.quality_id) from items i where i.user_id = ${userId} and i.state = 'owned' and i.quality_id < c.quality_id)
      from classes c where c.quality_id > 0
    )
    select quality_id from classes where quality_id > 0`;
}

/**
 * A limited list by time without stock is merged from one walk per class: stock items sit
 * in items_by_time between the others, and a walk of it that skips them would read them all.
 */
export const mergesClasses = (options: ListOptions): options is ListOptions & { limit: number } =>
  options.order === 'time' &&
  !options.includeStock &&
  options.limit !== undefined &&
  !(options.stockOwned !== undefined && options.stockOwned <= options.limit);

/**
 * The query that lists a user's owned items (see listOwnedItems). `classes`: when
 * mergesClasses(options), the classes above stock the user owns (ownedClassesQuery), at
 * least one.
 */
export function ownedItemsQuery(services: Services, userId: number, options: ListOptions, classes: number[] = []) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a constraint on Kysely's builders, whose method signatures are generic
  const newestFirst = <Q extends { orderBy: (...args: any[]) => any }>(query: Q) =>
    query.orderBy('ts_owned', 'desc').orderBy('item_id', 'desc') as Q;
  if (mergesClasses(options)) {
    if (classes.length === 0) throw new Error('a list merged from classes needs at least one class');
    // The newest `limit` items of each class, a prefix of items_by_quality each, merged.
    const limit = options.limit;
    const perClass = classes.map((qualityId) =>
      services.db.kysely
        .selectFrom(
          newestFirst(ownedBy(services, userId).where('quality_id', '=', qualityId))
            .limit(limit)
            .as('newest'),
        )
        .selectAll(),
    );
    const merged = perClass.slice(1).reduce((all, next) => all.unionAll(next), elementAt(perClass, 0));
    return newestFirst(services.db.kysely.selectFrom(merged.as('merged')).selectAll()).limit(limit);
  }
  let query = ownedBy(services, userId);
  if (!options.includeStock) {
    // Every item by time: SQLite would otherwise walk items_by_quality for the filter and
    // sort the whole inventory; `+quality_id` keeps it on items_by_time, already in order.
    const quality = options.order === 'time' && services.db.dialect === 'sqlite' ? sql<number>`+quality_id` : sql<number>`quality_id`;
    query = query.where(quality, '>', 0);
  }
  if (options.order === 'quality') query = query.orderBy('quality_id', 'desc');
  query = newestFirst(query);
  if (options.limit !== undefined) query = query.limit(options.limit);
  return query;
}

/**
 * A user's owned items, newest first (`time`) or highest class first, then newest (`quality`);
 * ties on time fall to the higher item_id. Each order walks its own index (items_by_time,
 * items_by_quality), so a small limit reads only about that many rows.
 */
export async function listOwnedItems(services: Services, userId: number, options: ListOptions): Promise<OwnedRow[]> {
  if (options.limit === 0) return [];
  let classes: number[] = [];
  if (mergesClasses(options)) {
    classes = (await ownedClassesQuery(userId).execute(services.db.kysely)).rows.map((r) => Number(r.quality_id));
    if (classes.length === 0) return [];
  }
  return ownedItemsQuery(services, userId, options, classes).execute();
}

export interface OwnedCounts {
  owned: number;
  /** of them stock class */
  stock: number;
}

/** How many items a user owns, and how many of them are stock class: one row of inventory_counts. */
export async function countOwnedItems(services: Services, userId: number): Promise<OwnedCounts> {
  const row = await services.db.kysely
    .selectFrom('inventory_counts')
    .select(['owned', 'stock'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row ? { owned: Number(row.owned), stock: Number(row.stock) } : { owned: 0, stock: 0 };
}

export interface EquippedRow {
  item_id: number;
  slot: string;
  game: string | null;
  monopoly_id: number | null;
}

/** Equipped items of a user that are still owned, in ascending item_id. */
export async function loadEquipped(services: Services, userId: number): Promise<EquippedRow[]> {
  return services.db.kysely
    .selectFrom('equipped')
    .innerJoin('items', 'items.item_id', 'equipped.item_id')
    .select(['equipped.item_id', 'equipped.slot', 'equipped.game', 'equipped.monopoly_id'])
    .where('equipped.user_id', '=', userId)
    .where('items.user_id', '=', userId)
    .where('items.state', '=', OWNED)
    .orderBy('equipped.item_id')
    .execute();
}

export interface EquippedBoard {
  cards: Record<string, number[]>;
  generator: number;
  joke: number;
}

export interface EquippedTree {
  game: Record<string, EquippedBoard>;
  profile?: { badges: number[] };
}

/**
 * `{ game: { <board>: { cards: { <monopoly_id>: [ids] }, generator, joke } }, profile?: { badges } }`.
 * Every board carries all three slots, as clients expect: no card is `{}`, no generator or
 * taunt is 0 (no item has that id).
 */
export function equippedTree(rows: EquippedRow[]): EquippedTree {
  const tree: EquippedTree = { game: {} };
  for (const row of rows) {
    if (row.slot === 'badge') {
      (tree.profile ??= { badges: [] }).badges.push(row.item_id);
      continue;
    }
    if (row.game === null) continue;
    const board = (tree.game[row.game] ??= { cards: {}, generator: 0, joke: 0 });
    if (row.slot === 'cards') {
      (board.cards[String(row.monopoly_id ?? 0)] ??= []).push(row.item_id);
    } else if (row.slot === 'generator') board.generator = row.item_id;
    else if (row.slot === 'joke') board.joke = row.item_id;
  }
  return tree;
}
