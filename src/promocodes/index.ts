import type { Domain } from '../api/method.js';
import { walletPromocodeActivate } from './methods.js';

/** Promo codes (their method keeps the reference's `wallet.` name; money itself is the market domain's). */
export const promocodesDomain: Domain = {
  name: 'promocodes',
  methods: [walletPromocodeActivate],
};

// What the other folders use of this one.
export { MAX_PROMOCODE_ITEMS, MAX_PROMOCODE_LENGTH } from './codes.js';
export { createPromocode, disablePromocode, listPromocodes, MAX_PROMOCODE_MONEY } from './store.js';
export type { PromocodesHooks } from './hooks.js';
