import type { Domain } from '../api/method.js';
import { walletPromocodeActivate } from './methods.js';

/** Promo codes (their method keeps the reference's `wallet.` name; money itself is the market domain's). */
export const promocodesDomain: Domain = {
  name: 'promocodes',
  methods: [walletPromocodeActivate],
};
