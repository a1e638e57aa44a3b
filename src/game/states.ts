/**
 * The engine states of live games held by this process, so that a call does not rebuild its
 * game from every stored action. Each state is kept with the number of stored actions it is the
 * state after (games.actions, the game's version): a call that holds the game's row takes the
 * state only when the stored number is the same, and rebuilds from the database when another
 * process moved the game on. A state is taken out while a call plays on it and put back only
 * once that call has committed, so a refused action or a failed transaction never leaves a state
 * the database does not have. Bounded: at most `capacity` games (the least recently played go
 * first), none idle longer than `idleMs`, none that is over, none another process has moved on
 * (told by the packets it publishes).
 */
import type { Game } from './engine/index.js';

interface Entry {
  game: Game;
  actions: number;
  usedAt: number;
}

export interface GameStateCounts {
  /** Calls that found the state at their version. */
  hits: number;
  /** Calls that rebuilt their game: not held here, or held at another version. */
  rebuilds: number;
  /** Games held now. */
  size: number;
}

export class GameStates {
  /** In the order of their last use, the oldest first. */
  private readonly entries = new Map<number, Entry>();
  private hits = 0;
  private rebuilds = 0;

  constructor(
    private readonly capacity: number,
    private readonly idleMs: number,
  ) {}

  /** The state of the game after `actions` stored actions, taken out; undefined when it must be rebuilt. */
  take(gameId: number, actions: number): Game | undefined {
    const entry = this.entries.get(gameId);
    if (entry) this.entries.delete(gameId);
    if (!entry || entry.actions !== actions) {
      this.rebuilds += 1;
      return undefined;
    }
    this.hits += 1;
    return entry.game;
  }

  /** Keeps the state of the game after `actions` committed actions (a game over is not kept). */
  put(gameId: number, actions: number, game: Game, now: number): void {
    this.entries.delete(gameId);
    if (this.capacity === 0 || game.step.kind === 'over') return;
    this.entries.set(gameId, { game, actions, usedAt: now });
    for (const [id, entry] of this.entries) {
      if (this.entries.size <= this.capacity && now - entry.usedAt < this.idleMs) break;
      this.entries.delete(id);
    }
  }

  /**
   * A process committed the game up to `actions` stored actions: a state kept at an earlier
   * version is of no use any more (the game is rebuilt when played here next), and leaves memory.
   */
  movedOn(gameId: number, actions: number): void {
    const entry = this.entries.get(gameId);
    if (entry && entry.actions < actions) this.entries.delete(gameId);
  }

  counts(): GameStateCounts {
    return { hits: this.hits, rebuilds: this.rebuilds, size: this.entries.size };
  }

  clear(): void {
    this.entries.clear();
  }
}
