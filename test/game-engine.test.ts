import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  act,
  checkConfig,
  classicBoard,
  ConfigError,
  createGame,
  expected,
  GameActionError,
  seededRandom,
  statusOf,
  timeout,
  type Action,
  type BoardConfig,
  type Game,
  type RandomSource,
} from '../src/game/engine/index.js';
import { packetProblems } from './game-packet-schemas.js';

/**
 * The rules of the classic game, one worked example each, on the classic board (15000 to start,
 * 2000 for passing the start, fields 1 and 3 the first monopoly at 600 with a level at 500).
 */

/** Dice as scripted: each value is one die. */
function dice(...values: number[]): RandomSource {
  const queue = [...values];
  return {
    below(bound) {
      const die = queue.shift();
      if (die === undefined) throw new Error('the script has no more dice');
      assert.equal(bound, 6, 'only dice are drawn in this example');
      return die - 1;
    },
  };
}

const table = (...ids: number[]) =>
  ids.map((user_id) => ({ user_id, is_vip: 0 as const, is_loan_available: 0 as const, equipment: { cards: [] } }));

function newGame(ids: number[], random: RandomSource, config: BoardConfig = classicBoard): Game {
  return createGame({ config, players: table(...ids), seed: 'worked-example', now: 1000, random }).game;
}

const player = (game: Game, id: number) => game.players.find((p) => p.user_id === id)!;
const types = (packet: { events: { type: string }[] }) => packet.events.map((e) => e.type);

function play(game: Game, userId: number, action: Action) {
  const packet = act(game, userId, action, game.now + 1000);
  assert.deepEqual(packetProblems(packet), []);
  return packet;
}

test('rent of a monopoly with levels: level 2 on the first field, double rent on a monopoly without levels, the last field’s own table', () => {
  const game = newGame([1, 2], dice(1, 1, 1, 1, 2, 3));
  game.fields.set(1, { owner_user_id: 2, level: 2 });
  game.fields.set(3, { owner_user_id: 2, level: 0 });
  player(game, 1).position = 39;
  const landed = play(game, 1, { type: 'roll-dices' });
  assert.deepEqual(types(landed), ['roll-dices', 'start.income', 'rent.pay']);
  assert.equal(landed.events[2]!.amount, 300, 'rent_by_level[2] of the first monopoly');
  assert.deepEqual(expected(game), { user_id: 1, list: ['rent.pay'] });
  const paid = play(game, 1, { type: 'rent.pay' });
  assert.deepEqual(paid.events[0], { id: '4', type: 'rent.pay.complete', user_id: 1, user_id_receiver: 2, field_id: 1, amount: 300 });
  assert.equal(player(game, 1).cash, 15000 + 2000 - 300);
  assert.equal(player(game, 2).cash, 15000 + 300);
  assert.equal(player(game, 2).score, 300);
  // the double gives another roll: 1+1 again, to field 3, the last field of the monopoly at level 0
  assert.equal(expected(game).user_id, 1);
  const second = play(game, 1, { type: 'roll-dices' });
  assert.deepEqual(second.events.at(-1), { id: '6', type: 'rent.pay', user_id: 1, field_id: 3, amount: 80 });
});

test('an auction every player rejects is cancelled: the field stays the bank’s and nobody pays', () => {
  const game = newGame([1, 2, 3], dice(1, 2));
  const landed = play(game, 1, { type: 'roll-dices' });
  assert.deepEqual(types(landed), ['roll-dices', 'purchase.offer']);
  assert.deepEqual(expected(game), { user_id: 1, list: ['purchase', 'auction.put'] });
  const put = play(game, 1, { type: 'auction.put' });
  assert.deepEqual(put.events[0], { id: '3', type: 'auction.put', user_id: 1, field_id: 3, bid: 600 });
  assert.deepEqual((put.status.turn as any).auction, { field_id: 3, bid: 600, user_ids_rejected: [] });
  assert.deepEqual(expected(game), { user_id: 2, list: ['auction.bid', 'auction.reject'] });
  assert.throws(() => act(game, 3, { type: 'auction.reject' }, 5000), /not your turn/);
  play(game, 2, { type: 'auction.reject' });
  const last = play(game, 3, { type: 'auction.reject' });
  assert.deepEqual(types(last), ['auction.reject', 'auction.cancel']);
  assert.equal(game.fields.has(3), false);
  assert.deepEqual(
    game.players.map((p) => p.cash),
    [15000, 15000, 15000],
  );
  assert.deepEqual(expected(game).user_id, 2, 'the turn passes on');
});

