import { Type } from '@sinclair/typebox';
import { defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { ApiError, Code, badParam } from '../api/errors.js';
import { Strict } from '../api/schema-types.js';
import type { Services } from '../services.js';
import type { EquipSlot } from '../db/tables.js';
import { getCatalog } from '../catalog/index.js';
import { announceInventoriesChanged } from './answer-cache.js';
import type { InvalidatedTrade } from './hooks.js';
import {
  equippedInSlot,
  equippedTree,
  insertEquipped,
  loadEquipped,
  lockEquipment,
  readEquipInput,
  unequipItems,
  type EquippedTree as Tree,
} from './queries.js';
import { EquippedTree } from './schemas.js';

/** The slot each equippable item type goes to: cards, dice (number generators) and taunts on a board, badges on the profile. */
const SLOT_OF_TYPE: Record<number, EquipSlot> = { 0: 'cards', 4: 'generator', 8: 'joke', 5: 'badge' };
/** Badges the profile shows at most. */
export const MAX_BADGES = 5;
/** The board an item goes on when the call names none: the classic board game's. */
export const DEFAULT_BOARD = 'classic';

const notYours = () => new ApiError(Code.CRAFT_ITEM_UNUSABLE, 'the item is not in your inventory');

function boardOf(game: string | undefined): string {
  const board = game ?? DEFAULT_BOARD;
  // eslint-disable-next-line no-control-regex
  if (board.trim() !== board || board === '' || /[\u0000-\u001f\u007f]/.test(board))
    throw badParam('game', 'must be a board name: no white space at its ends, no control characters');
  return board;
}

/**
 * Equips an owned item of the caller: a card on a board (one card of a prototype per board:
 * another item of that prototype there leaves it), a die or a taunt on a board (the one there
 * leaves it), a badge on the profile (at most MAX_BADGES). An item equipped elsewhere moves.
 * One user's equips run one after the other (their user row locked), the item's row locked;
 * the open trades holding the item end, in the same transaction. Answers the caller's equipped tree.
 */
export async function equipItem(services: Services, userId: number, itemId: number, game: string | undefined): Promise<Tree> {
  const catalog = await getCatalog(services);
  const dialect = services.db.dialect;
  const requestedBoard = game === undefined ? undefined : boardOf(game);
  const invalidated = await services.db.kysely.transaction().execute(async (trx): Promise<InvalidatedTrade[]> => {
    await lockEquipment(trx, dialect, userId);
    const item = await readEquipInput(trx, dialect, itemId);
    if (!item || Number(item.user_id) !== userId || item.state !== 'owned') throw notYours();
    const proto = catalog.protos.get(item.item_proto_id);
    const slot = proto ? SLOT_OF_TYPE[proto.type] : undefined;
    if (!proto || slot === undefined) throw new ApiError(Code.ITEM_NOT_APPLICABLE, 'only cards, dice, taunts and badges can be equipped');
    if (slot === 'cards' && proto.monopolyId === null)
      throw new ApiError(Code.ITEM_NOT_APPLICABLE, 'the card belongs to no monopoly, so no board has a place for it');
    if (slot === 'badge' && requestedBoard !== undefined) throw badParam('game', 'badges go on the profile, not on a board');
    const board = slot === 'badge' ? null : (requestedBoard ?? DEFAULT_BOARD);
    if (item.slot === slot && item.game === board) return [];
    const occupants = await equippedInSlot(trx, userId, slot, board);
    const leaving = occupants.filter((other) => {
      if (other.item_id === itemId) return false;
      if (!other.current) return true;
      if (slot === 'generator' || slot === 'joke') return true;
      return slot === 'cards' && other.item_proto_id === item.item_proto_id;
    });
    if (slot === 'badge' && occupants.filter((other) => other.current && other.item_id !== itemId).length >= MAX_BADGES)
      throw new ApiError(Code.ITEM_NOT_APPLICABLE, `the profile shows at most ${MAX_BADGES} badges: take one off first`);
    await unequipItems(trx, [itemId, ...leaving.map((other) => other.item_id)]);
    await insertEquipped(trx, {
      item_id: itemId,
      user_id: userId,
      slot,
      game: board,
      monopoly_id: slot === 'cards' ? proto.monopolyId : null,
    });
    // An equipped item cannot change hands: the offers that hold it end.
    return services.hooks.inventory.endTradesHolding(services, trx, [itemId]);
  });
  await announceInventoriesChanged(services, [userId]);
  await services.hooks.inventory.announceEndedTrades(services, invalidated);
  return equippedTree(await loadEquipped(services, userId));
}

/** Takes the caller's item off its board or the profile; an item equipped nowhere stays so. Answers the caller's equipped tree. */
export async function unequipItem(services: Services, userId: number, itemId: number): Promise<Tree> {
  const dialect = services.db.dialect;
  const changed = await services.db.kysely.transaction().execute(async (trx) => {
    await lockEquipment(trx, dialect, userId);
    const item = await readEquipInput(trx, dialect, itemId);
    if (!item || Number(item.user_id) !== userId || item.state !== 'owned') throw notYours();
    if (item.slot === null) return false;
    await unequipItems(trx, [itemId]);
    return true;
  });
  if (changed) await announceInventoriesChanged(services, [userId]);
  return equippedTree(await loadEquipped(services, userId));
}

const EquipResult = Type.Object({ equipped: EquippedTree }, Strict);

export const inventoryEquip = defineMethod({
  name: 'inventory.equip',
  summary: 'Equip an item: a card, die or taunt on a board, a badge on the profile',
  description:
    'Cards (type 0) go on a board by their monopoly: a board holds one card of each prototype, and an item of the same prototype already there leaves it. ' +
    'Dice (type 4, the number generator) and taunts (type 8) take their board’s one place: the item there leaves it. ' +
    `Badges (type 5) go on the profile, at most ${MAX_BADGES}. An item equipped elsewhere moves; equipped where it already is, nothing changes. ` +
    'An equipped item cannot be traded, sold or crafted: the open trades holding it end. Answers the caller’s equipped items as inventory.get add_equipped=tree shows them.',
  auth: 'required',
  extension: true,
  params: P.object({
    item_id: P.uint({ minimum: 1, description: 'an owned card, die, taunt or badge' }),
    game: P.optional(
      P.string({
        maxLength: 100,
        description: `the board for a card, die or taunt (default ${DEFAULT_BOARD}), as world files name it; not for badges`,
      }),
    ),
  }),
  result: EquipResult,
  errors: {
    603: 'the item is not yours or no longer owned (on sale, consumed, traded away)',
    624: `the item cannot be equipped (not a card, die, taunt or badge; a card of no monopoly), or the profile already shows ${MAX_BADGES} badges`,
  },
  handler: async ({ services, caller }, params) => ({
    equipped: await equipItem(services, caller.userId, params.item_id, params.game),
  }),
});

export const inventoryUnequip = defineMethod({
  name: 'inventory.unequip',
  summary: 'Take an item off its board or the profile',
  description:
    'The item becomes free to trade, sell or craft again. An item equipped nowhere stays so (code 0). Answers the caller’s equipped items as inventory.get add_equipped=tree shows them.',
  auth: 'required',
  extension: true,
  params: P.object({ item_id: P.uint({ minimum: 1, description: 'an owned item' }) }),
  result: EquipResult,
  errors: { 603: 'the item is not yours or no longer owned' },
  handler: async ({ services, caller }, params) => ({ equipped: await unequipItem(services, caller.userId, params.item_id) }),
});
