/**
 * The classic game: pure and deterministic given its random source. Every call that changes the
 * game answers the packet it produced (the game SDK's version-2 shape); a refused action throws
 * GameActionError and changes nothing (every check runs before the first change).
 */
import {
  buybackCost,
  buyPrice,
  checkConfig,
  fieldAmount,
  groupFields,
  jailFieldId,
  levelCost,
  levelSellValue,
  maxLevel,
  mortgageValue,
  type BoardConfig,
  type ChanceCard,
} from './config.js';
import { seedCommitment, seededRandom, type RandomSource } from './random.js';
import {
  alivePlayers,
  buildRefusal,
  buybackRefusal,
  canRaiseCash,
  mortgageRefusal,
  ownedFields,
  playerById,
  rentOf,
  sellRefusal,
  tradable,
  turnPlayer,
} from './rules.js';
import type { Action, ActionType, ContractSide, Game, GameEvent, GameOptions, Packet, PlayerSetup, PlayerState, Step } from './types.js';

/** An action the game refuses: not expected now, not this player's, or against the rules. */
export class GameActionError extends Error {}

export const defaultOptions = { start_cash: 15000, timeouts_to_leave: 3, contracts_per_turn: 3 } as const;

export interface NewGame {
  config: BoardConfig;
  players: PlayerSetup[];
  seed: string;
  now: number;
  options?: Partial<GameOptions>;
  /** Replaces the seed's random source (tests); the seed is still committed to and revealed. */
  random?: RandomSource;
}

const maxContractFields = 40;

export function createGame(input: NewGame): { game: Game; packet: Packet } {
  checkConfig(input.config);
  const ids = input.players.map((p) => p.user_id);
  if (ids.length < 2 || ids.length > 8) throw new GameActionError('a game has 2 to 8 players');
  if (new Set(ids).size !== ids.length) throw new GameActionError('a player can be in a game once');
  const options: GameOptions = {
    start_cash: input.options?.start_cash ?? defaultOptions.start_cash,
    action_ms: input.options?.action_ms ?? input.config.timers.roll_dices * 1000,
    timeouts_to_leave: input.options?.timeouts_to_leave ?? defaultOptions.timeouts_to_leave,
    contracts_per_turn: input.options?.contracts_per_turn ?? defaultOptions.contracts_per_turn,
  };
  const game: Game = {
    config: input.config,
    setupPlayers: input.players,
    options,
    random: input.random ?? seededRandom(input.seed),
    seed: input.seed,
    seedHash: seedCommitment(input.seed),
    players: input.players.map((p) => ({ user_id: p.user_id, status: 0, position: 0, cash: options.start_cash, score: 0, timeouts: 0 })),
    fields: new Map(),
    round: 1,
    turn: 0,
    step: { kind: 'roll' },
    rolledDouble: false,
    doublesInRow: 0,
    lastDiceSum: 0,
    builtThisTurn: [],
    mortgagedThisTurn: [],
    contractsSent: 0,
    tsStart: input.now,
    now: input.now,
    deadline: input.now + options.action_ms,
    eventCount: 0,
    bank: 0,
    winner: null,
    events: [],
  };
  const packet = takePacket(game);
  packet.setup = setupOf(game);
  return { game, packet: { v: 2, setup: packet.setup, events: packet.events, status: packet.status, time: packet.time } };
}

export function setupOf(game: Game): Record<string, unknown> {
  return {
    config: game.config,
    flags: { game_mode: 1, game_submode: 0, game_2x2: 0 },
    players: game.setupPlayers,
    random: { algorithm: 'sha256-counter', seed_sha256: game.seedHash },
  };
}