test('an auction goes to the last bidder at the bid plus the increment for each raise', () => {
  const game = newGame([1, 2, 3], dice(1, 2));
  play(game, 1, { type: 'roll-dices' });
  play(game, 1, { type: 'auction.put' });
  assert.deepEqual(play(game, 2, { type: 'auction.bid' }).events[0], { id: '4', type: 'auction.bid', user_id: 2, bid: 600 });
  assert.deepEqual(play(game, 3, { type: 'auction.bid' }).events[0], { id: '5', type: 'auction.bid', user_id: 3, bid: 700 });
  const won = play(game, 2, { type: 'auction.reject' });
  assert.deepEqual(won.events[1], { id: '7', type: 'auction.win', user_id: 3, field_id: 3, price: 700 });
  assert.equal(player(game, 3).cash, 14300);
  assert.equal(game.fields.get(3)!.owner_user_id, 3);
});

test('mortgage gives half the price; buying back costs the mortgage value times 1.2, and not in the turn it was mortgaged', () => {
  const game = newGame([1, 2], dice());
  game.fields.set(6, { owner_user_id: 1, level: 0 });
  play(game, 1, { type: 'mortgage.put', field_id: 6 });
  assert.equal(player(game, 1).cash, 15500);
  assert.deepEqual(game.fields.get(6)!.mortgage, { round_until: 16 }, 'the classic board keeps a mortgage 15 rounds');
  assert.throws(() => act(game, 1, { type: 'mortgage.buyback', field_id: 6 }, 3000), /not expected now/);
  game.mortgagedThisTurn = [];
  const back = play(game, 1, { type: 'mortgage.buyback', field_id: 6 });
  assert.deepEqual(back.events[0], { id: '2', type: 'mortgage.buyback', user_id: 1, field_id: 6 });
  assert.equal(player(game, 1).cash, 15500 - 600);
  assert.equal(game.fields.get(6)!.mortgage, undefined);
});

test('bankruptcy to a player: the debtor’s cash and fields go to the creditor, and the last player standing wins', () => {
  const game = newGame([1, 2], dice(1, 2));
  game.fields.set(3, { owner_user_id: 2, level: 0 });
  game.fields.set(1, { owner_user_id: 2, level: 0 });
  game.fields.set(6, { owner_user_id: 1, level: 0, mortgage: {} });
  player(game, 1).cash = 50;
  play(game, 1, { type: 'roll-dices' });
  assert.deepEqual(expected(game), { user_id: 1, list: ['rent.pay'] }, 'nothing left to sell or mortgage');
  const out = play(game, 1, { type: 'rent.pay' });
  assert.deepEqual(types(out), ['bankrupt', 'game-over']);
  assert.deepEqual(out.events[0], { id: '3', type: 'bankrupt', user_id: 1, user_id_bankrupt: 2 });
  assert.deepEqual(out.events[1], { id: '4', type: 'game-over', user_id_winner: 2, seed: 'worked-example' });
  assert.equal(player(game, 2).cash, 15050);
  assert.deepEqual(game.fields.get(6), { owner_user_id: 2, level: 0, mortgage: {} });
  assert.equal(player(game, 1).status, -1);
  assert.deepEqual((out.status.turn as any).action, { user_id: null, list: [] });
  assert.throws(() => act(game, 2, { type: 'roll-dices' }, 9000), /game is over/);
});

test('a debtor who can still sell or mortgage is told to, and a debt paid to the bank is the bank’s', () => {
  const game = newGame([1, 2], dice(2, 2));
  game.fields.set(6, { owner_user_id: 1, level: 0 });
  player(game, 1).cash = 1600;
  play(game, 1, { type: 'roll-dices' });
  assert.deepEqual(expected(game), { user_id: 1, list: ['bank.fee.pay', 'mortgage.put'] });
  assert.throws(() => act(game, 1, { type: 'bank.fee.pay' }, 5000), /sell levels or mortgage fields first/);
  play(game, 1, { type: 'mortgage.put', field_id: 6 });
  const paid = play(game, 1, { type: 'bank.fee.pay' });
  assert.deepEqual(paid.events[0], { id: '4', type: 'bank.fee.pay', user_id: 1, amount: 2000 });
  assert.equal(game.bank, 2000 - 500);
});

