import type { Services } from '../services.js';

/**
 * What profiles ask the social graph, which sits above them, as hooks the composition root
 * registers (src/hooks.ts: the friends answer them).
 */
export interface UsersHooks {
  /** The viewer's relation to each other user, as `friendship` shows it (see friends/relations.ts). */
  friendshipValues(services: Services, viewerId: number, otherIds: number[]): Promise<Map<number, number>>;
  /** The same as a function of the other user's id; only `otherIds` may be asked about. */
  friendshipLookup(services: Services, viewerId: number, otherIds: number[]): Promise<(otherId: number) => number>;
}
