import type { Executor } from '../db/connection.js';
import type { Services } from '../services.js';

/** A finished game as its end counts it: the human players (in seat order), the winner and the experience each earned. */
export interface GameResult {
  gameId: number;
  /** Milliseconds. */
  tsEnd: number;
  winner: number;
  players: readonly number[];
  xp: ReadonlyMap<number, number>;
}

/**
 * How the domains above the game react to a game's end, as hooks the composition root
 * registers (src/hooks.ts: the missions answer them). The game calls the first inside the
 * transaction that ends the game, so that what the result earns (missions' progress and
 * rewards, the week's and the season's standings) is counted with it or not at all, and the
 * second with what the first answered once that transaction has committed.
 */
export interface GameHooks {
  /** In the game's end transaction: counts the result; answers what to announce after the commit. */
  gameEnded(services: Services, trx: Executor, result: GameResult): Promise<GameEndEffects>;
  /** After the commit: tells the players what the end changed (balances, inventories). */
  announceGameEnded(services: Services, effects: GameEndEffects): Promise<void>;
}

/** What a game's end changed beyond the game, to announce once committed: balances in kopecks, and users whose inventory changed. */
export interface GameEndEffects {
  balances: Map<number, number>;
  inventories: number[];
}
