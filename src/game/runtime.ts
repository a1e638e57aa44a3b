import type { Runtime, Services } from '../services.js';
import { GAME_PACKETS, GameFeed } from './feed.js';
import { packetsOf } from './play.js';
import { GameStates } from './states.js';
import { startTimers } from './timers.js';

/** A game's state not played for this long leaves the process's memory (it is rebuilt when played again). */
export const stateIdleMs = 10 * 60_000;

/** The game server's per-process state: the live packet stream of the games watched here, the engine states of the games played here, and the turn timers. */
export interface GameRuntime extends Runtime {
  feed: GameFeed;
  states: GameStates;
  /** Starts what needs every other capability in place (the bus subscription). */
  start(services: Services): Promise<void>;
}

export function createGameRuntime(): GameRuntime {
  let feed: GameFeed | undefined;
  let stopTimers: (() => void) | undefined;
  let states: GameStates | undefined;
  let stopHearing: (() => void) | undefined;
  return {
    get states(): GameStates {
      if (!states) throw new Error('the game runtime has not started');
      return states;
    },
    get feed(): GameFeed {
      if (!feed) throw new Error('the game runtime has not started');
      return feed;
    },
    async start(services: Services) {
      const kept = (states = new GameStates(services.config.games.stateCacheSize, stateIdleMs));
      // Packet number n is the state after n stored actions: a state kept here at an earlier one is stale.
      stopHearing = services.bus.subscribe(GAME_PACKETS, (message) => {
        if (typeof message?.game_id === 'number' && typeof message.first === 'number' && Array.isArray(message.packets))
          kept.movedOn(message.game_id, message.first + message.packets.length - 1);
      });
      feed = new GameFeed(services, packetsOf);
      await feed.start();
      stopTimers = startTimers(services);
    },
    stop() {
      stopTimers?.();
      stopHearing?.();
      feed?.stop();
      states?.clear();
    },
  };
}
