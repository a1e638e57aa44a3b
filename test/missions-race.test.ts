import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ok, type TestServer } from './helpers.js';
import { admin, startAdminServer } from './admin-support.js';
import { callOk, callVoid, tokenFor, user } from './item-fixtures.js';
import type { World } from '../src/world/schema.js';

/*
 * A mission's reward is given once however many game ends reach its target at once: a player
 * who left one game (still counted in it at its end) and plays another has both end at the
 * same moment, from two concurrent requests; the mission counts both games and pays once.
 */

const ROUNDS = 3;
const USERS = [1, 2, 3, 4];
const world: World = { users: USERS.map((id) => user(id)) };
let server: TestServer;
const tokens = new Map<number, string>();
const as = (userId: number) => ({ token: tokens.get(userId) });

before(async () => {
  server = await startAdminServer({ world });
  for (const id of USERS) tokens.set(id, await tokenFor(server, id));
});
after(() => server.close());

async function startRoom(players: number[]): Promise<number> {
  const roomId = (await callOk(server, 'rooms.create', { maxplayers: players.length, option_autostart: 1 }, as(players[0]!))).room_id;
  for (const id of players.slice(1)) await callVoid(server, 'rooms.join', { room_id: roomId }, as(id));
  return Number((await callOk(server, 'rooms.get', { room_id: roomId }, as(players[0]!))).rooms[0].gs_game_id);
}
const leave = (gameId: number, userId: number) => server.call('game.action', { game_id: gameId, action: 'leave' }, as(userId));

test('two games ending at once, both completing a mission of the same player: one reward', async () => {
  await admin(server, 'missionCreate', { name: 'Play a game', goal: 'play', target: 1, reward_type: 'money', reward: 7 });
  for (let round = 1; round <= ROUNDS; round++) {
    // Player 1 leaves the first game, which goes on without them, and plays a second.
    const first = await startRoom([1, 2, 3]);
    ok(await leave(first, 1));
    const second = await startRoom([1, 4]);
    const ends = await Promise.all([leave(first, 2), leave(second, 4)]);
    for (const end of ends) assert.equal(end.body.code, 0, JSON.stringify(end.body));
    for (const gameId of [first, second])
      assert.equal((await callOk(server, 'games.getReplay', { game_id: gameId }, as(1))).status, 'over');

    const history = (await callOk(server, 'wallet.getHistory', { type: 'mission' }, as(1))).history;
    assert.deepEqual(
      history.map((e: { amount: number }) => e.amount),
      Array.from({ length: round }, () => 7),
      `round ${round}: one reward a week`,
    );
    const progress = await server.db.kysely
      .selectFrom('mission_progress')
      .select(['counter', 'ts_rewarded'])
      .where('user_id', '=', 1)
      .orderBy('week', 'desc')
      .executeTakeFirstOrThrow();
    assert.equal(Number(progress.counter), 2, 'both games counted');
    assert.notEqual(progress.ts_rewarded, null);
    const [profile] = await callOk(server, 'users.get', { user_ids: '1' });
    assert.equal(profile.games, 2 * round);
    server.clock.advance(7 * 86_400);
  }
});
