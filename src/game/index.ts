import type { Domain } from '../api/method.js';
import { gameAction, gamesCreateVsComputer, gamesGetReplay, gamesMy, gamesResolve } from './methods.js';
import { registerGameSocket } from './socket.js';

/** The classic board game: live games, games against the computer, their actions, replays and the caller's list. */
export const gameDomain: Domain = {
  name: 'game',
  methods: [gamesCreateVsComputer, gameAction, gamesGetReplay, gamesMy, gamesResolve],
  routes: registerGameSocket,
};

// live.ts
export { alreadyInGame, gameServerId, listLiveGames, liveGamesOf, startGame, type LiveGameEntry, type NewLiveGame } from './live.js';
// engine
export type { GameOptions } from './engine/index.js';
// runtime.ts
export { createGameRuntime, type GameRuntime } from './runtime.js';
// results.ts
export { seasonAt, seasonSpan, type SeasonSettings } from './results.js';
// hooks.ts
export type { GameEndEffects, GameHooks, GameResult } from './hooks.js';
// finished.ts
export { classicBoard, finishedGameProblem, type FinishedGame } from './finished.js';
