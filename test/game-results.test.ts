import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DB_KIND, startTestServer, type TestServer } from './helpers.js';
import { defaultConfig } from '../src/config.js';
import { missing } from './components.js';
import { CLUSTERED, callsInTurn, startProcesses } from './race-support.js';
import { listen } from './transport-support.js';
import { callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { packetProblems } from './game-packet-schemas.js';
import { GameSocket } from './game-socket-support.js';
import { ownTransaction } from '../src/db/connection.js';
import { startGame, type NewLiveGame } from '../src/game/index.js';
import { rankPointsFor, rankShown, resultsOf, seasonAt } from '../src/game/results.js';
import { addRankPoints, writeShownRank } from '../src/game/queries.js';
import { expireRanks } from '../src/game/timers.js';
import type { Packet } from '../src/game/engine/index.js';
import type { World } from '../src/world/schema.js';

/**
 * What players bring into a game and what they take from it: the items equipped on the classic
 * board in `setup.players[].equipment` (in the first packet, the replay and the spectators'
 * stream), and the end of a game counted once in one transaction: places, xp, rank points of
 * the season, the rank users.get shows, and each seat's result in games.my.
 */

const USERS = [1, 2, 3, 4, 5, 6, 7, 8];
const world: World = {
  ...catalogWorld,
  users: USERS.map((id) => user(id, id === 5 ? { rank: { hidden: 1 } } : {})),
  items: [
    { item_id: 1001, user_id: 1, item_proto_id: 201, equip: { game: 'classic', slot: 'cards' } },
    { item_id: 1002, user_id: 1, item_proto_id: 102, equip: { game: 'classic', slot: 'cards' } },
    { item_id: 1003, user_id: 1, item_proto_id: 101, equip: { game: 'duel', slot: 'cards' } },
    { item_id: 1004, user_id: 1, item_proto_id: 601, equip: { game: 'classic', slot: 'generator' } },
    { item_id: 1005, user_id: 1, item_proto_id: 850, equip: { game: 'classic', slot: 'joke' } },
    { item_id: 1006, user_id: 1, item_proto_id: 301 },
    { item_id: 1007, user_id: 1, item_proto_id: 951, equip: { game: 'classic', slot: 'cards' } },
  ],
};

/** User 1's equipment on the classic board: monopoly 1's cards on fields 1 and 3 in item order, monopoly 2's on field 5. */
const ALICE_EQUIPMENT = {
  cards: [
    { field_id: 1, item_proto_id: 201, rent_multiplier: 1.25 },
    { field_id: 3, item_proto_id: 951, rent_multiplier: 2.5 },
    { field_id: 5, item_proto_id: 102, rent_multiplier: 1.1 },
  ],
  generator: { item_proto_id: 601 },
  joke: { item_proto_id: 850 },
};
const NONE = { cards: [] };

describe('equipment and results', () => {
  let server: TestServer;
  let base: string;
  const tokens = new Map<number, string>();
  before(async () => {
    const clock = (await import('../src/infra/clock.js')).ManualClock;
    const manual = new clock();
    server = await startTestServer({
      world,
      clock: manual,
      config: {
        games: { ...defaultConfig().games, spectatorDelaySeconds: 0, seasonStart: Math.floor(manual.now() / 1000), seasonDays: 7 },
      },
    });
    base = await listen(server);
    for (const id of USERS) tokens.set(id, await tokenFor(server, id));
  });
  after(() => server.close());

  const as = (userId: number) => ({ token: tokens.get(userId) });
  const start = (input: NewLiveGame) => ownTransaction(server.db)((trx) => startGame(server.services, trx, input));
  const profile = async (userId: number) => (await callOk(server, 'users.get', { user_ids: String(userId) }, as(userId)))[0];
  const leave = (userId: number, gameId: number) => callOk(server, 'game.action', { game_id: gameId, action: 'leave' }, as(userId));

  test('equipped cards, generator and taunt are in setup.players: first packet, replay and spectator stream; computers have none', async () => {
    const created = await callOk(server, 'games.createVsComputer', { computers: 1 }, as(1));
    const first = created.packets[0];
    assert.deepEqual(packetProblems(first), []);
    assert.deepEqual(
      first.setup.players.map((p: any) => [p.user_id, p.equipment]),
      [
        [1, ALICE_EQUIPMENT],
        [-1, NONE],
      ],
    );
    const watched = await callOk(server, 'games.resolve', { gs_game_id: created.game_id }, as(2));
    assert.equal(watched.player, 0);
    const spectator = await GameSocket.open(base, watched.gs_token);
    try {
      await spectator.untilSeq(0);
      assert.deepEqual(spectator.packets()[0]![1].setup.players[0].equipment, ALICE_EQUIPMENT);
    } finally {
      spectator.close();
    }
    await leave(1, created.game_id);
    const replay = await callOk(server, 'games.getReplay', { game_id: created.game_id }, as(3));
    assert.deepEqual(replay.packets[0].setup.players[0].equipment, ALICE_EQUIPMENT);
  });

  test('a lobby game seats each account with its own equipment', async () => {
    const { gameId } = await start({ players: [2, 1], options: { action_ms: 60_000 } });
    const replay = await callOk(server, 'games.getReplay', { game_id: gameId }, as(1));
    assert.deepEqual(packetProblems(replay.packets[0]), []);
    assert.deepEqual(
      replay.packets[0].setup.players.map((p: any) => [p.user_id, p.equipment]),
      [
        [2, NONE],
        [1, ALICE_EQUIPMENT],
      ],
    );
    await leave(2, gameId);
    // Counted as user 1's win over user 2: kept for the results test's totals below.
  });

  test('a game against the computer counts games and xp but no rank points; games.my shows each seat', async () => {
    const created = await callOk(server, 'games.createVsComputer', { computers: 2 }, as(4));
    const left = await leave(4, created.game_id);
    const over = left.packets.at(-1).events.at(-1);
    assert.equal(over.type, 'game-over');
    const me = await profile(4);
    assert.deepEqual([me.games, me.games_wins, me.xp, me.rank], [1, 0, 10, undefined]);
    const [entry] = (await callOk(server, 'games.my', {}, as(4))).games;
    const winner = over.user_id_winner as number;
    assert.deepEqual(entry.results, [
      { user_id: 4, place: 3, xp: 10, rank_pts: 0 },
      { user_id: -1, place: winner === -1 ? 1 : 2, xp: 0, rank_pts: 0 },
      { user_id: -2, place: winner === -2 ? 1 : 2, xp: 0, rank_pts: 0 },
    ]);
  });

  test('rated games: the winner gains, the leaver loses, qualifying games first, then the rank; a hidden rank stays hidden', async () => {
    for (let round = 1; round <= 3; round++) {
      const { gameId } = await start({ players: [2, 3], options: { action_ms: 60_000 } });
      await leave(2, gameId);
      if (round < 3) assert.deepEqual((await profile(3)).rank, { qual: 3 - round });
    }
    // User 2 played the lobby game above too (and lost it): 4 games, 4 rated losses of 30.
    const [two, three] = [await profile(2), await profile(3)];
    assert.deepEqual([two.games, two.games_wins, two.xp, two.rank], [4, 0, 40, { id: 5, pts: 880 }]);
    assert.deepEqual([three.games, three.games_wins, three.xp, three.rank], [3, 3, 90, { id: 6, pts: 1090 }]);
    const mine = await callOk(server, 'games.my', { count: 3 }, as(2));
    assert.equal(mine.count, 4);
    for (const game of mine.games) {
      assert.equal(game.winner_user_id, 3);
      assert.deepEqual(game.results, [
        { user_id: 2, place: 2, xp: 10, rank_pts: -30 },
        { user_id: 3, place: 1, xp: 30, rank_pts: 30 },
      ]);
    }
    const alice = await profile(1);
    assert.deepEqual(alice.rank, { qual: 2 }, 'user 1 won one rated game (the lobby game) of three to qualify');

    const { gameId } = await start({ players: [5, 6] });
    await leave(6, gameId);
    assert.deepEqual((await profile(5)).rank, { hidden: 1 }, 'the operator’s hidden rank stays hidden');
    assert.deepEqual((await profile(6)).rank, { qual: 2 });
    const stored = await server.db.kysely.selectFrom('game_ranks').selectAll().where('user_id', '=', 5).execute();
    assert.deepEqual(
      stored.map((r) => [Number(r.season), Number(r.pts), Number(r.games), Number(r.wins)]),
      [[1, 1030, 1, 1]],
    );
  });

  test('a new season: the ranks of earlier seasons show expired until their first game of it, which starts again at 1000', async () => {
    server.clock.advance(7 * 86400);
    for (let tries = 0; tries < 100 && (await profile(3)).rank?.expired !== 1; tries++) await new Promise((r) => setTimeout(r, 100));
    for (const id of [1, 2, 3, 6]) assert.deepEqual((await profile(id)).rank, { expired: 1 }, `user ${id}`);
    assert.deepEqual((await profile(5)).rank, { hidden: 1 });
    assert.equal((await profile(4)).rank, undefined, 'no rated game, no rank');
    const { gameId } = await start({ players: [3, 2] });
    await leave(3, gameId);
    assert.deepEqual((await profile(2)).rank, { qual: 2 });
    assert.deepEqual((await profile(1)).rank, { expired: 1 });
    const rows = await server.db.kysely.selectFrom('game_ranks').selectAll().where('season', '=', 2).orderBy('user_id').execute();
    assert.deepEqual(
      rows.map((r) => [Number(r.user_id), Number(r.pts), Number(r.games)]),
      [
        [2, 1030, 1],
        [3, 970, 1],
      ],
    );
  });
});

test('rank rules on worked examples', () => {
  assert.deepEqual(
    [1, 2].map((p) => rankPointsFor(p, 2, false)),
    [30, -30],
  );
  assert.deepEqual(
    [1, 2, 3, 4].map((p) => rankPointsFor(p, 4, false)),
    [30, 10, -10, -30],
  );
  assert.deepEqual(
    [1, 2, 3, 4, 5].map((p) => rankPointsFor(p, 5, false)),
    [30, 15, 0, -15, -30],
  );
  assert.equal(rankPointsFor(2, 4, true), -30, 'leaving is the last place’s loss');
  assert.deepEqual(rankShown({ pts: 1000, games: 1 }, 3), { qual: 2 });
  assert.deepEqual(rankShown({ pts: 1000, games: 3 }, 3), { id: 6, pts: 1000 });
  assert.deepEqual(rankShown({ pts: 199, games: 0 }, 0), { id: 1, pts: 199 });
  const settings = { seasonStart: 1_000_000, seasonDays: 10 };
  assert.deepEqual(
    [0, 1_000_000_000, 1_863_999_999, 1_864_000_000].map((ms) => seasonAt(settings, ms)),
    [1, 1, 1, 2],
  );
  assert.equal(seasonAt({ seasonStart: 0, seasonDays: 0 }, 9e12), 1);
  // Four seats: 7 goes bankrupt first, then 8 leaves, then the computer; 9 wins.
  const packet = (events: { type: string; user_id: number }[]): Packet =>
    ({
      v: 2,
      events: events.map((e, i) => ({ id: String(i + 1), ...e })),
      status: {},
      time: { ts_start: 0, ts_now: 0, inactive: 0 },
    }) as Packet;
  const { results, rated } = resultsOf(
    [
      packet([{ type: 'bankrupt', user_id: 7 }]),
      packet([
        { type: 'leave', user_id: 8 },
        { type: 'bankrupt', user_id: 8 },
      ]),
      packet([{ type: 'bankrupt', user_id: -1 }]),
    ],
    [7, 8, 9, -1],
    9,
    new Set([-1]),
  );
  assert.equal(rated, true);
  assert.deepEqual(results, [
    { user_id: 7, place: 4, xp: 10, rank_pts: -30 },
    { user_id: 8, place: 3, xp: 10, rank_pts: -30 },
    { user_id: 9, place: 1, xp: 30, rank_pts: 30 },
    { user_id: -1, place: 2, xp: 0, rank_pts: 0 },
  ]);
});

test(
  'two players leave a rated game at once over two processes: one ends it, the other is refused, it is counted once',
  { skip: CLUSTERED && missing.redis },
  async () => {
    const processes = await startProcesses({ world: { ...catalogWorld, users: [user(7), user(8)] }, redis: false });
    try {
      const [server] = processes.servers;
      const tokens = new Map([
        [7, await tokenFor(server!, 7)],
        [8, await tokenFor(server!, 8)],
      ]);
      const call = callsInTurn(processes, (id) => tokens.get(id));
      const ROUNDS = 6;
      for (let round = 0; round < ROUNDS; round++) {
        const { gameId } = await ownTransaction(server!.db)((trx) => startGame(server!.services, trx, { players: [7, 8] }));
        const answers = await Promise.all([7, 8].map((id) => call(id, 'game.action', { game_id: gameId, action: 'leave' })));
        assert.deepEqual(answers.map((a) => a.code).sort(), [0, 1902], JSON.stringify(answers));
        assert.equal(answers.find((a) => a.code === 1902).description, 'the game is over');
      }
      const profiles = (await call(7, 'users.get', { user_ids: '7,8' })).data;
      assert.deepEqual(
        profiles.map((p: any) => p.games),
        [ROUNDS, ROUNDS],
      );
      assert.equal(profiles[0].games_wins + profiles[1].games_wins, ROUNDS, 'one win a game');
      assert.equal(profiles[0].xp + profiles[1].xp, ROUNDS * 40);
      const ranks = await server!.db.kysely.selectFrom('game_ranks').selectAll().orderBy('user_id').execute();
      assert.deepEqual(
        ranks.map((r) => Number(r.games)),
        [ROUNDS, ROUNDS],
      );
      assert.equal(Number(ranks[0]!.pts) + Number(ranks[1]!.pts), 2000, 'every game moved 30 points from one to the other');
    } finally {
      await processes.close();
    }
  },
);

test(
  'a season’s expiry racing the end of a game of the new season leaves the new rank',
  { skip: DB_KIND === 'postgres' ? false : 'PostgreSQL only: SQLite has one writer' },
  async () => {
    const server = await startTestServer({ world: { ...catalogWorld, users: [user(9)] } });
    try {
      const db = server.db.kysely;
      await db.insertInto('game_ranks').values({ user_id: 9, season: 1, pts: 1060, games: 3, wins: 2 }).execute();
      await db.updateTable('users').set({ rank: '{"id":6,"pts":1060}' }).where('user_id', '=', 9).execute();
      let sweep: Promise<void> | undefined;
      // A game of season 2 ends (its writes, as the end makes them) while season 2's expiry runs.
      await db.transaction().execute(async (trx) => {
        await trx.updateTable('users').set({ games: 4 }).where('user_id', '=', 9).execute();
        const standing = await addRankPoints(trx, { userId: 9, season: 2, pts: 30, won: true, startPts: 1000 });
        await writeShownRank(trx, 9, JSON.stringify(rankShown(standing, 3)));
        sweep = expireRanks(server.services, 2);
        // Commit once the expiry waits for this transaction's row lock.
        for (let tries = 0; tries < 200; tries++) {
          const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and query like '%game_ranks%'`.execute(db);
          if (waiting.rows[0]!.n > 0) return;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        assert.fail('the expiry never waited for the game’s end');
      });
      await sweep;
      const [row] = await db.selectFrom('users').select('rank').where('user_id', '=', 9).execute();
      assert.equal(row!.rank, '{"qual":2}', 'the rank the game of the new season wrote');
      assert.deepEqual((await callOk(server, 'users.get', { user_ids: '9' }, { token: await tokenFor(server, 9) }))[0].rank, { qual: 2 });
    } finally {
      await server.close();
    }
  },
);