/** Who is expected to act, and the actions they may send. */
export function expected(game: Game): { user_id: number | null; list: ActionType[] } {
  const step = game.step;
  if (step.kind === 'over') return { user_id: null, list: [] };
  const player = turnPlayer(game);
  const list: ActionType[] = [];
  const manage = (withBuild: boolean): void => {
    const own = ownedFields(game, player.user_id);
    if (withBuild && own.some((id) => buildRefusal(game, player.user_id, id) === null)) list.push('level.build');
    if (own.some((id) => sellRefusal(game, player.user_id, id) === null)) list.push('level.sell');
    if (own.some((id) => mortgageRefusal(game, player.user_id, id) === null)) list.push('mortgage.put');
    if (withBuild && own.some((id) => buybackRefusal(game, player.user_id, id) === null)) list.push('mortgage.buyback');
  };
  switch (step.kind) {
    case 'roll':
      list.push('roll-dices');
      if (player.jail && player.cash >= game.config.mechanics.jail.release_fee) list.push('jail.release.pay');
      if (game.contractsSent < game.options.contracts_per_turn && alivePlayers(game).length > 1) list.push('contract.send');
      manage(true);
      return { user_id: player.user_id, list };
    case 'buy':
      if (player.cash >= buyPrice(game.config, step.field_id)) list.push('purchase');
      list.push(game.config.mechanics.auction ? 'auction.put' : 'purchase.reject');
      manage(false);
      return { user_id: player.user_id, list };
    case 'auction': {
      const bidder = playerById(game, step.bidder)!;
      if (bidder.cash >= nextBid(game, step)) list.push('auction.bid');
      list.push('auction.reject');
      return { user_id: step.bidder, list };
    }
    case 'pay':
      list.push(payActionOf(step));
      manage(false);
      return { user_id: player.user_id, list };
    case 'contract':
      return { user_id: step.responder.user_id, list: ['contract.accept', 'contract.reject'] };
  }
}

function payActionOf(step: Extract<Step, { kind: 'pay' }>): 'rent.pay' | 'bank.fee.pay' | 'jail.release.pay' {
  return step.reason === 'rent' ? 'rent.pay' : step.reason === 'fee' ? 'bank.fee.pay' : 'jail.release.pay';
}

function nextBid(game: Game, step: Extract<Step, { kind: 'auction' }>): number {
  return step.leader === null ? step.bid : step.bid + game.config.mechanics.auction!.bid_increment;
}

function emit(game: Game, type: string, data: Record<string, unknown> = {}): void {
  game.eventCount += 1;
  game.events.push({ id: String(game.eventCount), type, ...data } as GameEvent);
}

function setStep(game: Game, step: Step): void {
  game.step = step;
}

/** Plays `action` for `userId` at time `now`; throws GameActionError (changing nothing) when it is refused. */
export function act(game: Game, userId: number, action: Action, now: number): Packet {
  if (game.step.kind === 'over') throw new GameActionError('the game is over');
  const player = playerById(game, userId);
  if (!player || player.status !== 0) throw new GameActionError('you are not playing in this game');
  if (action.type === 'leave') {
    game.now = Math.max(game.now, now);
    emit(game, 'leave', { user_id: userId, kicked: 0 });
    eliminate(game, player, creditorOnLeave(game, player));
    return finish(game, null);
  }
  const exp = expected(game);
  if (exp.user_id !== userId) throw new GameActionError('it is not your turn to act');
  if (!exp.list.includes(action.type))
    throw new GameActionError(`the action ${JSON.stringify(action.type)} is not expected now; expected: ${exp.list.join(', ')}`);
  const before = { step: game.step, actor: exp.user_id };
  const previousNow = game.now;
  game.now = Math.max(game.now, now);
  try {
    perform(game, player, action);
  } catch (error) {
    game.now = previousNow;
    throw error;
  }
  player.timeouts = 0;
  return finish(game, before);
}

/** When the action timer has run out, plays the default action for the player expected to act. */
export function timeout(game: Game, now: number): Packet | null {
  if (game.deadline === null || now < game.deadline || game.step.kind === 'over') return null;
  const exp = expected(game);
  const player = playerById(game, exp.user_id!)!;
  game.now = Math.max(game.now, now);
  player.timeouts += 1;
  if (player.timeouts >= game.options.timeouts_to_leave) {
    emit(game, 'leave', { user_id: player.user_id, kicked: 1 });
    eliminate(game, player, creditorOnLeave(game, player));
    return finish(game, null);
  }
  const step = game.step;
  switch (step.kind) {
    case 'roll':
      perform(game, player, { type: 'roll-dices' });
      break;
    case 'buy':
      perform(game, player, { type: game.config.mechanics.auction ? 'auction.put' : 'purchase.reject' });
      break;
    case 'auction':
      perform(game, player, { type: 'auction.reject' });
      break;
    case 'pay':
      raiseCash(game, player, step.amount);
      perform(game, player, { type: payActionOf(step) });
      break;
    case 'contract':
      emit(game, 'contract.reject', { user_id: player.user_id, timeout: 1 });
      setStep(game, { kind: 'roll' });
      break;
  }
  return finish(game, null);
}

