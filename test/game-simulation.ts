/**
 * Full games between computer players on random boards, checked after every packet: the packet
 * reads with the game SDK's schemas, the replay of the events alone equals the engine's state,
 * cash is conserved with the bank's flows, each field has at most one owner (a playing one),
 * and every refused action changed nothing. Used by the suite (a few games) and by
 * `npm run game:property` (thousands).
 */
import assert from 'node:assert/strict';
import {
  act,
  actionTypes,
  applyEvents,
  classicBoard,
  computerAction,
  createGame,
  expected,
  GameActionError,
  maxLevel,
  seededRandom,
  startReplay,
  statusOf,
  timeout,
  type Action,
  type BoardConfig,
  type ChanceCard,
  type FieldConfig,
  type Game,
  type Packet,
  type PlayerSetup,
  type RandomSource,
} from '../src/game/engine/index.js';
import { packetProblems } from './game-packet-schemas.js';

export interface GameSpec {
  config: BoardConfig;
  players: PlayerSetup[];
  startCash: number;
  seed: string;
}

const pick = <T>(r: RandomSource, list: readonly T[]): T => list[r.below(list.length)]!;
const between = (r: RandomSource, min: number, max: number, step = 1): number => min + step * r.below(Math.floor((max - min) / step) + 1);

/** A random board and table from `seed`: the classic board's fields shuffled, its mechanics varied. */
export function randomSpec(seed: string): GameSpec {
  const r = seededRandom(`spec:${seed}`);
  const base = structuredClone(classicBoard);
  const rest = base.fields.slice(1);
  for (let i = rest.length - 1; i > 0; i--) {
    const j = r.below(i + 1);
    [rest[i], rest[j]] = [rest[j]!, rest[i]!];
  }
  const withChance = r.below(5) > 0;
  const cards: ChanceCard[] = (classicBoard.mechanics.chance!.cards as ChanceCard[]).filter(() => r.below(3) > 0);
  const chance = withChance && cards.length > 0 ? { cards } : undefined;
  const fields: FieldConfig[] = [
    base.fields[0]!,
    ...rest.map((f) => (f.type === 'chance' && !chance ? ({ type: 'park' } as FieldConfig) : f)),
  ];
  const mechanics: BoardConfig['mechanics'] = {
    ...(r.below(10) < 7 ? { auction: { bid_increment: between(r, 50, 500, 50) } } : {}),
    ...(chance ? { chance } : {}),
    field_level: { build: { uneven: r.below(3) === 0 ? 1 : 0 }, sell: { multiplier: between(r, 5, 10) / 10 } },
    jail: { release_fee: between(r, 0, 1500, 100), double_roll_attempt_limit: between(r, 1, 4) },
    mortgage: {
      multiplier: between(r, 3, 10) / 10,
      buyback_multiplier: between(r, 10, 15) / 10,
      ...(r.below(2) === 0 ? { duration: between(r, 3, 20) } : {}),
    },
    start: { income_amount: between(r, 0, 3000, 100), bonus_amount: between(r, 0, 1500, 100) },
    time_rules: [
      ...(r.below(2) === 0 ? [{ type: 'rent.tax' as const, time: between(r, 0, 3_000_000, 1000), rate: between(r, 1, 5) / 10 }] : []),
      ...(r.below(2) === 0 ? [{ type: 'start.none' as const, time: between(r, 0, 3_000_000, 1000) }] : []),
    ],
  };
  const config: BoardConfig = { ...base, fields, mechanics };
  const count = between(r, 2, 5);
  const companies = fields.flatMap((f, i) => (f.type === 'company' ? [i] : []));
  const players: PlayerSetup[] = Array.from({ length: count }, (_, i) => ({
    user_id: 100 + i * 7,
    is_vip: 0,
    is_loan_available: 0,
    equipment: {
      cards: r.below(2) === 0 ? [{ field_id: pick(r, companies), item_proto_id: 9000 + i, rent_multiplier: between(r, 10, 20) / 10 }] : [],
    },
  }));
  return { config, players, startCash: between(r, 5000, 20000, 500), seed };
}

/** What of a player the replay recomputes. */
const playerView = (p: any) => ({ user_id: p.user_id, status: p.status, position: p.position, cash: p.cash, score: p.score, jail: p.jail });

/** The engine's state a replay must agree with, from the engine's status. */
function engineView(game: Game) {
  const status = statusOf(game) as { players: any[]; fields: any[] };
  return {
    players: status.players.map(playerView),
    fields: status.fields.map((f) => ({ field_id: f.field_id, owner_user_id: f.owner_user_id, level: f.level, mortgaged: !!f.mortgage })),
    bank: game.bank,
  };
}

