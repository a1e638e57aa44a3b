import type { Domain } from '../api/method.js';
import type { Core, Runtime } from '../services.js';
import { inventoryCraft } from './craft.js';
import { inventoryGet } from './get.js';
import { inventoryOpen } from './open-method.js';
import { inventoryEquip, inventoryUnequip } from './equip.js';
import { attachInventoryAnswerCache, type InventoryAnswerCache } from './answer-cache.js';

export const inventoryDomain: Domain = {
  name: 'inventory',
  methods: [inventoryGet, inventoryCraft, inventoryOpen, inventoryEquip, inventoryUnequip],
};

export interface InventoryRuntime extends Runtime {
  /** inventory.get's item parts; undefined where announcements may not reach this process. */
  answers: InventoryAnswerCache | undefined;
}

export async function startInventory(core: Core): Promise<InventoryRuntime> {
  const answers = await attachInventoryAnswerCache(core);
  return { answers: answers.cache, stop: answers.detach };
}

// What the other folders use of this one.
export { announceInventoriesChanged } from './answer-cache.js';
export { gameEquipment, type EquippedGameCard, type GameEquipment } from './game-equipment.js';
export { grantItems, insertGrantedItems, revokeItem } from './grants.js';
export type { InvalidatedTrade } from './hooks.js';
export { inventoryShownTo, mayReadInventory } from './privacy.js';
export { OWNED } from './queries.js';
