// Full games between computer players in one process, with no I/O: how many a second the
// engine plays, and the memory a game in progress holds. Usage: npm run bench:game -- [games]
import { act, classicBoard, computerAction, createGame, expected, seededRandom, type Game } from '../src/game/engine/index.js';

const games = Number(process.argv[2] ?? 200);
const players = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ user_id: i + 1, is_vip: 0 as const, is_loan_available: 0 as const, equipment: { cards: [] } }));

function playToEnd(game: Game, seed: string): number {
  const random = seededRandom(`bench-computer:${seed}`);
  let now = game.now;
  let actions = 0;
  while (game.step.kind !== 'over') {
    const userId = expected(game).user_id!;
    act(game, userId, computerAction(game, userId, random)!, (now += 1000));
    actions += 1;
  }
  return actions;
}

const started = process.hrtime.bigint();
let actions = 0;
for (let i = 0; i < games; i++) {
  const { game } = createGame({ config: classicBoard, players: players(4), seed: `bench-${i}`, now: 0 });
  actions += playToEnd(game, String(i));
}
const seconds = Number(process.hrtime.bigint() - started) / 1e9;

// Memory: 500 four-player games, each played 100 actions in, held at once.
global.gc?.();
const before = process.memoryUsage().heapUsed;
const live: Game[] = [];
for (let i = 0; i < 500; i++) {
  const { game } = createGame({ config: classicBoard, players: players(4), seed: `live-${i}`, now: 0 });
  const random = seededRandom(`live-computer:${i}`);
  for (let a = 0; a < 100 && game.step.kind !== 'over'; a++) {
    const userId = expected(game).user_id!;
    act(game, userId, computerAction(game, userId, random)!, a * 1000);
  }
  live.push(game);
}
global.gc?.();
const perGame = (process.memoryUsage().heapUsed - before) / live.length;

console.log(
  `${games} four-player games between computer players: ${(games / seconds).toFixed(1)} games/s, ` +
    `${Math.round(actions / seconds)} actions/s, ${Math.round(actions / games)} actions a game; ` +
    `a game in progress holds about ${(perGame / 1024).toFixed(1)} KiB`,
);
