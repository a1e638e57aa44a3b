import type { Domain } from '../api/method.js';
import { walletPromocodeActivate } from './methods.js';

export const walletDomain: Domain = {
  name: 'wallet',
  methods: [walletPromocodeActivate],
};

// What the other folders use of this one.
export { MAX_PROMOCODE_ITEMS, MAX_PROMOCODE_LENGTH } from './codes.js';
export { createPromocode, disablePromocode, listPromocodes } from './store.js';
