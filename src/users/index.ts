import type { Domain } from '../api/method.js';
import type { Services } from '../services.js';
import { usersGet } from './users-get.js';
import { accountGetPrivacy, accountSetPrivacy } from './privacy.js';
import { attachProfileCache, type ProfileCache } from './profile-cache.js';

interface UsersState {
  profileCache?: ProfileCache;
  stop: () => void;
}

export const usersDomain: Domain = {
  name: 'users',
  methods: [usersGet, accountSetPrivacy, accountGetPrivacy],
  async start(services: Services) {
    const attached = await attachProfileCache(services);
    const presence = services.presence;
    const heartbeat = setInterval(() => {
      presence.touchConnected().catch((err) => services.log.warn({ err }, 'presence refresh failed'));
    }, presence.writeEvery * 1000);
    heartbeat.unref();
    const state: UsersState = {
      profileCache: attached.cache,
      stop() {
        clearInterval(heartbeat);
        attached.detach();
      },
    };
    services.state.set('users', state);
  },
  stop(services: Services) {
    (services.state.get('users') as UsersState | undefined)?.stop();
  },
};
