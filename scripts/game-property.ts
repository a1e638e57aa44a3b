// Plays many full games between computer players on random boards, every packet checked
// (test/game-simulation.ts). Usage: npm run game:property -- [games] [seed prefix]
import { playCheckedGame, randomSpec } from '../test/game-simulation.js';

const games = Number(process.argv[2] ?? 2000);
const prefix = process.argv[3] ?? 'property';
const started = Date.now();
let actions = 0;
for (let i = 0; i < games; i++) {
  actions += playCheckedGame(randomSpec(`${prefix}-${i}`)).actions;
  if ((i + 1) % 500 === 0) console.log(`${i + 1} games checked`);
}
const seconds = (Date.now() - started) / 1000;
console.log(`${games} games, ${actions} actions, every packet checked, in ${seconds.toFixed(1)} s`);
