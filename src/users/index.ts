import type { Domain } from '../api/method.js';
import type { Services } from '../services.js';
import { usersGet } from './users-get.js';
import { privacyMethods } from './privacy.js';
import { attachProfileCache } from './profile-cache.js';

const STATE_KEY = 'users';

export const usersDomain: Domain = {
  name: 'users',
  methods: [usersGet, ...privacyMethods],
  async start(services: Services) {
    const detachProfiles = await attachProfileCache(services);
    const presence = services.presence;
    const heartbeat = setInterval(() => {
      presence.touchConnected().catch((err) => services.log.warn({ err }, 'presence refresh failed'));
    }, presence.writeEvery * 1000);
    heartbeat.unref();
    services.state.set(STATE_KEY, () => {
      clearInterval(heartbeat);
      detachProfiles();
    });
  },
  stop(services: Services) {
    (services.state.get(STATE_KEY) as (() => void) | undefined)?.();
  },
};
