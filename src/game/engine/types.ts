import type { BoardConfig } from './config.js';
import type { RandomSource } from './random.js';

/** The actions a player sends (the names of the game SDK's `turn.action.list`), and `leave`. */
export type ActionType =
  | 'roll-dices'
  | 'purchase'
  | 'purchase.reject'
  | 'auction.put'
  | 'auction.bid'
  | 'auction.reject'
  | 'rent.pay'
  | 'bank.fee.pay'
  | 'jail.release.pay'
  | 'level.build'
  | 'level.sell'
  | 'mortgage.put'
  | 'mortgage.buyback'
  | 'contract.send'
  | 'contract.accept'
  | 'contract.reject';

export const actionTypes: readonly ActionType[] = [
  'roll-dices',
  'purchase',
  'purchase.reject',
  'auction.put',
  'auction.bid',
  'auction.reject',
  'rent.pay',
  'bank.fee.pay',
  'jail.release.pay',
  'level.build',
  'level.sell',
  'mortgage.put',
  'mortgage.buyback',
  'contract.send',
  'contract.accept',
  'contract.reject',
];

export interface ContractSide {
  user_id: number;
  field_ids: number[];
  cash: number;
}

/** What a player sends: an action of the list (with its field or contract), or `leave` (giving up). */
export type Action =
  | { type: Exclude<ActionType, 'level.build' | 'level.sell' | 'mortgage.put' | 'mortgage.buyback' | 'contract.send'> }
  | { type: 'level.build' | 'level.sell' | 'mortgage.put' | 'mortgage.buyback'; field_id: number }
  | { type: 'contract.send'; user_id_to: number; give: { field_ids: number[]; cash: number }; take: { field_ids: number[]; cash: number } }
  | { type: 'leave' };

export interface EquippedCard {
  field_id: number;
  item_proto_id: number;
  rent_multiplier: number;
}

export interface PlayerSetup {
  user_id: number;
  team?: 0 | 1;
  is_vip: 0 | 1;
  is_loan_available: 0 | 1;
  equipment: { cards: EquippedCard[]; generator?: { item_proto_id: number }; joke?: { item_proto_id: number } };
}

export interface GameOptions {
  /** Cash each player starts with. */
  start_cash: number;
  /** Time a player has for each expected action, in milliseconds (default: the config's roll_dices timer). */
  action_ms: number;
  /** Consecutive timeouts after which a player is put out of the game (bankrupt to the bank). */
  timeouts_to_leave: number;
  /** Contracts a player may send in one turn. */
  contracts_per_turn: number;
}

export interface PlayerState {
  user_id: number;
  status: 0 | -1;
  position: number;
  cash: number;
  score: number;
  jail?: { roll_double_attempts: number };
  timeouts: number;
}

export interface FieldState {
  owner_user_id: number;
  level: number;
  mortgage?: { round_until?: number };
}

export type Step =
  | { kind: 'roll' }
  | { kind: 'buy'; field_id: number }
  | { kind: 'auction'; field_id: number; bid: number; leader: number | null; rejected: number[]; bidder: number; order: number[] }
  | { kind: 'pay'; reason: 'rent' | 'fee' | 'jail'; amount: number; to: number | null; field_id?: number; move_after?: number }
  | { kind: 'contract'; initiator: ContractSide; responder: ContractSide }
  | { kind: 'over' };

/** An event of the game SDK's version-2 packets. */
export type GameEvent = { id: string; type: string } & Record<string, unknown>;

export interface Packet {
  /** The packet version (the game SDK's M1LiveDemo reads a packet without it as version 1). */
  v: 2;
  setup?: Record<string, unknown>;
  events: GameEvent[];
  status: Record<string, unknown>;
  time: { ts_start: number; ts_now: number; inactive: number };
}

export interface Game {
  config: BoardConfig;
  setupPlayers: PlayerSetup[];
  options: GameOptions;
  random: RandomSource;
  seed: string;
  seedHash: string;
  players: PlayerState[];
  fields: Map<number, FieldState>;
  round: number;
  turn: number;
  step: Step;
  rolledDouble: boolean;
  doublesInRow: number;
  lastDiceSum: number;
  builtThisTurn: number[];
  mortgagedThisTurn: number[];
  contractsSent: number;
  tsStart: number;
  now: number;
  deadline: number | null;
  eventCount: number;
  /** What the bank has taken in minus what it has paid out: with the players' cash, constant. */
  bank: number;
  winner: number | null;
  events: GameEvent[];
}
