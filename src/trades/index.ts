import type { Domain } from '../api/method.js';
import type { Runtime, Services } from '../services.js';
import { tradeMethods } from './methods.js';
import { startExpirySweep, type ExpirySweep } from './expiry.js';

export const tradesDomain: Domain = {
  name: 'trades',
  methods: tradeMethods,
};

/** Writes expiry into open trades past their time; started once every capability's runtime exists. */
export interface TradesRuntime extends Runtime {
  start(services: Services): void;
}

export function createTrades(): TradesRuntime {
  let expiry: ExpirySweep | undefined;
  return {
    start(services) {
      expiry = startExpirySweep(services);
    },
    async stop() {
      await expiry?.stop();
      expiry = undefined;
    },
  };
}
