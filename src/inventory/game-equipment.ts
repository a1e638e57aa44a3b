/**
 * What players bring into a game: the items they have equipped on a board (cards on its
 * monopolies, the number generator, the taunt), read in the caller's transaction when the
 * game starts.
 */
import type { Executor } from '../db/connection.js';
import { selectGameEquipment } from './queries.js';

/** A card equipped on a monopoly of the board, with its class's rent coefficient. */
export interface EquippedGameCard {
  item_id: number;
  item_proto_id: number;
  monopoly_id: number;
  /** The quality's coeff_rent (1 when the quality has none). */
  rent_multiplier: number;
}

export interface GameEquipment {
  /** In ascending item_id. */
  cards: EquippedGameCard[];
  generator?: { item_proto_id: number };
  joke?: { item_proto_id: number };
}

/**
 * The equipment of each of `userIds` on the board named `board`: only items still owned by the
 * user who equipped them; every user of the list has an entry (empty when nothing is equipped).
 */
export async function gameEquipment(trx: Executor, userIds: readonly number[], board: string): Promise<Map<number, GameEquipment>> {
  const found = new Map<number, GameEquipment>(userIds.map((id) => [id, { cards: [] }]));
  if (userIds.length === 0) return found;
  const rows = await selectGameEquipment(trx, userIds, board);
  for (const row of rows) {
    const equipment = found.get(Number(row.user_id))!;
    const item_proto_id = Number(row.item_proto_id);
    if (row.slot === 'cards' && row.monopoly_id !== null)
      equipment.cards.push({
        item_id: Number(row.item_id),
        item_proto_id,
        monopoly_id: Number(row.monopoly_id),
        rent_multiplier: row.coeff_rent === null ? 1 : Number(row.coeff_rent),
      });
    else if (row.slot === 'generator') equipment.generator = { item_proto_id };
    else if (row.slot === 'joke') equipment.joke = { item_proto_id };
  }
  return found;
}
