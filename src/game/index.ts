import type { Domain } from '../api/method.js';
import { gameAction, gamesCreateVsComputer, gamesGetReplay, gamesMy } from './methods.js';

/** The classic board game: games against the computer, their actions, replays and the caller's list. */
export const gameDomain: Domain = {
  name: 'game',
  methods: [gamesCreateVsComputer, gameAction, gamesGetReplay, gamesMy],
};
