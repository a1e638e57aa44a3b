/** Questions about a game's state that the engine, its checks and the computer player all ask. */
import { buybackCost, buyPrice, groupFields, levelCost, maxLevel, monopolyOf, type BoardConfig } from './config.js';
import type { FieldState, Game, PlayerState } from './types.js';

export function playerById(game: Game, userId: number): PlayerState | undefined {
  return game.players.find((p) => p.user_id === userId);
}

export function alivePlayers(game: Game): PlayerState[] {
  return game.players.filter((p) => p.status === 0);
}

export function turnPlayer(game: Game): PlayerState {
  return game.players[game.turn]!;
}

export function ownedFields(game: Game, userId: number): number[] {
  const out: number[] = [];
  for (const [id, f] of game.fields) if (f.owner_user_id === userId) out.push(id);
  return out.sort((a, b) => a - b);
}

/** Whether `userId` owns every field of the monopoly of `fieldId`. */
export function ownsGroup(game: Game, userId: number, fieldId: number): boolean {
  return groupFields(game.config, fieldId).every((id) => game.fields.get(id)?.owner_user_id === userId);
}

function groupLevels(game: Game, fieldId: number): number[] {
  return groupFields(game.config, fieldId).map((id) => game.fields.get(id)?.level ?? 0);
}

/** Why `userId` may not build a level on `fieldId` now, or null when they may (cash aside). */
export function buildRefusal(game: Game, userId: number, fieldId: number): string | null {
  const field = game.fields.get(fieldId);
  if (!field || field.owner_user_id !== userId) return 'you do not own this field';
  const m = monopolyOf(game.config, fieldId);
  if (!m || !('rent_by_level' in m)) return 'levels are not built on this field';
  if (!ownsGroup(game, userId, fieldId)) return 'you do not own the whole monopoly';
  const group = groupFields(game.config, fieldId);
  if (group.some((id) => game.fields.get(id)?.mortgage)) return 'a field of this monopoly is mortgaged';
  if (field.level >= maxLevel(game.config, fieldId)) return 'this field is at its highest level';
  if (!game.config.mechanics.field_level?.build?.uneven && field.level > Math.min(...groupLevels(game, fieldId)))
    return 'levels are built evenly: build on the lower fields of the monopoly first';
  if (group.some((id) => game.builtThisTurn.includes(id))) return 'a level was already built in this monopoly this turn';
  if (playerById(game, userId)!.cash < levelCost(game.config, fieldId)) return 'not enough cash';
  return null;
}

export function sellRefusal(game: Game, userId: number, fieldId: number): string | null {
  const field = game.fields.get(fieldId);
  if (!field || field.owner_user_id !== userId) return 'you do not own this field';
  if (field.level === 0) return 'this field has no level to sell';
  if (!game.config.mechanics.field_level?.build?.uneven && field.level < Math.max(...groupLevels(game, fieldId)))
    return 'levels are sold evenly: sell on the higher fields of the monopoly first';
  return null;
}

export function mortgageRefusal(game: Game, userId: number, fieldId: number): string | null {
  const field = game.fields.get(fieldId);
  if (!field || field.owner_user_id !== userId) return 'you do not own this field';
  if (field.mortgage) return 'this field is already mortgaged';
  if (groupLevels(game, fieldId).some((l) => l > 0)) return 'sell the levels of this monopoly first';
  return null;
}

export function buybackRefusal(game: Game, userId: number, fieldId: number): string | null {
  const field = game.fields.get(fieldId);
  if (!field || field.owner_user_id !== userId) return 'you do not own this field';
  if (!field.mortgage) return 'this field is not mortgaged';
  if (game.mortgagedThisTurn.includes(fieldId)) return 'a field mortgaged this turn is bought back in a later turn';
  if (playerById(game, userId)!.cash < buybackCost(game.config, fieldId)) return 'not enough cash';
  return null;
}

/** Whether the field may change hands in a contract: a company with no level anywhere in its monopoly. */
export function tradable(game: Game, fieldId: number): boolean {
  return groupLevels(game, fieldId).every((l) => l === 0);
}

/** Whether the player could still raise cash by selling a level or mortgaging a field. */
export function canRaiseCash(game: Game, userId: number): boolean {
  return ownedFields(game, userId).some((id) => sellRefusal(game, userId, id) === null || mortgageRefusal(game, userId, id) === null);
}

/** The rent due on `fieldId` for a roll of `diceSum`, before time rules. */
export function rentOf(game: Game, fieldId: number, field: FieldState, diceSum: number): number {
  const config: BoardConfig = game.config;
  const m = monopolyOf(config, fieldId)!;
  const owned = groupFields(config, fieldId).filter((id) => game.fields.get(id)?.owner_user_id === field.owner_user_id).length;
  let rent: number;
  if ('rent_by_level' in m) {
    const table = m.last_field && (config.fields[fieldId] as { is_last?: number }).is_last ? m.last_field.rent_by_level : m.rent_by_level;
    const full = owned === groupFields(config, fieldId).length;
    rent = field.level > 0 ? table[field.level]! : full ? table[0]! * 2 : table[0]!;
  } else if ('rent_by_count' in m) {
    rent = m.rent_by_count[Math.min(owned, m.rent_by_count.length - 1)]!;
  } else {
    rent = m.dice_multipliers[Math.min(owned, m.dice_multipliers.length - 1)]! * diceSum;
  }
  const owner = game.setupPlayers.find((p) => p.user_id === field.owner_user_id);
  const card = owner?.equipment.cards.find((c) => c.field_id === fieldId);
  return Math.round(rent * (card ? card.rent_multiplier : 1));
}

export { buyPrice };
