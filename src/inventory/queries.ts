import { sql } from 'kysely';
import type { Services } from '../services.js';
import type { OwnedRow } from '../catalog/serialize.js';

export type InventoryOrder = 'time' | 'quality';

export interface ListOptions {
  includeStock: boolean;
  order: InventoryOrder;
  /** Absent: every item. */
  limit?: number;
}

/**
 * A user's owned items, newest first (`time`) or highest class first, then newest (`quality`);
 * ties on time fall to the higher item_id. Each order walks its own index
 * (items_by_time, items_by_quality), so a small limit reads only that many rows.
 */
export async function listOwnedItems(services: Services, userId: number, options: ListOptions): Promise<OwnedRow[]> {
  if (options.limit === 0) return [];
  let query = services.db.kysely
    .selectFrom('items')
    .select(['item_id', 'user_id', 'item_proto_id', 'ts_owned', 'ts_can_trade', 'data'])
    .where('user_id', '=', userId)
    .where('state', '=', 'owned');
  if (!options.includeStock) {
    // By time, SQLite would otherwise walk items_by_quality for the filter and sort the whole
    // inventory; `+quality_id` keeps it on items_by_time, in order, stopping at the limit.
    const quality = options.order === 'time' && services.db.dialect === 'sqlite' ? sql<number>`+quality_id` : sql<number>`quality_id`;
    query = query.where(quality, '>', 0);
  }
  if (options.order === 'quality') query = query.orderBy('quality_id', 'desc');
  query = query.orderBy('ts_owned', 'desc').orderBy('item_id', 'desc');
  if (options.limit !== undefined) query = query.limit(options.limit);
  return query.execute();
}

/** How many items a user owns (stock-class ones only when asked): one row of inventory_counts. */
export async function countOwnedItems(services: Services, userId: number, includeStock: boolean): Promise<number> {
  const row = await services.db.kysely
    .selectFrom('inventory_counts')
    .select(['owned', 'stock'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!row) return 0;
  return includeStock ? row.owned : row.owned - row.stock;
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
    .where('items.state', '=', 'owned')
    .orderBy('equipped.item_id')
    .execute();
}

export interface EquippedTree {
  game: Record<string, { cards?: Record<string, number[]>; generator?: number; joke?: number }>;
  profile?: { badges: number[] };
}

/** `{ game: { <board>: { cards: { <monopoly_id>: [ids] }, generator, joke } }, profile?: { badges } }` */
export function equippedTree(rows: EquippedRow[]): EquippedTree {
  const tree: EquippedTree = { game: {} };
  for (const row of rows) {
    if (row.slot === 'badge') {
      (tree.profile ??= { badges: [] }).badges.push(row.item_id);
      continue;
    }
    if (row.game === null) continue;
    const board = (tree.game[row.game] ??= {});
    if (row.slot === 'cards') {
      const cards = (board.cards ??= {});
      (cards[String(row.monopoly_id ?? 0)] ??= []).push(row.item_id);
    } else if (row.slot === 'generator') board.generator = row.item_id;
    else if (row.slot === 'joke') board.joke = row.item_id;
  }
  return tree;
}