function finish(game: Game, before: { step: Step; actor: number | null } | null): Packet {
  const exp = expected(game);
  if (game.step.kind === 'over') game.deadline = null;
  else if (!before || before.step !== game.step || before.actor !== exp.user_id) game.deadline = game.now + game.options.action_ms;
  return takePacket(game);
}

function takePacket(game: Game): Packet {
  const events = game.events;
  game.events = [];
  return { v: 2, events, status: statusOf(game), time: { ts_start: game.tsStart, ts_now: game.now, inactive: 0 } };
}

/** Sells levels, then mortgages fields, until the player has `amount` or nothing is left to raise. */
function raiseCash(game: Game, player: PlayerState, amount: number): void {
  while (player.cash < amount) {
    const own = ownedFields(game, player.user_id);
    const sell = own.find((id) => sellRefusal(game, player.user_id, id) === null);
    if (sell !== undefined) {
      perform(game, player, { type: 'level.sell', field_id: sell });
      continue;
    }
    const mortgage = own.find((id) => mortgageRefusal(game, player.user_id, id) === null);
    if (mortgage === undefined) return;
    perform(game, player, { type: 'mortgage.put', field_id: mortgage });
  }
}

function fieldParam(game: Game, action: Action): number {
  const id = (action as { field_id?: unknown }).field_id;
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= game.config.fields.length)
    throw new GameActionError(`field_id must be a field of the board (0 to ${game.config.fields.length - 1})`);
  return id;
}

function refuse(reason: string | null): void {
  if (reason !== null) throw new GameActionError(reason);
}

