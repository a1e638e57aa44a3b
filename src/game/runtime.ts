import type { Runtime, Services } from '../services.js';
import { GameFeed } from './feed.js';
import { packetsOf } from './play.js';
import { startTimers } from './timers.js';

/** The game server's per-process state: the live packet stream of the games watched here, and the turn timers. */
export interface GameRuntime extends Runtime {
  feed: GameFeed;
  /** Starts what needs every other capability in place (the bus subscription). */
  start(services: Services): Promise<void>;
}

export function createGameRuntime(): GameRuntime {
  let feed: GameFeed | undefined;
  let stopTimers: (() => void) | undefined;
  return {
    get feed(): GameFeed {
      if (!feed) throw new Error('the game runtime has not started');
      return feed;
    },
    async start(services: Services) {
      feed = new GameFeed(services, packetsOf);
      await feed.start();
      stopTimers = startTimers(services);
    },
    stop() {
      stopTimers?.();
      feed?.stop();
    },
  };
}
