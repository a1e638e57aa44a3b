import type { Domain } from '../api/method.js';
import { gameAction, gamesCreateVsComputer, gamesGetReplay, gamesMy } from './methods.js';

/** The classic board game: live games, games against the computer, their actions, replays and the caller's list. */
export const gameDomain: Domain = {
  name: 'game',
  methods: [gamesCreateVsComputer, gameAction, gamesGetReplay, gamesMy],
};

// live.ts
export { alreadyInGame, gameServerId, listLiveGames, liveGamesOf, startGame, type LiveGameEntry, type NewLiveGame } from './live.js';
// engine
export type { GameOptions } from './engine/index.js';