function perform(game: Game, player: PlayerState, action: Action): void {
  const step = game.step;
  const config = game.config;
  switch (action.type) {
    case 'roll-dices':
      return roll(game, player);
    case 'purchase': {
      const s = step as Extract<Step, { kind: 'buy' }>;
      const price = buyPrice(config, s.field_id);
      emit(game, 'purchase', { user_id: player.user_id, field_id: s.field_id, price });
      transfer(game, player, null, price);
      game.fields.set(s.field_id, { owner_user_id: player.user_id, level: 0 });
      return endMove(game);
    }
    case 'purchase.reject': {
      const s = step as Extract<Step, { kind: 'buy' }>;
      emit(game, 'purchase.reject', { user_id: player.user_id, field_id: s.field_id });
      return endMove(game);
    }
    case 'auction.put': {
      const s = step as Extract<Step, { kind: 'buy' }>;
      const price = buyPrice(config, s.field_id);
      const order = biddingOrder(game);
      emit(game, 'auction.put', { user_id: player.user_id, field_id: s.field_id, bid: price });
      if (order.length === 0) {
        emit(game, 'auction.cancel', { field_id: s.field_id });
        return endMove(game);
      }
      setStep(game, { kind: 'auction', field_id: s.field_id, bid: price, leader: null, rejected: [], bidder: order[0]!, order });
      return;
    }
    case 'auction.bid': {
      const s = step as Extract<Step, { kind: 'auction' }>;
      const bid = nextBid(game, s);
      if (player.cash < bid) throw new GameActionError('not enough cash for this bid');
      emit(game, 'auction.bid', { user_id: player.user_id, bid });
      setStep(game, { ...s, bid, leader: player.user_id });
      return advanceAuction(game);
    }
    case 'auction.reject': {
      const s = step as Extract<Step, { kind: 'auction' }>;
      emit(game, 'auction.reject', { user_id: player.user_id });
      setStep(game, { ...s, rejected: [...s.rejected, player.user_id] });
      return advanceAuction(game);
    }
    case 'rent.pay':
    case 'bank.fee.pay':
      return pay(game, player, step as Extract<Step, { kind: 'pay' }>);
    case 'jail.release.pay':
      if (step.kind === 'pay') return pay(game, player, step);
      if (player.cash < config.mechanics.jail.release_fee) throw new GameActionError('not enough cash');
      emit(game, 'jail.release.pay', { user_id: player.user_id });
      transfer(game, player, null, config.mechanics.jail.release_fee);
      emit(game, 'jail.release', { user_id: player.user_id });
      player.jail = undefined;
      return;
    case 'level.build': {
      const id = fieldParam(game, action);
      if (step.kind !== 'roll') throw new GameActionError('levels are built before rolling the dice');
      refuse(buildRefusal(game, player.user_id, id));
      emit(game, 'level.build', { user_id: player.user_id, field_id: id });
      transfer(game, player, null, levelCost(config, id));
      game.fields.get(id)!.level += 1;
      game.builtThisTurn.push(id);
      return;
    }
    case 'level.sell': {
      const id = fieldParam(game, action);
      refuse(sellRefusal(game, player.user_id, id));
      emit(game, 'level.sell', { user_id: player.user_id, field_id: id });
      transfer(game, null, player, levelSellValue(config, id));
      game.fields.get(id)!.level -= 1;
      return;
    }
    case 'mortgage.put': {
      const id = fieldParam(game, action);
      refuse(mortgageRefusal(game, player.user_id, id));
      emit(game, 'mortgage.put', { user_id: player.user_id, field_id: id });
      transfer(game, null, player, mortgageValue(config, id));
      const duration = config.mechanics.mortgage?.duration;
      game.fields.get(id)!.mortgage = duration === undefined ? {} : { round_until: game.round + duration };
      game.mortgagedThisTurn.push(id);
      return;
    }
    case 'mortgage.buyback': {
      const id = fieldParam(game, action);
      if (step.kind !== 'roll') throw new GameActionError('fields are bought back before rolling the dice');
      refuse(buybackRefusal(game, player.user_id, id));
      const cost = buybackCost(config, id);
      emit(game, 'mortgage.buyback', { user_id: player.user_id, field_id: id });
      transfer(game, player, null, cost);
      game.fields.get(id)!.mortgage = undefined;
      return;
    }
    case 'contract.send':
      return sendContract(game, player, action as Extract<Action, { type: 'contract.send' }>);
    case 'contract.accept': {
      const s = step as Extract<Step, { kind: 'contract' }>;
      const initiator = playerById(game, s.initiator.user_id)!;
      refuse(contractRefusal(game, s.initiator, s.responder));
      emit(game, 'contract.accept', { user_id: player.user_id, contract: [s.initiator, s.responder] });
      for (const id of s.initiator.field_ids) game.fields.get(id)!.owner_user_id = player.user_id;
      for (const id of s.responder.field_ids) game.fields.get(id)!.owner_user_id = initiator.user_id;
      transfer(game, initiator, player, s.initiator.cash);
      transfer(game, player, initiator, s.responder.cash);
      setStep(game, { kind: 'roll' });
      return;
    }
    case 'contract.reject':
      emit(game, 'contract.reject', { user_id: player.user_id, timeout: 0 });
      setStep(game, { kind: 'roll' });
      return;
    case 'leave':
      throw new GameActionError('leave is handled before the action list');
  }
}

/** Moves cash between two players, or between a player and the bank (null). */
function transfer(game: Game, from: PlayerState | null, to: PlayerState | null, amount: number): void {
  if (from) from.cash -= amount;
  else game.bank -= amount;
  if (to) to.cash += amount;
  else game.bank += amount;
}

function contractRefusal(game: Game, initiator: ContractSide, responder: ContractSide): string | null {
  for (const side of [initiator, responder]) {
    const p = playerById(game, side.user_id);
    if (!p || p.status !== 0) return 'both sides of a contract must be playing';
    if (!Number.isInteger(side.cash) || side.cash < 0 || side.cash > 1e9) return 'cash in a contract is a whole amount of 0 or more';
    if (p.cash < side.cash) return `player ${side.user_id} has not enough cash for this contract`;
    if (side.field_ids.length > maxContractFields) return `a contract moves at most ${maxContractFields} fields a side`;
    if (new Set(side.field_ids).size !== side.field_ids.length) return 'a field is named twice in the contract';
    for (const id of side.field_ids) {
      if (!Number.isInteger(id) || game.fields.get(id)?.owner_user_id !== side.user_id)
        return `field ${id} is not player ${side.user_id}'s to give`;
      if (!tradable(game, id)) return `field ${id} is in a monopoly with levels: sell them first`;
    }
  }
  if (initiator.field_ids.length + responder.field_ids.length === 0) return 'a contract moves at least one field';
  return null;
}

