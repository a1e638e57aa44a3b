import type { Runtime, Services } from '../services.js';
import { GameFeed } from './feed.js';
import { packetsOf } from './play.js';

/** The game server's per-process state: the live packet stream of the games watched here. */
export interface GameRuntime extends Runtime {
  feed: GameFeed;
  /** Starts what needs every other capability in place (the bus subscription). */
  start(services: Services): Promise<void>;
}

export function createGameRuntime(): GameRuntime {
  let feed: GameFeed | undefined;
  return {
    get feed(): GameFeed {
      if (!feed) throw new Error('the game runtime has not started');
      return feed;
    },
    async start(services: Services) {
      feed = new GameFeed(services, packetsOf);
      await feed.start();
    },
    stop() {
      feed?.stop();
    },
  };
}
