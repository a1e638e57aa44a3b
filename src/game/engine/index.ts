export { classicBoard } from './boards.js';
export { computerAction } from './computer-player.js';
export * from './config.js';
export { act, createGame, defaultOptions, expected, GameActionError, setupOf, statusOf, timeout, type NewGame } from './engine.js';
export { seedCommitment, seededRandom, type RandomSource } from './random.js';
export { applyEvents, startReplay, type ReplayState } from './replay.js';
export * from './types.js';