function sendContract(game: Game, player: PlayerState, action: Extract<Action, { type: 'contract.send' }>): void {
  const to = playerById(game, action.user_id_to);
  if (!to || to.status !== 0 || to.user_id === player.user_id) throw new GameActionError('user_id_to must be another player in the game');
  const side = (userId: number, part: unknown): ContractSide => {
    const p = (part ?? {}) as { field_ids?: unknown; cash?: unknown };
    const ids = p.field_ids ?? [];
    if (!Array.isArray(ids) || ids.length > maxContractFields || !ids.every((x) => typeof x === 'number'))
      throw new GameActionError(`field_ids must be a list of at most ${maxContractFields} field ids`);
    const cash = p.cash ?? 0;
    if (typeof cash !== 'number') throw new GameActionError('cash must be a number');
    return { user_id: userId, field_ids: [...ids].sort((a, b) => a - b), cash };
  };
  const initiator = side(player.user_id, action.give);
  const responder = side(to.user_id, action.take);
  refuse(contractRefusal(game, initiator, responder));
  emit(game, 'contract.send', { user_id: player.user_id, user_id_to: to.user_id });
  game.contractsSent += 1;
  setStep(game, { kind: 'contract', initiator, responder });
}

function biddingOrder(game: Game): number[] {
  const n = game.players.length;
  const order: number[] = [];
  for (let i = 1; i < n; i++) {
    const p = game.players[(game.turn + i) % n]!;
    if (p.status === 0) order.push(p.user_id);
  }
  return order;
}

function advanceAuction(game: Game): void {
  const s = game.step as Extract<Step, { kind: 'auction' }>;
  const at = s.order.indexOf(s.bidder);
  for (let i = 1; i <= s.order.length; i++) {
    const id = s.order[(at + i) % s.order.length]!;
    if (id !== s.leader && !s.rejected.includes(id) && playerById(game, id)!.status === 0) {
      setStep(game, { ...s, bidder: id });
      return;
    }
  }
  if (s.leader !== null) {
    const winner = playerById(game, s.leader)!;
    emit(game, 'auction.win', { user_id: winner.user_id, field_id: s.field_id, price: s.bid });
    transfer(game, winner, null, s.bid);
    game.fields.set(s.field_id, { owner_user_id: winner.user_id, level: 0 });
  } else {
    emit(game, 'auction.cancel', { field_id: s.field_id });
  }
  endMove(game);
}

function pay(game: Game, player: PlayerState, step: Extract<Step, { kind: 'pay' }>): void {
  if (player.cash < step.amount) {
    if (canRaiseCash(game, player.user_id))
      throw new GameActionError(`not enough cash (${player.cash} of ${step.amount}): sell levels or mortgage fields first`);
    eliminate(game, player, step.to);
    return;
  }
  const creditor = step.to === null ? null : playerById(game, step.to)!;
  if (step.reason === 'rent') {
    const received = step.amount - Math.floor(step.amount * rentTaxRate(game));
    emit(game, 'rent.pay.complete', {
      user_id: player.user_id,
      user_id_receiver: step.to,
      field_id: step.field_id,
      amount: step.amount,
      ...(received !== step.amount ? { amount_received: received } : {}),
    });
    transfer(game, player, creditor, received);
    transfer(game, player, null, step.amount - received);
    creditor!.score += received;
    return endMove(game);
  }
  if (step.reason === 'fee') {
    emit(game, 'bank.fee.pay', { user_id: player.user_id, amount: step.amount });
    transfer(game, player, null, step.amount);
    return endMove(game);
  }
  emit(game, 'jail.release.pay', { user_id: player.user_id });
  transfer(game, player, null, step.amount);
  player.jail = undefined;
  const n = game.config.fields.length;
  const target = (player.position + step.move_after!) % n;
  emit(game, 'jail.release', { user_id: player.user_id, position_after: target });
  const passed = player.position + step.move_after! >= n;
  player.position = target;
  if (passed) startIncome(game, player, target === 0);
  land(game, player);
}

