import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callOk, callVoid, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { listen } from './transport-support.js';
import { ExtwsClient } from './extws-client.js';
import type { World } from '../src/world/schema.js';
import { moveFor } from './game-socket-support.js';

/*
 * A lobby played to the end: four players create and fill a room set to start by itself, the
 * lobby hears it start, the game is listed live and in the players' profiles, they play it
 * through the game server until one is left, and then their profiles, games.my, the live
 * list, the missions (and their rewards), the week's top and the home screen show the result.
 */

const PLAYERS = [1, 2, 3, 4];
const world: World = {
  ...catalogWorld,
  users: PLAYERS.map((id) => user(id)),
  missions: [
    { mission_id: 1, name: 'Play a game', goal: 'play', target: 1, reward_type: 'money', reward: 5 },
    { mission_id: 2, name: 'Win a game', goal: 'win', target: 1, reward_type: 'item', reward: 201 },
  ],
};
let server: TestServer;
let base: string;
const tokens = new Map<number, string>();
const as = (userId: number) => ({ token: tokens.get(userId) });

before(async () => {
  server = await startTestServer({ world });
  base = await listen(server);
  for (const id of PLAYERS) tokens.set(id, await tokenFor(server, id));
});
after(() => server.close());

test('four players fill an autostart room, play its game to the end, and the result shows everywhere', async () => {
  const watcher = await ExtwsClient.connect(base, { subs: 'rooms' });
  const roomId: string = (await callOk(server, 'rooms.create', { maxplayers: 4, option_autostart: 1 }, as(1))).room_id;
  for (const id of [2, 3, 4]) await callVoid(server, 'rooms.join', { room_id: roomId }, as(id));

  const room = (await callOk(server, 'rooms.get', { room_id: roomId }, as(1))).rooms[0];
  assert.equal(room.status, 1, 'the full room started by itself');
  assert.deepEqual(room.players, [PLAYERS]);
  assert.equal(room.gs_id, 'gs-1');
  const gameId = Number(room.gs_game_id);
  assert.equal(room.gs_game_id, String(gameId));
  assert.equal((await callOk(server, 'rooms.get', {})).count, 0, 'a started room leaves the lobby');
  const deleted = await watcher.next((f) => f.event === 'events' && f.data.events.some((e: any) => e.type === 'room.delete'));
  const started = watcher.events().find((e) => e.type === 'room.patch' && (e.patches as unknown[][]).some((p) => p[1] === 'status'));
  assert.deepEqual(started?.patches, [
    [2, 'status', 1],
    [2, 'gs_id', 'gs-1'],
    [2, 'gs_game_id', String(gameId)],
  ]);
  assert.ok(deleted);

  const profiles = await callOk(server, 'users.get', { user_ids: PLAYERS.join(',') });
  assert.deepEqual(
    profiles.map((u: any) => u.current_game),
    PLAYERS.map(() => ({ gs_id: 'gs-1', gs_game_id: String(gameId) })),
  );
  const live = await callOk(server, 'games.getLive', {});
  assert.deepEqual(
    [live.count, live.games[0].gs_game_id, live.games[0].players],
    [1, String(gameId), PLAYERS.map((user_id) => ({ user_id }))],
  );
  await callOk(server, 'rooms.create', {}, as(2)).then(
    () => assert.fail('a player in a live game is refused a room'),
    (error: Error) => assert.match(error.message, /1903/),
  );

  // Each plays their own turns; after some moves, the last three seats give up one by one.
  let status = (await callOk(server, 'games.getReplay', { game_id: gameId }, as(1))).packets[0].status;
  let moves = 0;
  const leavers = [4, 3, 2];
  while (status.turn?.action && moves < 400) {
    const expected: number = status.turn.action.user_id;
    let userId = expected;
    let action = moveFor(status.turn.action.list);
    if (moves >= 60 && leavers.length > 0) {
      userId = leavers.shift()!;
      action = 'leave';
    }
    const answer = await server.call('game.action', { game_id: gameId, action }, as(userId));
    assert.equal(answer.body.code, 0, JSON.stringify([userId, action, status.turn, answer.body]));
    const packets = answer.body.data.packets;
    if (packets.length > 0) status = packets[packets.length - 1].status;
    moves++;
    const replay = await callOk(server, 'games.getReplay', { game_id: gameId }, as(1));
    if (replay.status === 'over') break;
  }
  const replay = await callOk(server, 'games.getReplay', { game_id: gameId }, as(1));
  assert.equal(replay.status, 'over');

  const mine = await callOk(server, 'games.my', {}, as(1));
  assert.deepEqual(
    [mine.count, mine.games[0].game_id, mine.games[0].status, mine.games[0].user_ids, mine.games[0].winner_user_id],
    [1, gameId, 'over', PLAYERS, 1],
  );
  const after = await callOk(server, 'users.get', { user_ids: PLAYERS.join(',') });
  assert.deepEqual(
    after.map((u: any) => [u.user_id, u.games, u.games_wins, u.current_game]),
    [
      [1, 1, 1, undefined],
      [2, 1, 0, undefined],
      [3, 1, 0, undefined],
      [4, 1, 0, undefined],
    ],
  );
  assert.equal((await callOk(server, 'games.getLive', {})).count, 0);

  // Every player finished a game, the first won it: the missions counted both, and gave their rewards.
  for (const id of PLAYERS)
    assert.deepEqual(
      (await callOk(server, 'missions.get', {}, as(id))).map((m: any) => [m.mission_id, m.counter, m.rewarded]),
      [
        [1, 1, 1],
        [2, id === 1 ? 1 : 0, id === 1 ? 1 : 0],
      ],
    );
  for (const id of PLAYERS) {
    const wallet = await server.call('execute.wallet', {}, as(id));
    assert.equal((wallet.body.result as { info: { balance: number } }).info.balance, 5);
  }
  const things = (await callOk(server, 'inventory.get', { add_legacy: 1 }, as(1))).things;
  assert.deepEqual(
    things.map((t: any) => t.thing_prototype_id),
    [201],
  );
  const top = await callOk(server, 'users.getTopWeek', {}, as(3));
  assert.deepEqual(
    [top.count, top.top, top.list],
    [
      4,
      { position: 3, games: 1, games_wins: 0, points: 10 },
      [
        { position: 1, user_id: 1, games: 1, games_wins: 1, points: 30 },
        { position: 2, user_id: 2, games: 1, games_wins: 0, points: 10 },
        { position: 3, user_id: 3, games: 1, games_wins: 0, points: 10 },
        { position: 4, user_id: 4, games: 1, games_wins: 0, points: 10 },
      ],
    ],
  );
  const home = (await server.call('execute.games', { logged_in: 1 }, as(1))).body.result as any;
  assert.deepEqual(
    [home.top_week, home.seasonpass, home.missions.map((m: any) => m.rewarded)],
    [{ top: { position: 1, games: 1, games_wins: 1, points: 30 } }, 0, [1, 1]],
  );
  assert.match((await callOk(server, 'rooms.create', {}, as(2))).room_id, /^\d+$/, 'once the game is over, a room again');
  watcher.close();
});