function snapshot(game: Game): string {
  const { config: _config, setupPlayers: _setup, random: _random, events: _events, ...rest } = game;
  return JSON.stringify({ ...rest, fields: [...game.fields.entries()], draws: (game.random as { draws?: () => number }).draws?.() });
}

/** A random action that may or may not be allowed now; for checking that refusals change nothing. */
function randomAction(game: Game, r: RandomSource): { userId: number; action: Action } {
  const userId = pick(r, game.players).user_id;
  const type = pick(r, [...actionTypes, 'leave', 'nonsense']) as Action['type'];
  const fieldId = r.below(game.config.fields.length + 2) - 1;
  const other = pick(r, game.players).user_id;
  if (type === 'contract.send')
    return {
      userId,
      action: {
        type,
        user_id_to: other,
        give: { field_ids: [fieldId], cash: between(r, 0, 3000, 500) },
        take: { field_ids: [], cash: r.below(2) * 1000 },
      },
    };
  return { userId, action: { type, field_id: fieldId } as Action };
}

export interface GameResult {
  actions: number;
  refused: number;
  timeouts: number;
  packets: number;
  winner: number;
}

/** Plays one game to its end with every check; throws at the first broken rule. */
export function playCheckedGame(spec: GameSpec, { maxActions = 60_000 } = {}): GameResult {
  const r = seededRandom(`table:${spec.seed}`);
  let now = 1_700_000_000_000;
  const { game, packet: first } = createGame({
    config: spec.config,
    players: spec.players,
    seed: spec.seed,
    now,
    options: { start_cash: spec.startCash },
  });
  const replay = startReplay(spec.config, spec.players, spec.startCash);
  const total = spec.startCash * spec.players.length;
  let packets = 0;
  const check = (packet: Packet): void => {
    packets += 1;
    const problems = packetProblems(packet);
    assert.deepEqual(problems, [], `packet ${packets} of game ${spec.seed}: ${JSON.stringify(packet).slice(0, 2000)}`);
    const status = packet.status as { turn: { action: { list: string[] } } };
    for (const name of status.turn.action.list) assert.ok((actionTypes as readonly string[]).includes(name), name);
    applyEvents(replay, packet.events);
    const view = engineView(game);
    const replayed = {
      players: [...replay.players.values()].map(playerView),
      fields: [...replay.fields.values()].sort((a, b) => a.field_id - b.field_id),
      bank: replay.bank,
    };
    assert.deepEqual(
      JSON.parse(JSON.stringify(replayed)),
      JSON.parse(JSON.stringify(view)),
      `replay differs after packet ${packets} of game ${spec.seed}`,
    );
    assert.equal(game.players.reduce((s, p) => s + p.cash, 0) + game.bank, total, 'cash and the bank flows are conserved');
    for (const [id, field] of game.fields) {
      assert.equal(spec.config.fields[id]!.type, 'company');
      assert.equal(game.players.find((p) => p.user_id === field.owner_user_id)?.status, 0, `field ${id} belongs to a playing player`);
      assert.ok(field.level >= 0 && field.level <= maxLevel(spec.config, id));
      if (field.mortgage) assert.equal(field.level, 0);
    }
  };
  check(first);
  let actions = 0;
  let refused = 0;
  let timeouts = 0;
  while (game.step.kind !== 'over') {
    if (actions >= maxActions) throw new Error(`game ${spec.seed} did not end within ${maxActions} actions`);
    now += between(r, 500, 8000, 500);
    const roll = r.below(100);
    if (roll < 10) {
      const { userId, action } = randomAction(game, r);
      const exp = expected(game);
      const before = snapshot(game);
      try {
        check(act(game, userId, action, now));
        actions += 1;
        assert.ok(
          action.type === 'leave' || (exp.user_id === userId && (exp.list as string[]).includes(action.type)),
          `accepted ${action.type} outside the list`,
        );
      } catch (error) {
        if (!(error instanceof GameActionError)) throw error;
        refused += 1;
        assert.equal(snapshot(game), before, `the refused ${action.type} changed the game`);
      }
      continue;
    }
    if (roll < 13 && game.deadline !== null) {
      const packet = timeout(game, game.deadline);
      assert.ok(packet);
      timeouts += 1;
      check(packet);
      continue;
    }
    const exp = expected(game);
    const action = computerAction(game, exp.user_id!, r);
    assert.ok(action, 'the computer player has an action');
    assert.ok((exp.list as string[]).includes(action.type), `computer chose ${action.type} outside ${exp.list}`);
    check(act(game, exp.user_id!, action, now));
    actions += 1;
  }
  assert.equal(replay.over, true);
  assert.equal(replay.winner, game.winner);
  assert.equal(replay.seed, spec.seed);
  return { actions, refused, timeouts, packets, winner: game.winner! };
}
