import { test } from 'node:test';
import assert from 'node:assert/strict';
import { missing } from './components.js';
import { CLUSTERED, callsInTurn, startProcesses } from './race-support.js';
import { catalogWorld, tokenFor, user } from './item-fixtures.js';
import type { World } from '../src/world/schema.js';

/**
 * Turn timers over two processes (PostgreSQL and Redis; one process on SQLite): both look for
 * due timeouts, and each is played exactly once, the players' repeated timeouts put them out
 * and the game ends without anyone calling.
 */

const world: World = { ...catalogWorld, users: [user(1)] };

const until = async <T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> => {
  for (let tries = 0; tries < 200; tries++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
};

test(
  'a due timeout is played once, by one of the processes; three in a row put the player out',
  { skip: CLUSTERED && missing.redis },
  async () => {
    const processes = await startProcesses({ world, redis: false });
    try {
      const [server] = processes.servers;
      const token = await tokenFor(server!, 1);
      const call = callsInTurn(processes, () => token);
      const created = (await call(1, 'games.createVsComputer', { computers: 1, action_seconds: 10 })).data;
      const replayOf = async () => (await call(1, 'games.getReplay', { game_id: created.game_id })).data;
      const mine = (packets: any[]) =>
        packets.filter((p) => p.events.some((e: any) => e.user_id === 1 && e.type !== 'leave' && e.type !== 'bankrupt'));

      const start = created.packets[0].time.ts_now;
      server!.clock.advance(10);
      const first = await until(replayOf, (r) => r.packets.length >= 2, 'the first timeout');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const settled = await replayOf();
      assert.deepEqual(settled.packets, first.packets, 'no process played it again');
      assert.equal(settled.packets[1].time.ts_now, start + 10_000);
      assert.equal(mine(settled.packets.slice(1, 2)).length, 1, 'the timeout acted for the player expected');

      for (let n = 0; n < 6; n++) server!.clock.advance(10);
      const over = await until(replayOf, (r) => r.status === 'over', 'the end of the game');
      const leave = over.packets.flatMap((p: any) => p.events).find((e: any) => e.type === 'leave');
      assert.deepEqual(leave, { id: leave.id, type: 'leave', user_id: 1, kicked: 1 });
      const ids = over.packets.flatMap((p: any) => p.events.map((e: any) => Number(e.id)));
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
        'events numbered once each, in order',
      );
      assert.equal(new Set(ids).size, ids.length);
      const [profile] = (await call(1, 'users.get', { user_ids: '1' })).data;
      assert.deepEqual([profile.games, profile.games_wins], [1, 0], 'the end is counted once');
    } finally {
      await processes.close();
    }
  },
);
