import type { Services } from '../services.js';

/**
 * What profiles ask the social graph and the game, which sit above them, as hooks the composition root
 * registers (src/hooks.ts: the friends answer them).
 */
export interface UsersHooks {
  /** The viewer's relation to each other user, as `friendship` shows it (see friends/relations.ts). */
  friendshipValues(services: Services, viewerId: number, otherIds: number[]): Promise<Map<number, number>>;
  /** The same as a function of the other user's id; only `otherIds` may be asked about. */
  friendshipLookup(services: Services, viewerId: number, otherIds: number[]): Promise<(otherId: number) => number>;
  /** The live game each of these users plays, as `current_game` shows it (the game answers it). */
  currentGames(services: Services, userIds: number[]): Promise<Map<number, CurrentGame>>;
}

/** A live game as a profile names it. */
export interface CurrentGame {
  gs_id: string;
  gs_game_id: number;
}
