import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { listen } from './transport-support.js';
import { callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { packetProblems } from './game-packet-schemas.js';
import { GameSocket } from './game-socket-support.js';
import { ownTransaction } from '../src/db/connection.js';
import { startGame } from '../src/game/index.js';
import type { World } from '../src/world/schema.js';

/**
 * Playing and watching over the game server's WebSocket: games.resolve gives a player's or a
 * spectator's gs_token, players get every packet live, once and in order, whoever played it (over
 * the WebSocket or HTTP), spectators get the same packets after the configured delay.
 */

const world: World = { ...catalogWorld, users: [1, 2, 3].map((id) => user(id)) };
const delaySeconds = 5;

describe('the game server over WebSocket', () => {
  let server: TestServer;
  let url: string;
  const tokens = new Map<number, string>();
  const sockets: GameSocket[] = [];
  before(async () => {
    server = await startTestServer({ world, config: { games: { spectatorDelaySeconds: delaySeconds, stateCacheSize: 10_000 } } });
    url = await listen(server);
    for (const id of [1, 2, 3]) tokens.set(id, await tokenFor(server, id));
  });
  after(async () => {
    for (const s of sockets) s.close();
    await server.close();
  });
  const open = async (token: string, since?: number) => {
    const socket = await GameSocket.open(url, token, since);
    sockets.push(socket);
    return socket;
  };

  test('players act and see every packet live; a spectator sees the same after the delay; HTTP actions reach the sockets too', async () => {
    const { gameId } = await ownTransaction(server.db)((trx) => startGame(server.services, trx, { players: [1, 2], computers: 1 }));
    const resolved = await callOk(server, 'games.resolve', { gs_id: 'gs-1', gs_game_id: gameId }, { token: tokens.get(1) });
    assert.deepEqual(
      { ...resolved, gs_token: typeof resolved.gs_token },
      { gs_id: 'gs-1', gs_game_id: gameId, gs_token: 'string', player: 1, url: '/gs/ws' },
    );
    const second = await callOk(server, 'games.resolve', { gs_game_id: gameId }, { token: tokens.get(2) });
    const watching = await callOk(server, 'games.resolve', { gs_game_id: gameId }, { token: tokens.get(3) });
    assert.equal(watching.player, 0);
    const anonymous = await callOk(server, 'games.resolve', { gs_game_id: gameId });
    assert.equal(anonymous.player, 0);
    assert.deepEqual((await server.call('games.resolve', { gs_id: 'gs-9', gs_game_id: gameId })).body, {
      code: 1901,
      description: `no game ${gameId}`,
    });
    assert.deepEqual((await server.call('games.resolve', { gs_game_id: gameId + 100 })).body, {
      code: 1901,
      description: `no game ${gameId + 100}`,
    });

    const alice = await open(resolved.gs_token);
    const bob = await open(second.gs_token);
    const spectator = await open(watching.gs_token);
    await alice.untilSeq(0);
    await bob.untilSeq(0);
    assert.deepEqual(alice.frames[0], { type: 'ready', gs_game_id: gameId, user_id: 1, player: 1 });
    assert.deepEqual(spectator.frames[0], { type: 'ready', gs_game_id: gameId, user_id: 3, player: 0 });
    const [, setupPacket] = alice.packets()[0]!;
    assert.equal(setupPacket.v, 2);
    assert.deepEqual(packetProblems(setupPacket), []);
    assert.deepEqual(setupPacket.status.turn.action, { user_id: 1, list: ['roll-dices', 'contract.send'] });

    assert.deepEqual(await bob.act({ action: 'roll-dices' }), {
      type: 'answer',
      id: 'a0',
      code: 1902,
      description: 'it is not your turn to act',
    });
    assert.deepEqual(await spectator.act({ action: 'roll-dices' }), {
      type: 'answer',
      id: 'a0',
      code: 4,
      description: 'spectators do not act',
    });
    assert.deepEqual(await alice.act({ action: 'fly' }), {
      type: 'answer',
      id: 'a0',
      code: 2,
      description: (await alice.act({ action: 'fly' })).description,
    });
    assert.match((await alice.act({ action: 'fly' })).description, /^parameter action: /);
    assert.deepEqual(await alice.act({ action: 'roll-dices' }), { type: 'answer', id: 'a3', code: 0 });
    await alice.untilSeq(1);
    await bob.untilSeq(alice.lastSeq());
    assert.deepEqual(spectator.packets(), [], 'the spectator waits out the delay, the first packet too');

    // Play on, over HTTP and the WebSocket, whoever is expected, until a few packets went by.
    for (let moves = 0; moves < 6; moves++) {
      const status = alice.packets().at(-1)![1].status;
      const expected: number = status.turn.action.user_id;
      const list: string[] = status.turn.action.list;
      const action = ['roll-dices', 'purchase', 'auction.reject', 'rent.pay', 'bank.fee.pay', 'jail.release.pay', 'contract.reject'].find(
        (a) => list.includes(a),
      )!;
      const before = alice.lastSeq();
      if (moves % 2 === 0) await callOk(server, 'game.action', { game_id: gameId, action }, { token: tokens.get(expected) });
      else assert.equal((await (expected === 1 ? alice : bob).act({ action })).code, 0);
      await alice.until(() => alice.lastSeq() > before, 'the next packet');
    }
    const replay = await callOk(server, 'games.getReplay', { game_id: gameId }, { token: tokens.get(1) });
    await alice.untilSeq(replay.packets.length - 1);
    await bob.untilSeq(replay.packets.length - 1);
    const expectedPackets = replay.packets.map((p: unknown, seq: number) => [seq, p]);
    assert.deepEqual(JSON.parse(JSON.stringify(alice.packets())), expectedPackets, 'every packet once, in order');
    assert.deepEqual(JSON.parse(JSON.stringify(bob.packets())), expectedPackets);
    for (const [, packet] of alice.packets()) assert.deepEqual(packetProblems(packet), []);

    const watchedEarly = await callOk(server, 'games.getReplay', { game_id: gameId }, { token: tokens.get(3) });
    assert.deepEqual(watchedEarly, { status: 'live', packets: [] }, 'over HTTP too, a spectator waits out the delay');
    server.clock.advance(delaySeconds);
    const watched = await callOk(server, 'games.getReplay', { game_id: gameId }, { token: tokens.get(3) });
    assert.deepEqual(watched, replay, 'then sees the same packets over HTTP');
    await spectator.untilSeq(replay.packets.length - 1);
    assert.deepEqual(JSON.parse(JSON.stringify(spectator.packets())), expectedPackets, 'the spectator sees the same packets');

    const resumed = await open(resolved.gs_token, 2);
    await resumed.untilSeq(replay.packets.length - 1);
    assert.deepEqual(
      resumed.packets().map(([seq]) => seq),
      expectedPackets.slice(3).map(([seq]: [number]) => seq),
      'since=2 starts after packet 2',
    );
    for (const id of [1, 2]) await callOk(server, 'game.action', { game_id: gameId, action: 'leave' }, { token: tokens.get(id) });
  });

  test('a bad or forged gs_token is refused with 4401', async () => {
    for (const token of ['', 'nope', '1.1.p.9999999999.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
      const socket = await open(token);
      assert.deepEqual(await socket.closed, { code: 4401, reason: 'invalid or expired gs_token' });
    }
  });
});
