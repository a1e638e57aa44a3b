import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, adminCall, fails, startAdminServer } from './admin-support.js';
import { callOk, callVoid, tokenFor, user } from './item-fixtures.js';
import type { TestServer } from './helpers.js';
import type { World } from '../src/world/schema.js';

/*
 * World files carry the lobby: waiting rooms with their players, invitations, kicked users and
 * settings, and finished games with their seats, result, times and actions. An export imported
 * again (replace, or merge into another server) gives the same rooms and games, and the same
 * replays; bad entries are refused naming the entry, and change nothing.
 */

const world: World = { users: [1, 2, 3, 4, 5, 6].map((id) => user(id)) };

/** A lobby and two finished games, made through the API. */
async function playSome(server: TestServer): Promise<{ roomId: number; vsComputer: number; between: number }> {
  const token = new Map<number, string>();
  for (const id of [1, 2, 3, 4, 5, 6]) token.set(id, await tokenFor(server, id));
  const as = (id: number) => ({ token: token.get(id) });
  // 1 plays the computer and leaves: the computer wins.
  const vsComputer: number = (await callOk(server, 'games.createVsComputer', { computers: 1 }, as(1))).game_id;
  await callOk(server, 'game.action', { game_id: vsComputer, action: 'leave' }, as(1));
  // 3 and 4 play each other from a room; 3 leaves, 4 wins.
  const duel: string = (await callOk(server, 'rooms.create', { maxplayers: 2 }, as(3))).room_id;
  await callVoid(server, 'rooms.join', { room_id: duel }, as(4));
  await callVoid(server, 'rooms.startGame', { room_id: duel }, as(3));
  const between = Number((await callOk(server, 'rooms.get', { room_id: duel }, as(3))).rooms[0].gs_game_id);
  await callOk(server, 'game.action', { game_id: between, action: 'leave' }, as(3));
  // A private room waiting: 1 and 2 in it, 6 kicked, 5 invited.
  const room: string = (await callOk(server, 'rooms.create', { maxplayers: 4, option_private: 1 }, as(1))).room_id;
  for (const id of [2, 6]) {
    await callVoid(server, 'rooms.invite', { room_id: room, user_id: id }, as(1));
    await callVoid(server, 'rooms.join', { room_id: room }, as(id));
  }
  await callVoid(server, 'rooms.kick', { room_id: room, user_id: 6 }, as(1));
  await callVoid(server, 'rooms.invite', { room_id: room, user_id: 5 }, as(2));
  return { roomId: Number(room), vsComputer, between };
}

const replay = async (server: TestServer, gameId: number, userId: number) =>
  callOk(server, 'games.getReplay', { game_id: gameId }, { token: await tokenFor(server, userId) });

test('export and import carry waiting rooms and finished games, their replays too, both ways', async () => {
  const server = await startAdminServer({ world });
  const copy = await startAdminServer();
  try {
    const { roomId, vsComputer, between } = await playSome(server);
    const ts = Math.floor(server.clock.now() / 1000);
    const exported = (await admin(server, 'exportWorld')).world as World;
    assert.deepEqual(exported.rooms, [
      {
        room_id: roomId,
        admin_id: 1,
        players: [1, 2],
        maxplayers: 4,
        private: 1,
        autostart: 0,
        invites: [{ user_id: 5, inviter_id: 2, ts }],
        bans: [6],
        ts_created: ts,
        v: exported.rooms![0]!.v,
      },
    ]);
    assert.ok(exported.rooms![0]!.v! > 1);
    assert.deepEqual(
      exported.games!.map((g) => [g.game_id, g.players.map((p) => [p.user_id, p.computer]), g.winner_user_id, g.actions.length > 0]),
      [
        [
          vsComputer,
          [
            [1, undefined],
            [-1, 1],
          ],
          -1,
          true,
        ],
        [
          between,
          [
            [3, undefined],
            [4, undefined],
          ],
          4,
          true,
        ],
      ],
    );
    assert.ok(exported.games!.every((g) => g.config === undefined && g.ts_end_ms >= g.ts_start_ms && /^[0-9a-f]{32}$/.test(g.seed)));
    const replays = [await replay(server, vsComputer, 2), await replay(server, between, 2)];

    for (const [target, mode] of [
      [server, 'replace'],
      [copy, 'merge'],
    ] as const) {
      await admin(target, 'importWorld', { world: JSON.stringify(exported), mode });
      const again = (await admin(target, 'exportWorld')).world as World;
      assert.deepEqual(again.rooms, exported.rooms, mode);
      assert.deepEqual(again.games, exported.games, mode);
      assert.deepEqual([await replay(target, vsComputer, 2), await replay(target, between, 2)], replays, mode);
      const mine = await callOk(target, 'games.my', {}, { token: await tokenFor(target, 4) });
      assert.deepEqual(
        mine.games.map((g: any) => [g.game_id, g.status, g.user_ids, g.winner_user_id]),
        [[between, 'over', [3, 4], 4]],
      );
      const shown = await callOk(target, 'rooms.get', { room_id: String(roomId) }, { token: await tokenFor(target, 5) });
      assert.deepEqual(
        [shown.rooms[0].players, shown.rooms[0].invites, shown.rooms[0].bans, shown.rooms[0].settings.private],
        [[[1, 2]], [[5, 2]], [6], 1],
      );
      // The invited user joins the imported room; new rooms and games are numbered after the file's.
      await callVoid(target, 'rooms.join', { room_id: String(roomId) }, { token: await tokenFor(target, 5) });
      const next = Number((await callOk(target, 'rooms.create', { maxplayers: 2 }, { token: await tokenFor(target, 3) })).room_id);
      assert.ok(next > roomId);
      const game = (await callOk(target, 'games.createVsComputer', {}, { token: await tokenFor(target, 6) })).game_id;
      assert.ok(game > between);
    }

    // A merge that replaces a stored room raises its version past the stored one, for the clients' patches.
    const stored = ((await admin(copy, 'exportWorld')).world as World).rooms!.find((r) => r.room_id === roomId)!;
    const merged = { rooms: [{ ...exported.rooms![0]!, v: 1 }] };
    await admin(copy, 'importWorld', { world: JSON.stringify(merged), mode: 'merge' });
    const after = ((await admin(copy, 'exportWorld')).world as World).rooms!.find((r) => r.room_id === roomId)!;
    assert.deepEqual([after.players, after.v], [[1, 2], stored.v! + 1]);
  } finally {
    await copy.close();
    await server.close();
  }
});