test('jail: three doubles send there, failed attempts count, the limit makes the player pay the fee and move on', () => {
  const game = newGame([1, 2], dice(3, 3, 1, 1, 2, 2, 1, 2, 1, 2, 2, 4, 1, 2, 1, 4, 1, 2));
  for (const id of [6, 8]) game.fields.set(id, { owner_user_id: 1, level: 0 });
  for (const id of [3, 9, 14]) game.fields.set(id, { owner_user_id: 2, level: 0 });
  play(game, 1, { type: 'roll-dices' });
  play(game, 1, { type: 'roll-dices' });
  const third = play(game, 1, { type: 'roll-dices' });
  assert.deepEqual(types(third), ['roll-dices', 'jail.put.double']);
  assert.equal(player(game, 1).position, 10);
  assert.deepEqual(player(game, 1).jail, { roll_double_attempts: 0 });
  for (let attempt = 1; attempt <= 2; attempt++) {
    play(game, 2, { type: 'roll-dices' });
    assert.deepEqual(types(play(game, 1, { type: 'roll-dices' })), ['roll-dices', 'roll-dices.jail.fail']);
    assert.deepEqual(player(game, 1).jail, { roll_double_attempts: attempt });
  }
  play(game, 2, { type: 'roll-dices' });
  play(game, 1, { type: 'roll-dices' });
  assert.deepEqual(expected(game), { user_id: 1, list: ['jail.release.pay', 'mortgage.put'] });
  const cash = player(game, 1).cash;
  const out = play(game, 1, { type: 'jail.release.pay' });
  assert.deepEqual(types(out), ['jail.release.pay', 'jail.release', 'purchase.offer']);
  assert.deepEqual(out.events[1], { id: out.events[1]!.id, type: 'jail.release', user_id: 1, position_after: 13 });
  assert.equal(player(game, 1).jail, undefined);
  assert.equal(player(game, 1).cash, cash - 500);
});

test('levels are built evenly, one a monopoly a turn, only on a whole monopoly; sold evenly too', () => {
  const game = newGame([1, 2], dice());
  game.fields.set(1, { owner_user_id: 1, level: 0 });
  assert.throws(() => act(game, 1, { type: 'level.build', field_id: 1 }, 2000), /not expected now/);
  game.fields.set(3, { owner_user_id: 1, level: 0 });
  play(game, 1, { type: 'level.build', field_id: 1 });
  assert.throws(() => act(game, 1, { type: 'level.build', field_id: 3 }, 3000), /not expected now/, 'one level a monopoly a turn');
  game.builtThisTurn = [];
  assert.throws(() => act(game, 1, { type: 'level.build', field_id: 1 }, 3000), /evenly/);
  play(game, 1, { type: 'level.build', field_id: 3 });
  assert.equal(player(game, 1).cash, 14000);
  game.fields.get(3)!.level = 1;
  assert.throws(() => act(game, 1, { type: 'mortgage.put', field_id: 3 }, 4000), /not expected now/);
  game.fields.get(1)!.level = 2;
  assert.throws(() => act(game, 1, { type: 'level.sell', field_id: 3 }, 4000), /evenly/);
  play(game, 1, { type: 'level.sell', field_id: 1 });
  assert.equal(player(game, 1).cash, 14500);
});

