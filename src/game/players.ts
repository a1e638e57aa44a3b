import { randomBytes } from 'node:crypto';
import type { PlayerSetup } from './engine/index.js';

/** The computer players' user ids: below every account's. */
export const computerUserIds = [-1, -2, -3, -4, -5, -6, -7];

/** A seat as stored: the engine's setup, marked when the built-in computer plays it. */
export interface StoredPlayer extends PlayerSetup {
  computer?: 1;
}

/** A game's secret seed: committed to (its hash in `setup`) at the start, revealed at the end. */
export function newSeed(): string {
  return randomBytes(16).toString('hex');
}
