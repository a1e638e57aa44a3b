import type { Domain } from '../api/method.js';
import { walletPromocodeActivate } from './methods.js';

export const walletDomain: Domain = {
  name: 'wallet',
  methods: [walletPromocodeActivate],
};
