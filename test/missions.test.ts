import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import { ok, type TestServer } from './helpers.js';
import { admin, adminCall, fails, startAdminServer } from './admin-support.js';
import { callOk, callVoid, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { allMethods } from '../src/domains.js';
import type { World } from '../src/world/schema.js';

/*
 * Missions, the weekly top and the season's pass through the API: an operator defines the
 * week's missions; games played in the lobby to their end count in them, in the week's top
 * and in the season's pass; each reward is given once a week, money through the ledger and
 * items into the inventory; the week's clock starts them again; world files carry missions
 * and their progress; execute.games and execute.profile show it all as the clients read it.
 */

const DAY = 86_400;
/** The test clock starts on Thursday 1 January 2026: its week started on Monday 29 December 2025. */
const WEEK1 = Date.UTC(2025, 11, 29) / 1000;
const WEEK2 = WEEK1 + 7 * DAY;
const WEEK3 = WEEK2 + 7 * DAY;

const USERS = [1, 2, 3, 4, 5, 6, 7, 8];
const world: World = { ...catalogWorld, users: USERS.map((id) => user(id)) };
let server: TestServer;
const tokens = new Map<number, string>();
const as = (userId: number) => ({ token: tokens.get(userId) });

before(async () => {
  server = await startAdminServer({ world });
  for (const id of USERS) tokens.set(id, await tokenFor(server, id));
});
after(() => server.close());

/** An execute.* method's `result`, checked against its published schema. */
async function resultOf(method: string, params: Record<string, unknown>, userId?: number): Promise<any> {
  const answer = await server.call(method, params, userId === undefined ? {} : as(userId));
  assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
  const check = TypeCompiler.Compile(allMethods().find((m) => m.name === method)!.result as TSchema);
  if (!check.Check(answer.body.result)) assert.fail(`${method}: ${JSON.stringify([...check.Errors(answer.body.result)].slice(0, 3))}`);
  return answer.body.result;
}

/** Fills an autostart room with the players (the first creates it), and has the leavers give up in order: the game's id. */
async function playRoom(players: number[], leavers: number[]): Promise<number> {
  const roomId = (await callOk(server, 'rooms.create', { maxplayers: players.length, option_autostart: 1 }, as(players[0]!))).room_id;
  for (const id of players.slice(1)) await callVoid(server, 'rooms.join', { room_id: roomId }, as(id));
  const room = (await callOk(server, 'rooms.get', { room_id: roomId }, as(players[0]!))).rooms[0];
  const gameId = Number(room.gs_game_id);
  for (const id of leavers) ok(await server.call('game.action', { game_id: gameId, action: 'leave' }, as(id)));
  return gameId;
}

const statusOf = async (gameId: number) => (await callOk(server, 'games.getReplay', { game_id: gameId }, as(1))).status;
const walletOf = async (userId: number) => (await resultOf('execute.wallet', {}, userId)).info.balance;
const missionEntries = async (userId: number) =>
  (await callOk(server, 'wallet.getHistory', { type: 'mission' }, as(userId))).history.map((e: any) => [e.amount, e.balance]);
const owned = async (userId: number, protoId: number) =>
  (await callOk(server, 'inventory.get', { add_legacy: 1 }, as(userId))).things.filter((t: any) => t.thing_prototype_id === protoId).length;
/** When the first game of the second week ended (Unix time): its rewards' time. */
let week2End = 0;
const missions = (userId: number) => callOk(server, 'missions.get', {}, as(userId));
const counters = async (userId: number) => (await missions(userId)).map((m: any) => [m.mission_id, m.counter, m.rewarded]);

describe('missions, the weekly top and the season’s pass', () => {
  test('the operator defines missions (checked, audited); players see the week’s active ones', async () => {
    const play = await admin(server, 'missionCreate', { name: 'Play a game', goal: 'play', target: 1, reward_type: 'money', reward: 5 });
    assert.deepEqual(play.mission, {
      mission_id: 1,
      name: 'Play a game',
      goal: 'play',
      target: 1,
      reward_type: 'money',
      reward: 5,
      active: 1,
      ts_created: Date.UTC(2026, 0, 1) / 1000,
    });
    await admin(server, 'missionCreate', { name: 'Win two games', goal: 'win', target: 2, reward_type: 'item', reward: 201 });
    await admin(server, 'missionCreate', { name: 'Hidden', goal: 'play', target: 1, reward_type: 'money', reward: 3, active: 0 });
    assert.match(
      fails(await adminCall(server, 'missionCreate', { name: 'X', goal: 'play', target: 1, reward_type: 'item', reward: 999 }), 2)
        .description!,
      /prototype 999 does not exist/,
    );
    assert.match(
      fails(await adminCall(server, 'missionCreate', { name: 'X', goal: 'play', target: 1, reward_type: 'money', reward: 1_000_001 }), 2)
        .description!,
      /at most 1000000 units/,
    );
    fails(await adminCall(server, 'missionCreate', { name: 'X', goal: 'lose', target: 1, reward_type: 'money', reward: 1 }), 2);
    assert.match(fails(await adminCall(server, 'missionUpdate', { mission_id: 99, target: 3 }), 2).description!, /no mission 99/);
    assert.match(
      fails(await adminCall(server, 'missionUpdate', { mission_id: 2, reward: 998 }), 2).description!,
      /prototype 998 does not exist/,
    );
    // The refused change left the mission as it was.
    assert.deepEqual(
      (await admin(server, 'missionList')).missions.map((m: any) => [m.mission_id, m.reward, m.active]),
      [
        [1, 5, 1],
        [2, 201, 1],
        [3, 3, 0],
      ],
    );
    const audit = await admin(server, 'auditLog', { action: 'admin.missionCreate' });
    assert.deepEqual(
      audit.entries.map((e: any) => e.result_code),
      [2, 2, 2, 0, 0, 0],
    );

    const expire = WEEK2;
    assert.deepEqual(await missions(1), [
      {
        mission_id: 1,
        name: 'Play a game',
        goal: 'play',
        counter: 0,
        target: 1,
        reward_type: 'money',
        reward: 5,
        rewarded: 0,
        ts_expire: expire,
      },
      {
        mission_id: 2,
        name: 'Win two games',
        goal: 'win',
        counter: 0,
        target: 2,
        reward_type: 'item',
        reward: 201,
        rewarded: 0,
        ts_expire: expire,
      },
    ]);
  });

  test('finished games count in the missions, rewards are given once, and the week’s top and the season’s pass show them', async () => {
    const first = await playRoom([1, 2], [2]);
    assert.equal(await statusOf(first), 'over');
    assert.deepEqual(await counters(1), [
      [1, 1, 1],
      [2, 1, 0],
    ]);
    assert.deepEqual(await counters(2), [
      [1, 1, 1],
      [2, 0, 0],
    ]);
    assert.deepEqual([await walletOf(1), await walletOf(2)], [5, 5]);
    assert.deepEqual(await missionEntries(1), [[5, 5]]);
    assert.equal(await owned(1, 201), 0);

    await playRoom([1, 2], [2]);
    assert.deepEqual(await counters(1), [
      [1, 1, 1],
      [2, 2, 1],
    ]);
    assert.equal(await owned(1, 201), 1, 'the second win gives the item');
    assert.deepEqual(await missionEntries(1), [[5, 5]], 'the money of the week was given once');
    await playRoom([2, 1], [1]);
    assert.deepEqual(await counters(2), [
      [1, 1, 1],
      [2, 1, 0],
    ]);
    assert.equal(await owned(1, 201), 1);
    assert.deepEqual([await walletOf(1), await walletOf(2)], [5, 5]);

    // Points are the experience of the week's games: 10 a game, 20 more a win.
    const top = await callOk(server, 'users.getTopWeek', {}, as(3));
    assert.deepEqual(
      { ...top, users_data: top.users_data.map((u: any) => u.user_id) },
      {
        ts_start: WEEK1,
        ts_end: WEEK2,
        count: 2,
        top: { position: 0, games: 0, games_wins: 0, points: 0 },
        list: [
          { position: 1, user_id: 1, games: 3, games_wins: 2, points: 70 },
          { position: 2, user_id: 2, games: 3, games_wins: 1, points: 50 },
        ],
        users_data: [1, 2],
      },
    );
    assert.deepEqual((await callOk(server, 'users.getTopWeek', { offset: 1, count: 1 }, as(2))).list, [
      { position: 2, user_id: 2, games: 3, games_wins: 1, points: 50 },
    ]);
    assert.deepEqual((await callOk(server, 'users.getTopWeek', {}, as(2))).top, { position: 2, games: 3, games_wins: 1, points: 50 });
    assert.deepEqual(await callOk(server, 'seasonpass.get', {}, as(1)), {
      season: { season_id: 1, ts_start: Date.UTC(2026, 0, 1) / 1000, ts_end: Date.UTC(2026, 0, 31) / 1000 },
      level: 0,
      levels: 30,
      xp: 70,
      xp_level: 100,
      xp_next: 30,
      games: 3,
      games_wins: 2,
    });

    const home = await resultOf('execute.games', { logged_in: 1 }, 1);
    assert.deepEqual(Object.keys(home).sort(), [
      'blog',
      'friends',
      'gchat',
      'gm_shuffle',
      'is_vip_free_allowed',
      'missions',
      'rooms',
      'seasonpass',
      'streams',
      'top_week',
    ]);
    assert.deepEqual(home.missions, await missions(1));
    assert.deepEqual(
      [home.seasonpass, home.top_week, home.rooms, home.friends, home.blog, home.streams, home.gm_shuffle, home.is_vip_free_allowed],
      [
        0,
        { top: { position: 1, games: 3, games_wins: 2, points: 70 } },
        { rooms: [], users_data: [] },
        { count: 0, friends: [] },
        { posts: [] },
        [],
        {},
        0,
      ],
    );
    assert.deepEqual(home.gchat, await callOk(server, 'gchat.get', {}));
    const visitor = await resultOf('execute.games', { logged_in: 0 }, 1);
    assert.deepEqual([visitor.missions, visitor.seasonpass, visitor.top_week.top.position], [[], 0, 0]);

    const profile = await resultOf('execute.profile', { user_id: 1 }, 2);
    assert.deepEqual(
      [profile.user.user_id, profile.user.games, profile.user.games_wins, profile.user.xp, profile.user.xp_level],
      [1, 3, 2, 70, 0],
    );
    assert.deepEqual(profile.user, (await callOk(server, 'users.get', { user_ids: '1', type: 'full' }, as(2)))[0]);
    assert.equal((await server.call('execute.profile', { user_id: 999 }, as(1))).body.code, 101);
  });

  test('a new week starts the missions and the top again; the season goes on', async () => {
    server.clock.set(WEEK2 * 1000 + 3600);
    assert.deepEqual(
      (await missions(1)).map((m: any) => [m.mission_id, m.counter, m.rewarded, m.ts_expire]),
      [
        [1, 0, 0, WEEK3],
        [2, 0, 0, WEEK3],
      ],
    );
    assert.equal((await callOk(server, 'users.getTopWeek', {}, as(1))).count, 0);
    await playRoom([1, 2], [2]);
    week2End = (await callOk(server, 'games.my', {}, as(1))).games[0].ts_end;
    assert.deepEqual(await missionEntries(1), [
      [5, 10],
      [5, 5],
    ]);
    assert.deepEqual(await counters(1), [
      [1, 1, 1],
      [2, 1, 0],
    ]);
    const pass = await callOk(server, 'seasonpass.get', {}, as(1));
    assert.deepEqual([pass.xp, pass.level, pass.xp_next, pass.games], [100, 1, 100, 4]);
    assert.deepEqual((await callOk(server, 'users.getTopWeek', {}, as(1))).list, [
      { position: 1, user_id: 1, games: 1, games_wins: 1, points: 30 },
      { position: 2, user_id: 2, games: 1, games_wins: 0, points: 10 },
    ]);
  });

  test('world files carry missions and their progress, checked on import', async () => {
    const exported = (await admin(server, 'exportWorld')).world;
    assert.deepEqual(
      exported.missions.map((m: any) => ({ ...m, ts_created: undefined })),
      [
        {
          mission_id: 1,
          name: 'Play a game',
          goal: 'play',
          target: 1,
          reward_type: 'money',
          reward: 5,
          active: 1,
          ts_created: undefined,
          progress: [
            { user_id: 1, week: WEEK1, counter: 3, ts_rewarded: WEEK1 + 3 * DAY },
            { user_id: 2, week: WEEK1, counter: 3, ts_rewarded: WEEK1 + 3 * DAY },
            { user_id: 1, week: WEEK2, counter: 1, ts_rewarded: week2End },
            { user_id: 2, week: WEEK2, counter: 1, ts_rewarded: week2End },
          ],
        },
        {
          mission_id: 2,
          name: 'Win two games',
          goal: 'win',
          target: 2,
          reward_type: 'item',
          reward: 201,
          active: 1,
          ts_created: undefined,
          progress: [
            { user_id: 1, week: WEEK1, counter: 2, ts_rewarded: WEEK1 + 3 * DAY },
            { user_id: 2, week: WEEK1, counter: 1 },
            { user_id: 1, week: WEEK2, counter: 1 },
          ],
        },
        {
          mission_id: 3,
          name: 'Hidden',
          goal: 'play',
          target: 1,
          reward_type: 'money',
          reward: 3,
          active: 0,
          ts_created: undefined,
          progress: [],
        },
      ],
    );

    const bad = {
      missions: [
        {
          mission_id: 7,
          name: 'Bad',
          goal: 'play',
          target: 2,
          reward_type: 'item',
          reward: 4040,
          progress: [
            { user_id: 6, week: WEEK2, counter: 1 },
            { user_id: 3, week: WEEK2 + 3600, counter: 1 },
            { user_id: 4, week: WEEK2, counter: 1, ts_rewarded: WEEK2 },
            { user_id: 5, week: WEEK2, counter: 1 },
            { user_id: 5, week: WEEK2, counter: 2 },
          ],
        },
        { mission_id: 7, name: 'Twice', goal: 'win', target: 1, reward_type: 'money', reward: 2_000_000 },
      ],
    };
    const refused = fails(await adminCall(server, 'importWorld', { world: JSON.stringify(bad) }), 2).description!;
    for (const problem of [
      /missions\[1\]\.mission_id: duplicate 7/,
      /missions\[1\]\.reward: money rewards are at most 1000000 units/,
      /missions\[0\]\.progress\[4\]\.user_id: duplicate 5 in week/,
      /missions\[0\]\.progress\[1\]\.week: \d+ is not a Monday at 00:00 UTC/,
      /missions\[0\]\.progress\[2\]: a reward given at 1 of the target 2/,
    ])
      assert.match(refused, problem);
    const unknown = {
      missions: [
        {
          mission_id: 8,
          name: 'Unknown',
          goal: 'play',
          target: 1,
          reward_type: 'item',
          reward: 4040,
          progress: [{ user_id: 99, week: WEEK2, counter: 1 }],
        },
      ],
    };
    const outside = fails(await adminCall(server, 'importWorld', { world: JSON.stringify(unknown) }), 2).description!;
    assert.match(outside, /99/);
    assert.match(outside, /4040/);
    assert.deepEqual(
      (await admin(server, 'missionList')).missions.map((m: any) => m.mission_id),
      [1, 2, 3],
    );

    // A merge replaces a mission and its progress.
    await admin(server, 'importWorld', {
      world: JSON.stringify({
        missions: [
          {
            mission_id: 2,
            name: 'Win three games',
            goal: 'win',
            target: 3,
            reward_type: 'item',
            reward: 201,
            progress: [{ user_id: 3, week: WEEK2, counter: 2 }],
          },
        ],
      }),
    });
    assert.deepEqual(
      (await missions(3)).map((m: any) => [m.mission_id, m.name, m.counter, m.target]),
      [
        [1, 'Play a game', 0, 1],
        [2, 'Win three games', 2, 3],
      ],
    );
    assert.deepEqual(await counters(1), [
      [1, 1, 1],
      [2, 0, 0],
    ]);
    await playRoom([3, 4], [4]);
    const ended = (await callOk(server, 'games.my', {}, as(3))).games[0].ts_end;
    assert.deepEqual(await counters(3), [
      [1, 1, 1],
      [2, 3, 1],
    ]);
    assert.equal(await owned(3, 201), 1);
    const again = (await admin(server, 'exportWorld')).world;
    assert.deepEqual(again.missions.find((m: any) => m.mission_id === 2).progress, [
      { user_id: 3, week: WEEK2, counter: 3, ts_rewarded: ended },
    ]);

    await admin(server, 'missionDelete', { mission_id: 2 });
    assert.deepEqual(
      (await missions(3)).map((m: any) => m.mission_id),
      [1],
    );
    fails(await adminCall(server, 'missionDelete', { mission_id: 2 }), 2);
  });
});
