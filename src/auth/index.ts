import type { Domain } from '../api/method.js';
import type { Services } from '../services.js';
import { authRefresh, authSignin, authSignout, authTotpVerify, botsGetToken } from './methods.js';
import { prepareDummyHash } from './passwords.js';
import { sweepSessions } from './sessions.js';

const SWEEP_EVERY_MS = 60 * 60 * 1000;

export const authDomain: Domain = {
  name: 'auth',
  methods: [authSignin, authTotpVerify, authRefresh, botsGetToken, authSignout],
  async start(services: Services) {
    await prepareDummyHash();
    const sweeper = setInterval(() => {
      sweepSessions(services).catch((err) => services.log.warn({ err }, 'sweeping expired sessions failed'));
    }, SWEEP_EVERY_MS);
    sweeper.unref();
    services.state.set('auth.sweeper', sweeper);
  },
  stop(services: Services) {
    clearInterval(services.state.get('auth.sweeper') as NodeJS.Timeout | undefined);
  },
};
