import type { Domain } from '../api/method.js';
import { inventoryCraft } from './craft.js';
import { inventoryGet } from './get.js';

export const inventoryDomain: Domain = {
  name: 'inventory',
  methods: [inventoryGet, inventoryCraft],
};
