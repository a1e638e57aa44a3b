import type { Domain } from '../api/method.js';
import { gchatGet, gchatSend } from './methods.js';
import { CHAT_STATE_KEY, ChatRuntime } from './runtime.js';

export const chatDomain: Domain = {
  name: 'chat',
  methods: [gchatGet, gchatSend],
  async start(services) {
    const runtime = new ChatRuntime(services);
    services.state.set(CHAT_STATE_KEY, runtime);
    await runtime.start();
  },
  stop(services) {
    (services.state.get(CHAT_STATE_KEY) as ChatRuntime | undefined)?.stop();
  },
};
