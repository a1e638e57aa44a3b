import type { Domain } from '../api/method.js';
import type { Services } from '../services.js';
import { inventoryCraft } from './craft.js';
import { inventoryGet } from './get.js';
import { attachInventoryAnswerCache, type InventoryAnswerCache } from './answer-cache.js';

interface InventoryState {
  answerCache?: InventoryAnswerCache;
  stop: () => void;
}

export const inventoryDomain: Domain = {
  name: 'inventory',
  methods: [inventoryGet, inventoryCraft],
  async start(services: Services) {
    const attached = await attachInventoryAnswerCache(services);
    const state: InventoryState = { answerCache: attached.cache, stop: attached.detach };
    services.state.set('inventory', state);
  },
  stop(services: Services) {
    (services.state.get('inventory') as InventoryState | undefined)?.stop();
  },
};
