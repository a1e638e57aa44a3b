/**
 * Finished games as world files carry them: the setup a game was started from and its actions,
 * checked by playing them again, and the board a game is played on when the file names none.
 */
import { act, classicBoard, createGame, timeout, type Action, type BoardConfig, type GameOptions } from './engine/index.js';
import type { StoredPlayer } from './players.js';

export { classicBoard };

/** A finished game's setup and actions, as stored (times in milliseconds; a null user for a timeout). */
export interface FinishedGame {
  config: BoardConfig;
  players: StoredPlayer[];
  options: Partial<GameOptions>;
  seed: string;
  tsStart: number;
  winner: number;
  actions: { user_id: number | null; action: Action; ts: number }[];
}

/**
 * Plays the game again from its setup: what is wrong with it (the path of the entry at fault,
 * from the game's own, and why), or undefined when its actions end it with its winner.
 */
export function finishedGameProblem(game: FinishedGame): string | undefined {
  let state;
  try {
    state = createGame({
      config: game.config,
      players: game.players.map(({ computer: _computer, ...setup }) => setup),
      seed: game.seed,
      now: game.tsStart,
      options: game.options,
    }).game;
  } catch (error) {
    return `: the game cannot start from it: ${(error as Error).message}`;
  }
  for (const [index, entry] of game.actions.entries()) {
    if (state.step.kind === 'over') return `.actions[${index}]: the game was over before it`;
    try {
      if (entry.user_id === null) {
        if (timeout(state, entry.ts) === null) return `.actions[${index}]: no timeout falls due at ${entry.ts}`;
      } else act(state, entry.user_id, entry.action, entry.ts);
    } catch (error) {
      return `.actions[${index}]: the game refuses it: ${(error as Error).message}`;
    }
  }
  if (state.step.kind !== 'over') return `.actions: the game is not over after its ${game.actions.length} actions`;
  if (state.winner !== game.winner) return `.winner_user_id: its actions make user ${state.winner} the winner, not ${game.winner}`;
  return undefined;
}