function matchTime(game: Game): number {
  return game.now - game.tsStart;
}

function activeRule<T extends string>(
  game: Game,
  type: T,
): Extract<BoardConfig['mechanics']['time_rules'][number], { type: T }> | undefined {
  const t = matchTime(game);
  const rules = game.config.mechanics.time_rules.filter((r) => r.type === type && r.time <= t);
  return rules.sort((a, b) => b.time - a.time)[0] as never;
}

function rentTaxRate(game: Game): number {
  return activeRule(game, 'rent.tax')?.rate ?? 0;
}

function startIncome(game: Game, player: PlayerState, exact: boolean): void {
  if (activeRule(game, 'start.none')) return;
  const start = game.config.mechanics.start;
  emit(game, 'start.income', { user_id: player.user_id });
  transfer(game, null, player, start.income_amount);
  if (exact && (start.bonus_amount ?? 0) > 0) {
    emit(game, 'start.bonus', { user_id: player.user_id });
    transfer(game, null, player, start.bonus_amount!);
  }
}

function putInJail(game: Game, player: PlayerState): void {
  player.position = jailFieldId(game.config);
  player.jail = { roll_double_attempts: 0 };
  game.rolledDouble = false;
}

function roll(game: Game, player: PlayerState): void {
  const dice = [game.random.below(6) + 1, game.random.below(6) + 1] as const;
  const sum = dice[0] + dice[1];
  const double = dice[0] === dice[1];
  game.lastDiceSum = sum;
  emit(game, 'roll-dices', { user_id: player.user_id, dices: [...dice] });
  if (player.jail) {
    game.rolledDouble = false;
    if (double) {
      emit(game, 'roll-dices.jail.success', { user_id: player.user_id });
      player.jail = undefined;
      return move(game, player, sum);
    }
    emit(game, 'roll-dices.jail.fail', { user_id: player.user_id });
    player.jail.roll_double_attempts += 1;
    if (player.jail.roll_double_attempts >= (game.config.mechanics.jail.double_roll_attempt_limit ?? 3)) {
      setStep(game, { kind: 'pay', reason: 'jail', amount: game.config.mechanics.jail.release_fee, to: null, move_after: sum });
      return;
    }
    return endMove(game);
  }
  game.rolledDouble = double;
  if (double) {
    game.doublesInRow += 1;
    if (game.doublesInRow >= 3) {
      emit(game, 'jail.put.double', { user_id: player.user_id });
      putInJail(game, player);
      return endMove(game);
    }
  }
  move(game, player, sum);
}

function move(game: Game, player: PlayerState, distance: number): void {
  const n = game.config.fields.length;
  const to = (player.position + distance) % n;
  const passed = player.position + distance >= n;
  player.position = to;
  if (passed) startIncome(game, player, to === 0);
  land(game, player);
}

function land(game: Game, player: PlayerState): void {
  const id = player.position;
  const field = game.config.fields[id]!;
  switch (field.type) {
    case 'company': {
      const owned = game.fields.get(id);
      if (!owned) {
        emit(game, 'purchase.offer', { user_id: player.user_id, field_id: id });
        setStep(game, { kind: 'buy', field_id: id });
        return;
      }
      if (owned.owner_user_id === player.user_id) {
        emit(game, 'rent.zero.self', { user_id: player.user_id, field_id: id });
        return endMove(game);
      }
      if (owned.mortgage) {
        emit(game, 'rent.zero.mortgaged', { user_id: player.user_id, field_id: id });
        return endMove(game);
      }
      const amount = rentOf(game, id, owned, game.lastDiceSum);
      if (amount === 0) {
        emit(game, 'rent.zero', { user_id: player.user_id, field_id: id });
        return endMove(game);
      }
      emit(game, 'rent.pay', { user_id: player.user_id, field_id: id, amount });
      setStep(game, { kind: 'pay', reason: 'rent', amount, to: owned.owner_user_id, field_id: id });
      return;
    }
    case 'chance':
      return drawChance(game, player);
    case 'jail.goto':
      emit(game, 'jail.put', { user_id: player.user_id });
      putInJail(game, player);
      return endMove(game);
    case 'tax.income':
    case 'tax.luxury':
    case 'cash.pay':
      return charge(game, player, fieldAmount(game.config, id));
    case 'cash.receive': {
      const amount = fieldAmount(game.config, id);
      emit(game, 'bank.income', { user_id: player.user_id, amount });
      transfer(game, null, player, amount);
      return endMove(game);
    }
    case 'park':
      emit(game, 'park', { user_id: player.user_id });
      return endMove(game);
    case 'jail':
      emit(game, 'jail.visit', { user_id: player.user_id });
      return endMove(game);
    default:
      return endMove(game);
  }
}

