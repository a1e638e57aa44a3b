/**
 * Recomputes players and fields from a game's `setup` and its events alone, as a viewer of the
 * packets would: the check that the events say everything that changed.
 */
import { buybackCost, jailFieldId, levelCost, levelSellValue, mortgageValue, type BoardConfig } from './config.js';
import type { GameEvent, PlayerState } from './types.js';

/** A player as the events show them: everything of the engine's but its count of timeouts. */
export type ReplayPlayer = Omit<PlayerState, 'timeouts'>;

export interface ReplayField {
  field_id: number;
  owner_user_id: number;
  level: number;
  mortgaged: boolean;
}

export interface ReplayState {
  config: BoardConfig;
  players: Map<number, ReplayPlayer>;
  fields: Map<number, ReplayField>;
  /** Cash the bank took in minus what it paid out. */
  bank: number;
  over: boolean;
  winner?: number;
  seed?: string;
  /** The last roll's distance, the position a move without another event leads to. */
  lastRoll?: { user_id: number; sum: number };
}

export function startReplay(config: BoardConfig, players: { user_id: number }[], startCash: number): ReplayState {
  return {
    config,
    players: new Map(players.map((p) => [p.user_id, { user_id: p.user_id, status: 0, position: 0, cash: startCash, score: 0 }])),
    fields: new Map(),
    bank: 0,
    over: false,
  };
}

function move(state: ReplayState, userId: number, amount: number): void {
  state.players.get(userId)!.cash += amount;
  state.bank -= amount;
}

function num(event: GameEvent, key: string): number {
  const value = event[key];
  if (typeof value !== 'number') throw new Error(`event ${event.id} (${event.type}) has no number ${key}`);
  return value;
}

/** Applies the events of one packet, in order. */
export function applyEvents(state: ReplayState, events: GameEvent[]): void {
  const config = state.config;
  const size = config.fields.length;
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    const userId = event.user_id as number;
    const player = state.players.get(userId);
    switch (event.type) {
      case 'roll-dices': {
        const dices = event.dices as number[];
        const sum = dices.reduce((a, b) => a + b, 0);
        state.lastRoll = { user_id: userId, sum };
        const next = events[i + 1]?.type;
        if (!player!.jail && next !== 'jail.put.double') player!.position = (player!.position + sum) % size;
        break;
      }
      case 'roll-dices.jail.success':
        player!.jail = undefined;
        player!.position = (player!.position + state.lastRoll!.sum) % size;
        break;
      case 'roll-dices.jail.fail':
        player!.jail!.roll_double_attempts += 1;
        break;
      case 'start.income':
        move(state, userId, config.mechanics.start.income_amount);
        break;
      case 'start.bonus':
        move(state, userId, config.mechanics.start.bonus_amount ?? 0);
        break;
      case 'purchase':
        move(state, userId, -num(event, 'price'));
        state.fields.set(num(event, 'field_id'), { field_id: num(event, 'field_id'), owner_user_id: userId, level: 0, mortgaged: false });
        break;
      case 'auction.win':
        move(state, userId, -num(event, 'price'));
        state.fields.set(num(event, 'field_id'), { field_id: num(event, 'field_id'), owner_user_id: userId, level: 0, mortgaged: false });
        break;
      case 'rent.pay.complete': {
        const amount = num(event, 'amount');
        const received = typeof event.amount_received === 'number' ? event.amount_received : amount;
        move(state, userId, -amount);
        move(state, num(event, 'user_id_receiver'), received);
        state.players.get(num(event, 'user_id_receiver'))!.score += received;
        break;
      }
      case 'bank.fee.pay':
        move(state, userId, -num(event, 'amount'));
        break;
      case 'bank.income':
        move(state, userId, num(event, 'amount'));
        break;
      case 'jail.put':
      case 'jail.put.double':
        player!.position = jailFieldId(config);
        player!.jail = { roll_double_attempts: 0 };
        break;
      case 'jail.release.pay':
        move(state, userId, -config.mechanics.jail.release_fee);
        break;
      case 'jail.release':
        player!.jail = undefined;
        if (typeof event.position_after === 'number') player!.position = event.position_after;
        break;
      case 'level.build': {
        const id = num(event, 'field_id');
        state.fields.get(id)!.level += 1;
        move(state, userId, -levelCost(config, id));
        break;
      }
      case 'level.sell': {
        const id = num(event, 'field_id');
        state.fields.get(id)!.level -= 1;
        move(state, userId, levelSellValue(config, id));
        break;
      }
      case 'mortgage.put': {
        const id = num(event, 'field_id');
        state.fields.get(id)!.mortgaged = true;
        move(state, userId, mortgageValue(config, id));
        break;
      }
      case 'mortgage.buyback': {
        const id = num(event, 'field_id');
        state.fields.get(id)!.mortgaged = false;
        move(state, userId, -buybackCost(config, id));
        break;
      }
      case 'mortgage.expire':
        state.fields.delete(num(event, 'field_id'));
        break;
      case 'contract.accept': {
        const [initiator, responder] = event.contract as { user_id: number; field_ids: number[]; cash: number }[];
        for (const id of initiator!.field_ids) state.fields.get(id)!.owner_user_id = responder!.user_id;
        for (const id of responder!.field_ids) state.fields.get(id)!.owner_user_id = initiator!.user_id;
        state.players.get(initiator!.user_id)!.cash += responder!.cash - initiator!.cash;
        state.players.get(responder!.user_id)!.cash += initiator!.cash - responder!.cash;
        break;
      }
      case 'chance': {
        const card = config.mechanics.chance!.cards[num(event, 'chance_index')]!;
        if (card.type === 'income') move(state, userId, (event.data as { amount: number }).amount);
        if (card.type === 'goto.jail') {
          player!.position = jailFieldId(config);
          player!.jail = { roll_double_attempts: 0 };
        }
        if (card.type === 'goto.start') player!.position = 0;
        break;
      }
      case 'bankrupt': {
        const creditor = num(event, 'user_id_bankrupt');
        const cash = player!.cash;
        if (creditor === 0) state.bank += cash;
        else state.players.get(creditor)!.cash += cash;
        player!.cash = 0;
        player!.status = -1;
        player!.jail = undefined;
        for (const [id, field] of state.fields) {
          if (field.owner_user_id !== userId) continue;
          if (creditor === 0) state.fields.delete(id);
          else field.owner_user_id = creditor;
        }
        break;
      }
      case 'game-over':
        state.over = true;
        state.winner = event.user_id_winner as number;
        state.seed = event.seed as string;
        break;
      default:
        // offers, pending payments, bids, rejections, visits: announcements that move nothing
        break;
    }
  }
}
