import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { packetProblems } from './game-packet-schemas.js';
import { ownTransaction } from '../src/db/connection.js';
import { ApiError } from '../src/api/errors.js';
import { listLiveGames, liveGamesOf, startGame, type NewLiveGame } from '../src/game/index.js';
import type { World } from '../src/world/schema.js';

/**
 * Live games of several players as the lobby starts them (startGame in the lobby's
 * transaction): each player plays their own turns through the API, a player is in one live
 * game at a time (even when two starts race), and one who leaves is free again.
 */

const world: World = { ...catalogWorld, users: [1, 2, 3, 4, 5, 6].map((id) => user(id)) };

describe('live games started by the lobby', () => {
  let server: TestServer;
  const tokens = new Map<number, string>();
  before(async () => {
    server = await startTestServer({ world });
    for (const id of [1, 2, 3, 4, 5, 6]) tokens.set(id, await tokenFor(server, id));
  });
  after(() => server.close());

  const start = (input: NewLiveGame) => ownTransaction(server.db)((trx) => startGame(server.services, trx, input));
  const refusal = async (work: Promise<unknown>) => {
    const error = await work.then(
      () => assert.fail('expected a refusal'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ApiError, String(error));
    return { code: error.code, description: error.description, data: error.data };
  };

  test('two people and a computer: seats in order, each plays their own turn, one game each, leaving frees the seat', async () => {
    const { gameId, gsId } = await start({ players: [1, 2], computers: 1, options: { action_ms: 30_000 } });
    assert.equal(gsId, 'gs-1');
    assert.deepEqual(
      [...(await liveGamesOf(server.services, [1, 2, 3]))],
      [
        [1, { gs_id: 'gs-1', gs_game_id: gameId }],
        [2, { gs_id: 'gs-1', gs_game_id: gameId }],
      ],
    );
    const listed = await listLiveGames(server.services, { offset: 0, count: 10 });
    assert.deepEqual(listed.games[0], {
      gs_id: 'gs-1',
      gs_game_id: gameId,
      user_ids: [1, 2, -1],
      ts_start: Math.floor(server.clock.now() / 1000),
    });
    assert.equal(listed.count, 1);

    const replay = await callOk(server, 'games.getReplay', { game_id: gameId }, { token: tokens.get(2) });
    const first = replay.packets[0];
    assert.deepEqual(packetProblems(first), []);
    assert.deepEqual(
      first.setup.players.map((p: any) => p.user_id),
      [1, 2, -1],
    );
    assert.deepEqual(first.status.turn.action, { user_id: 1, list: ['roll-dices', 'contract.send'] });
    const notYours = await server.call('game.action', { game_id: gameId, action: 'roll-dices' }, { token: tokens.get(2) });
    assert.deepEqual(notYours.body, { code: 1902, description: 'it is not your turn to act' });
    const notPlaying = await server.call('game.action', { game_id: gameId, action: 'roll-dices' }, { token: tokens.get(3) });
    assert.deepEqual(notPlaying.body, { code: 1901, description: `no game ${gameId}` });
    const rolled = await callOk(server, 'game.action', { game_id: gameId, action: 'roll-dices' }, { token: tokens.get(1) });
    assert.equal(rolled.packets[0].events[0].type, 'roll-dices');
    assert.equal(rolled.packets[0].events[0].user_id, 1);

    assert.deepEqual(await refusal(start({ players: [3, 2] })), {
      code: 1903,
      description: `user 2 is already playing game ${gameId}`,
      data: { user_id: 2, gs_id: 'gs-1', gs_game_id: gameId },
    });
    assert.deepEqual(await liveGamesOf(server.services, [3]), new Map(), 'the refused start left nothing behind');
    const vsComputer = await server.call('games.createVsComputer', {}, { token: tokens.get(1) });
    assert.deepEqual(vsComputer.body, {
      code: 1903,
      description: `user 1 is already playing game ${gameId}`,
      data: { user_id: 1, gs_id: 'gs-1', gs_game_id: gameId },
    });

    const left = await callOk(server, 'game.action', { game_id: gameId, action: 'leave' }, { token: tokens.get(2) });
    assert.deepEqual(
      left.packets[0].events.slice(0, 2).map((e: any) => [e.type, e.user_id]),
      [
        ['leave', 2],
        ['bankrupt', 2],
      ],
    );
    assert.deepEqual([...(await liveGamesOf(server.services, [1, 2])).keys()], [1], 'the one who left is free; the game goes on');
    const again = await start({ players: [2, 3] });
    assert.ok(again.gameId > gameId);
    assert.equal((await listLiveGames(server.services, { offset: 0, count: 1 })).count, 2);

    const ended = await callOk(server, 'game.action', { game_id: gameId, action: 'leave' }, { token: tokens.get(1) });
    assert.equal(ended.packets.at(-1).events.at(-1).type, 'game-over');
    assert.deepEqual(await liveGamesOf(server.services, [1]), new Map(), 'a game over frees everyone');
    assert.deepEqual(
      (await listLiveGames(server.services, { offset: 0, count: 10 })).games.map((g) => g.gs_game_id),
      [again.gameId],
    );
    const lastTwo = await callOk(server, 'game.action', { game_id: again.gameId, action: 'leave' }, { token: tokens.get(2) });
    assert.deepEqual(lastTwo.packets.at(-1).events.at(-1), {
      ...lastTwo.packets.at(-1).events.at(-1),
      type: 'game-over',
      user_id_winner: 3,
    });
    assert.deepEqual(await liveGamesOf(server.services, [2, 3]), new Map());
  });

  test('bad lists are refused with 2 and store nothing', async () => {
    for (const input of [{ players: [4] }, { players: [4, 4] }, { players: [4, 0] }, { players: [4, 5], computers: 9 }]) {
      const answer = await refusal(start(input));
      assert.equal(answer.code, 2, JSON.stringify(answer));
    }
    assert.deepEqual(await liveGamesOf(server.services, [4, 5]), new Map());
  });

  test('starts racing for one player: exactly one has them', async () => {
    const results = await Promise.allSettled([start({ players: [4, 5] }), start({ players: [6, 5] }), start({ players: [5, 4] })]);
    const started = results.filter((r) => r.status === 'fulfilled');
    assert.equal(started.length, 1, JSON.stringify(results));
    for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as ApiError).code, 1903, String(r.reason));
    const seats = await liveGamesOf(server.services, [4, 5, 6]);
    const gameId = (started[0] as PromiseFulfilledResult<{ gameId: number }>).value.gameId;
    assert.equal(seats.get(5)!.gs_game_id, gameId);
    assert.equal(new Set([...seats.values()].map((s) => s.gs_game_id)).size, 1, 'no half-started game holds a seat');
  });
});
