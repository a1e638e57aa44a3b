import type { Domain } from '../api/method.js';
import { tradeMethods } from './methods.js';
import { startExpirySweep } from './expiry.js';

export const tradesDomain: Domain = {
  name: 'trades',
  methods: tradeMethods,
  start(services) {
    services.tradeExpiry = startExpirySweep(services);
  },
  async stop(services) {
    await services.tradeExpiry?.stop();
    services.tradeExpiry = undefined;
  },
};