test('bad rooms and games are refused, naming the entry, and change nothing', async () => {
  const server = await startAdminServer({ world });
  try {
    const { roomId, between } = await playSome(server);
    const exported = (await admin(server, 'exportWorld')).world as World;
    const [game] = exported.games!.filter((g) => g.game_id === between);
    const room = (over: Record<string, unknown>) => ({ room_id: 90, admin_id: 3, players: [3], maxplayers: 3, ...over });
    // A live game: 1 plays the computer.
    const live = (await callOk(server, 'games.createVsComputer', {}, { token: await tokenFor(server, 5) })).game_id;
    // The lobby's sections (the users' last_seen moves on its own as the calls above are recorded).
    const lobby = async () => {
      const { rooms, games } = (await admin(server, 'exportWorld')).world as World;
      const live = await callOk(server, 'games.my', {}, { token: await tokenFor(server, 5) });
      return { rooms, games, live };
    };
    const before = await lobby();

    const cases: [string, Partial<World>, RegExp][] = [
      ['replace', { rooms: [room({ players: [3, 99] })] }, /rooms\[0\]\.players\[1\]: unknown user 99/],
      [
        'replace',
        { rooms: [room({}), room({ room_id: 91, admin_id: 4, players: [4, 3] })] },
        /rooms\[1\]\.players\[1\]: user 3 is already in rooms\[0\]/,
      ],
      ['replace', { rooms: [room({ game_submode: 1 })] }, /rooms\[0\]\.game_submode: only the classic game \(0\) is played, not 1/],
      ['replace', { rooms: [room({ br_corner: 2 })] }, /rooms\[0\]\.br_corner: only 0/],
      ['replace', { rooms: [room({ game_timers: 0 })] }, /rooms\[0\]\.game_timers: only 1/],
      ['replace', { rooms: [room({ maxplayers: 6 })] }, /rooms\[0\]\.maxplayers/],
      ['replace', { rooms: [room({ admin_id: 4 })] }, /rooms\[0\]\.admin_id: user 4 is not one of its players/],
      ['replace', { rooms: [room({ players: [3, 4, 5], autostart: 1 })] }, /rooms\[0\]: a full room set to autostart would have started/],
      [
        'replace',
        { rooms: [room({ players: [3, 4, 5, 6], maxplayers: 3 })] },
        /rooms\[0\]\.players: 4 players, more than its maxplayers 3/,
      ],
      ['replace', { rooms: [room({ invites: [{ user_id: 4 }], bans: [4] })] }, /rooms\[0\]\.bans\[0\]: user 4 is also invited/],
      ['replace', { rooms: [room({ invites: [{ user_id: 3 }] })] }, /rooms\[0\]\.invites\[0\]\.user_id: user 3 is a player of the room/],
      ['replace', { games: [{ ...game!, winner_user_id: 3 }] }, /games\[0\]\.winner_user_id: its actions make user 4 the winner, not 3/],
      ['replace', { games: [{ ...game!, actions: game!.actions.slice(0, -1) }] }, /games\[0\]\.actions: the game is not over after its/],
      ['replace', { games: [{ ...game!, winner_user_id: 5 }] }, /games\[0\]\.winner_user_id: 5 is not one of its players/],
      [
        'replace',
        { games: [{ ...game!, players: [{ user_id: 3 }, { user_id: -1 }] }] },
        /games\[0\]\.players\[1\]: computer players, and only they, have negative user ids and computer 1/,
      ],
      ['replace', { games: [game!, game!] }, /games\[1\]\.game_id: duplicate/],
      // Against the stored lobby: 2 sits in the stored room, 5 plays a live game, a live game is not replaced.
      ['merge', { rooms: [room({ admin_id: 2, players: [2] })] }, new RegExp(`rooms\\[0\\]\\.players\\[0\\]: user 2 is in room ${roomId}`)],
      [
        'merge',
        { rooms: [room({ admin_id: 5, players: [5] })] },
        new RegExp(`rooms\\[0\\]\\.players\\[0\\]: user 5 plays the live game ${live}`),
      ],
      ['merge', { games: [{ ...game!, game_id: live }] }, new RegExp(`games\\[0\\]\\.game_id: game ${live} is live`)],
    ];
    for (const [mode, sections, problem] of cases) {
      const file = mode === 'replace' ? { ...world, ...sections } : sections;
      const answer = await adminCall(server, 'importWorld', { world: JSON.stringify(file), mode });
      assert.match(fails(answer, 2).description ?? '', problem, JSON.stringify(sections).slice(0, 200));
    }
    assert.deepEqual(await lobby(), before);
  } finally {
    await server.close();
  }
});
