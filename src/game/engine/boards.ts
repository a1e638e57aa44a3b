import classic from './classic-board.json' with { type: 'json' };
import { checkConfig, type BoardConfig } from './config.js';

function board(config: unknown): BoardConfig {
  checkConfig(config);
  return config;
}

/** The classic board every game uses unless another config is given. */
export const classicBoard: BoardConfig = board(classic);
