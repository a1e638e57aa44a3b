import { test } from 'node:test';
import assert from 'node:assert/strict';
import { playCheckedGame, randomSpec } from './game-simulation.js';

/**
 * Full games between computer players on random boards and tables, each checked after every
 * packet (test/game-simulation.ts): every game ends, no action outside the list is accepted,
 * refused actions change nothing, cash and fields are conserved, the replay of the events
 * equals the engine. `npm run game:property -- 5000` plays thousands.
 */
test('60 random games between computer players end, with every packet checked', () => {
  const winners = new Set<number>();
  let refused = 0;
  let timeouts = 0;
  for (let i = 0; i < 60; i++) {
    const result = playCheckedGame(randomSpec(`suite-${i}`));
    winners.add(result.winner);
    refused += result.refused;
    timeouts += result.timeouts;
  }
  assert.ok(winners.size > 1, 'different players win');
  assert.ok(refused > 100, 'refused actions were tried');
  assert.ok(timeouts > 100, 'timeouts were played');
});
