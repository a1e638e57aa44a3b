import type { Domain } from '../api/method.js';
import type { Services } from '../services.js';
import { inventoryCraft } from './craft.js';
import { inventoryGet } from './get.js';
import { inventoryOpen } from './open-method.js';
import { attachInventoryAnswerCache } from './answer-cache.js';

const STATE_KEY = 'inventory';

export const inventoryDomain: Domain = {
  name: 'inventory',
  methods: [inventoryGet, inventoryCraft, inventoryOpen],
  async start(services: Services) {
    services.state.set(STATE_KEY, await attachInventoryAnswerCache(services));
  },
  stop(services: Services) {
    (services.state.get(STATE_KEY) as (() => void) | undefined)?.();
  },
};