function charge(game: Game, player: PlayerState, amount: number): void {
  if (amount <= 0) return endMove(game);
  emit(game, 'bank.fee', { user_id: player.user_id, amount });
  setStep(game, { kind: 'pay', reason: 'fee', amount, to: null });
}

function cardAmount(game: Game, range: { min: number; max: number; step: number }): number {
  return range.min + range.step * game.random.below(Math.floor((range.max - range.min) / range.step) + 1);
}

function drawChance(game: Game, player: PlayerState): void {
  const cards = game.config.mechanics.chance!.cards;
  const index = game.random.below(cards.length);
  const card: ChanceCard = cards[index]!;
  switch (card.type) {
    case 'income': {
      const amount = cardAmount(game, card.range);
      emit(game, 'chance', { user_id: player.user_id, chance_index: index, data: { amount } });
      transfer(game, null, player, amount);
      return endMove(game);
    }
    case 'expense': {
      const amount = cardAmount(game, card.range);
      emit(game, 'chance', { user_id: player.user_id, chance_index: index, data: { amount } });
      return charge(game, player, amount);
    }
    case 'repair': {
      let amount = 0;
      for (const id of ownedFields(game, player.user_id)) {
        const level = game.fields.get(id)!.level;
        if (level === 0) continue;
        amount += level >= maxLevel(game.config, id) ? card.cost.big : card.cost.small * level;
      }
      emit(game, 'chance', { user_id: player.user_id, chance_index: index, data: { amount } });
      return charge(game, player, amount);
    }
    case 'goto.jail':
      emit(game, 'chance', { user_id: player.user_id, chance_index: index });
      putInJail(game, player);
      return endMove(game);
    case 'goto.start':
      emit(game, 'chance', { user_id: player.user_id, chance_index: index });
      player.position = 0;
      startIncome(game, player, true);
      return endMove(game);
  }
}

/** The move is over: the same player rolls again after a double, otherwise the next player's turn begins. */
function endMove(game: Game): void {
  if (game.step.kind === 'over') return;
  const player = turnPlayer(game);
  if (player.status === 0 && game.rolledDouble && !player.jail) {
    game.rolledDouble = false;
    setStep(game, { kind: 'roll' });
    return;
  }
  nextTurn(game);
}

function nextTurn(game: Game): void {
  const n = game.players.length;
  let next = game.turn;
  for (let i = 1; i <= n; i++) {
    const candidate = (game.turn + i) % n;
    if (game.players[candidate]!.status === 0) {
      next = candidate;
      break;
    }
  }
  if (next <= game.turn) game.round += 1;
  game.turn = next;
  game.rolledDouble = false;
  game.doublesInRow = 0;
  game.builtThisTurn = [];
  game.mortgagedThisTurn = [];
  game.contractsSent = 0;
  setStep(game, { kind: 'roll' });
  const player = turnPlayer(game);
  for (const id of ownedFields(game, player.user_id)) {
    const until = game.fields.get(id)!.mortgage?.round_until;
    if (until !== undefined && game.round >= until) {
      emit(game, 'mortgage.expire', { user_id: player.user_id, field_id: id });
      game.fields.delete(id);
    }
  }
}

function creditorOnLeave(game: Game, player: PlayerState): number | null {
  const step = game.step;
  return step.kind === 'pay' && turnPlayer(game) === player ? step.to : null;
}