test('contracts move fields and cash both ways when accepted, and nothing when rejected', () => {
  const game = newGame([1, 2], dice());
  game.fields.set(1, { owner_user_id: 1, level: 0 });
  game.fields.set(3, { owner_user_id: 2, level: 0 });
  game.fields.set(6, { owner_user_id: 2, level: 0, mortgage: {} });
  const offer: Action = {
    type: 'contract.send',
    user_id_to: 2,
    give: { field_ids: [1], cash: 700 },
    take: { field_ids: [3, 6], cash: 200 },
  };
  const sent = play(game, 1, offer);
  assert.deepEqual(sent.events[0], { id: '1', type: 'contract.send', user_id: 1, user_id_to: 2 });
  assert.deepEqual((sent.status.turn as any).contract, [
    { user_id: 1, field_ids: [1], cash: 700 },
    { user_id: 2, field_ids: [3, 6], cash: 200 },
  ]);
  assert.deepEqual(expected(game), { user_id: 2, list: ['contract.accept', 'contract.reject'] });
  play(game, 2, { type: 'contract.reject' });
  assert.equal(game.fields.get(1)!.owner_user_id, 1);
  play(game, 1, offer);
  play(game, 2, { type: 'contract.accept' });
  assert.deepEqual(
    [1, 3, 6].map((id) => game.fields.get(id)!.owner_user_id),
    [2, 1, 1],
  );
  assert.deepEqual(game.fields.get(6)!.mortgage, {}, 'a mortgaged field changes hands mortgaged');
  assert.deepEqual([player(game, 1).cash, player(game, 2).cash], [15000 - 700 + 200, 15000 + 700 - 200]);
  assert.throws(() => act(game, 1, { ...offer, give: { field_ids: [1], cash: 0 } } as Action, 9000), /not player 1's to give/);
});

test('an action outside the list, or from another player, is refused and changes nothing', () => {
  const game = newGame([1, 2], dice(1, 2));
  const before = JSON.stringify(statusOf(game));
  assert.throws(
    () => act(game, 1, { type: 'purchase' }, 5000),
    (e: Error) => e instanceof GameActionError && /not expected now; expected: roll-dices/.test(e.message),
  );
  assert.throws(() => act(game, 2, { type: 'roll-dices' }, 5000), /not your turn/);
  assert.throws(() => act(game, 9, { type: 'roll-dices' }, 5000), /not playing in this game/);
  assert.throws(() => act(game, 1, { type: 'nonsense' } as unknown as Action, 5000), /not expected now/);
  assert.equal(JSON.stringify(statusOf(game)), before);
});

test('timers: the default action when time runs out, and the player is put out after three timeouts in a row', () => {
  const game = newGame([1, 2], dice(1, 2, 1, 2));
  assert.equal(timeout(game, game.deadline! - 1), null, 'nothing before the deadline');
  assert.deepEqual(types(timeout(game, game.deadline!)!), ['roll-dices', 'purchase.offer']);
  assert.deepEqual(types(timeout(game, game.deadline!)!), ['auction.put']);
  assert.deepEqual(types(timeout(game, game.deadline!)!), ['auction.reject', 'auction.cancel']);
  assert.deepEqual(types(timeout(game, game.deadline!)!), ['roll-dices', 'purchase.offer']);
  const out = timeout(game, game.deadline!)!;
  assert.deepEqual(types(out), ['leave', 'bankrupt', 'game-over']);
  assert.deepEqual(out.events[0], { id: out.events[0]!.id, type: 'leave', user_id: 2, kicked: 1 });
  assert.equal(game.winner, 1);
  assert.equal(game.deadline, null);
});

test('configs asking for mechanics this server does not play are refused with the reason', () => {
  const with_ = (change: (c: any) => void) => {
    const c: any = structuredClone(classicBoard);
    change(c);
    return c;
  };
  assert.doesNotThrow(() => checkConfig(classicBoard));
  for (const [change, message] of [
    [(c: any) => (c.mechanics.jackpot = { bet: 1, multipliers: [], superprize: { chance: 1 } }), /jackpot mechanic is not played/],
    [(c: any) => (c.mechanics.loan = {}), /loan mechanic/],
    [(c: any) => (c.mechanics.restart = { variants: [] }), /restart mechanic/],
    [(c: any) => (c.mechanics.russian_roulette = { rewards: [] }), /russian_roulette mechanic/],
    [(c: any) => (c.fields[20] = { type: 'wormhole' }), /"wormhole" are not played/],
    [(c: any) => c.mechanics.chance.cards.push({ type: 'teleport', text_id: 1 }), /"teleport" are not played/],
    [(c: any) => (c.fields[5] = { type: 'company', monopoly_id: 77 }), /names no monopoly/],
    [(c: any) => (c.fields[10] = { type: 'park' }), /exactly one jail/],
  ] as const)
    assert.throws(
      () => checkConfig(with_(change)),
      (e: Error) => e instanceof ConfigError && message.test(e.message),
    );
  assert.throws(
    () => createGame({ config: with_((c) => (c.mechanics.bus = {})), players: table(1, 2), seed: 's', now: 0 }),
    /bus mechanic is not played/,
  );
});

test('fair dice: setup commits to SHA-256 of the seed, game-over reveals it, and the rolls recompute from it', () => {
  const { game, packet } = createGame({ config: classicBoard, players: table(1, 2), seed: 'a published seed', now: 0 });
  const commitment = createHash('sha256').update('a published seed').digest('hex');
  assert.deepEqual((packet.setup as any).random, { algorithm: 'sha256-counter', seed_sha256: commitment });
  const rolled = act(game, 1, { type: 'roll-dices' }, 1000);
  const words = createHash('sha256').update('a published seed:0').digest();
  const expectedDice = [(words.readUInt32BE(0) % 6) + 1, (words.readUInt32BE(4) % 6) + 1];
  assert.deepEqual(rolled.events[0]!.dices, expectedDice);
  const again = seededRandom('a published seed');
  assert.deepEqual([again.below(6) + 1, again.below(6) + 1], expectedDice);
});