/** Puts a player out: their levels are sold, then their cash and fields go to the creditor, or to the bank. */
function eliminate(game: Game, player: PlayerState, creditorId: number | null): void {
  for (const id of ownedFields(game, player.user_id)) {
    const field = game.fields.get(id)!;
    while (field.level > 0) {
      emit(game, 'level.sell', { user_id: player.user_id, field_id: id });
      transfer(game, null, player, levelSellValue(game.config, id));
      field.level -= 1;
    }
  }
  const creditor = creditorId === null ? null : playerById(game, creditorId)!;
  emit(game, 'bankrupt', { user_id: player.user_id, user_id_bankrupt: creditorId ?? 0 });
  transfer(game, player, creditor, player.cash);
  for (const id of ownedFields(game, player.user_id)) {
    if (creditor) game.fields.get(id)!.owner_user_id = creditor.user_id;
    else game.fields.delete(id);
  }
  player.status = -1;
  player.jail = undefined;
  const alive = alivePlayers(game);
  if (alive.length === 1) {
    game.winner = alive[0]!.user_id;
    emit(game, 'game-over', { user_id_winner: game.winner, seed: game.seed });
    setStep(game, { kind: 'over' });
    return;
  }
  const step = game.step;
  if (turnPlayer(game) === player) {
    if (step.kind === 'auction') return dropBidder(game, player.user_id);
    return nextTurn(game);
  }
  if (step.kind === 'auction') return dropBidder(game, player.user_id);
  if (step.kind === 'pay' && step.to === player.user_id) {
    emit(game, 'rent.pay.cancel', { user_id: turnPlayer(game).user_id, user_id_receiver: player.user_id });
    return endMove(game);
  }
  if (step.kind === 'contract' && step.responder.user_id === player.user_id) {
    emit(game, 'contract.reject', { user_id: player.user_id, timeout: 0 });
    setStep(game, { kind: 'roll' });
  }
}

function dropBidder(game: Game, userId: number): void {
  const s = game.step as Extract<Step, { kind: 'auction' }>;
  const leader = s.leader === userId ? null : s.leader;
  setStep(game, { ...s, leader, rejected: s.rejected.includes(userId) ? s.rejected : [...s.rejected, userId] });
  if (s.bidder === userId || s.leader === userId) advanceAuction(game);
}

export function statusOf(game: Game): Record<string, unknown> {
  const exp = expected(game);
  const step = game.step;
  const turn: Record<string, unknown> = {
    user_id: step.kind === 'over' ? null : turnPlayer(game).user_id,
    action: { user_id: exp.user_id, list: exp.list },
    move_reversed: 0,
  };
  if (step.kind === 'auction')
    turn.auction = {
      field_id: step.field_id,
      bid: step.bid,
      user_ids_rejected: step.rejected,
      ...(step.leader !== null ? { user_id_leader: step.leader } : {}),
    };
  if (step.kind === 'contract') turn.contract = [step.initiator, step.responder];
  if (game.contractsSent > 0) turn.contracts_sent = game.contractsSent;
  if (step.kind === 'pay') turn.payment = { amount: step.amount, ...(step.to !== null ? { to_user_id: step.to } : {}) };
  if (game.builtThisTurn.length > 0) turn.field_ids_level_built = [...game.builtThisTurn];
  if (game.mortgagedThisTurn.length > 0) turn.field_ids_mortgaged = [...game.mortgagedThisTurn];
  return {
    round: game.round,
    players: game.players.map((p) => ({
      user_id: p.user_id,
      status: p.status,
      position: p.position,
      cash: p.cash,
      score: p.score,
      ...(p.jail ? { jail: { ...p.jail } } : {}),
      loan: { taken: 0, unlock_round: 0 },
    })),
    fields: [...game.fields.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([id, f]) => ({
        field_id: id,
        owner_user_id: f.owner_user_id,
        level: f.level,
        ...(f.mortgage ? { mortgage: { ...f.mortgage } } : {}),
        protection: 0,
      })),
    turn,
    ...(game.deadline !== null ? { timer: { ts_expires: game.deadline, is_extra: false } } : {}),
    viewers_count: 0,
  };
}

export { groupFields };
