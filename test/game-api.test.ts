import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { missing } from './components.js';
import { CLUSTERED, callsInTurn, startProcesses } from './race-support.js';
import { callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { packetProblems } from './game-packet-schemas.js';
import { applyEvents, classicBoard, defaultOptions, startReplay, type GameEvent } from '../src/game/engine/index.js';
import type { World } from '../src/world/schema.js';

/**
 * Playing the classic board game against the computer through the API: every packet reads with
 * the game SDK's schemas and replays to the state it shows, refused actions store nothing, the
 * end is counted in the profile with the game listed, and a game resumes on a new server from
 * its stored actions.
 */

const world: World = { ...catalogWorld, users: [user(1), user(2)] };

type Packet = { setup?: any; events: GameEvent[]; status: any; time: any };

function aliceMove(status: any): Record<string, unknown> {
  const list: string[] = status.turn.action.list;
  for (const action of [
    'roll-dices',
    'purchase',
    'auction.put',
    'auction.reject',
    'contract.reject',
    'rent.pay',
    'bank.fee.pay',
    'jail.release.pay',
  ])
    if (list.includes(action)) return { action };
  throw new Error(`no move for ${list.join(',')}`);
}

describe('games against the computer', () => {
  let server: TestServer;
  const tokens = new Map<number, string>();
  before(async () => {
    server = await startTestServer({ world });
    for (const id of [1, 2]) tokens.set(id, await tokenFor(server, id));
  });
  after(() => server.close());

  const call = (userId: number, method: string, params: Record<string, unknown>) =>
    server.call(method, params, { token: tokens.get(userId) });

  test('a game from its first packet to the caller leaving: packets replay, the end is counted once and listed', async () => {
    const created = await callOk(server, 'games.createVsComputer', { computers: 2 }, { token: tokens.get(1) });
    const gameId: number = created.game_id;
    const received: Packet[] = [...created.packets];
    const first = received[0]!;
    assert.deepEqual(packetProblems(first), []);
    assert.deepEqual(
      first.setup.players.map((p: any) => p.user_id),
      [1, -1, -2],
    );
    assert.equal(first.setup.random.seed_sha256.length, 64);
    assert.deepEqual(first.status.turn.action, { user_id: 1, list: ['roll-dices', 'contract.send'] });
    const replay = startReplay(classicBoard, first.setup.players, defaultOptions.start_cash);
    let last = first;
    for (let move = 0; move < 12 && last.status.turn.action.user_id === 1; move++) {
      const data = await callOk(server, 'game.action', { game_id: gameId, ...aliceMove(last.status) }, { token: tokens.get(1) });
      assert.ok(data.packets.length >= 1);
      for (const packet of data.packets as Packet[]) {
        assert.deepEqual(packetProblems(packet), []);
        applyEvents(replay, packet.events);
        received.push(packet);
        last = packet;
      }
      assert.deepEqual(
        [...replay.players.values()].map((p) => [p.user_id, p.cash, p.position]),
        last.status.players.map((p: any) => [p.user_id, p.cash, p.position]),
      );
    }
    const refused = await call(1, 'game.action', { game_id: gameId, action: 'mortgage.buyback', field_id: 1 });
    assert.equal(refused.body.code, 1902);
    assert.match(String(refused.body.description), /not expected now|not your turn/);
    assert.deepEqual((await call(2, 'game.action', { game_id: gameId, action: 'roll-dices' })).body, {
      code: 1901,
      description: `no game ${gameId}`,
    });
    assert.deepEqual(
      (await call(2, 'games.getReplay', { game_id: gameId })).body,
      { code: 0, data: { status: 'live', packets: [] } },
      'a spectator sees nothing played within the spectators’ delay',
    );
    const left = await callOk(server, 'game.action', { game_id: gameId, action: 'leave' }, { token: tokens.get(1) });
    const end: Packet = left.packets.at(-1);
    received.push(...left.packets);
    assert.deepEqual(
      left.packets[0].events.slice(0, 2).map((e: GameEvent) => e.type),
      ['leave', 'bankrupt'],
    );
    assert.equal(end.events.at(-1)!.type, 'game-over', 'the computer players play the game out');
    assert.equal(end.status.turn.user_id, null);
    const seed = end.events.at(-1)!.seed as string;
    const { createHash } = await import('node:crypto');
    assert.equal(
      createHash('sha256').update(seed).digest('hex'),
      first.setup.random.seed_sha256,
      'the revealed seed is the one committed to',
    );

    const [profile] = await callOk(server, 'users.get', { user_ids: '1' }, { token: tokens.get(1) });
    assert.deepEqual([profile.games, profile.games_wins, profile.xp], [1, 0, 10]);
    const again = await call(1, 'game.action', { game_id: gameId, action: 'roll-dices' });
    assert.deepEqual(again.body, { code: 1902, description: 'the game is over' });
    const [unchanged] = await callOk(server, 'users.get', { user_ids: '1' }, { token: tokens.get(1) });
    assert.equal(unchanged.games, 1, 'counted once');

    const mine = await callOk(server, 'games.my', {}, { token: tokens.get(1) });
    assert.equal(mine.count, 1);
    assert.deepEqual(mine.games[0].game_id, gameId);
    assert.equal(mine.games[0].status, 'over');
    assert.equal(mine.games[0].user_ids.length, 3);
    assert.ok(mine.games[0].winner_user_id < 0, 'a computer player won');

    const replayed = await callOk(server, 'games.getReplay', { game_id: gameId }, { token: tokens.get(2) });
    assert.equal(replayed.status, 'over');
    assert.deepEqual(
      JSON.parse(JSON.stringify(replayed.packets)),
      JSON.parse(JSON.stringify(received)),
      'a finished game replays as it was played',
    );
  });

  test('bad input answers 2, never 3', async () => {
    for (const params of [{ game_id: 1, action: 'fly' }, { game_id: -1, action: 'roll-dices' }, { action: 'roll-dices' }]) {
      const answer = await call(1, 'game.action', params);
      assert.equal(answer.body.code, 2, JSON.stringify(answer.body));
    }
    const created = await callOk(server, 'games.createVsComputer', {}, { token: tokens.get(1) });
    const noField = await call(1, 'game.action', { game_id: created.game_id, action: 'level.build' });
    assert.deepEqual(noField.body, { code: 2, description: 'parameter field_id: required for level.build' });
    const contract = await call(1, 'game.action', {
      game_id: created.game_id,
      action: 'contract.send',
      user_id_to: -1,
      take_field_ids: '1,x',
    });
    assert.equal(contract.body.code, 2);
    assert.equal((await call(1, 'games.createVsComputer', { computers: 4 })).body.code, 2);
    await callOk(server, 'game.action', { game_id: created.game_id, action: 'leave' }, { token: tokens.get(1) });
  });

  test('time runs out: the default action is played without anyone calling, and stored', async () => {
    const created = await callOk(server, 'games.createVsComputer', { action_seconds: 10 }, { token: tokens.get(1) });
    server.clock.advance(11);
    let replay = await callOk(server, 'games.getReplay', { game_id: created.game_id }, { token: tokens.get(1) });
    for (let tries = 0; replay.packets.length < 2 && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      replay = await callOk(server, 'games.getReplay', { game_id: created.game_id }, { token: tokens.get(1) });
    }
    assert.deepEqual(replay.packets[1].events[0], { id: '1', type: 'roll-dices', user_id: 1, dices: replay.packets[1].events[0].dices });
    assert.equal(replay.packets[1].time.ts_now, created.packets[0].time.ts_now + 10_000, 'played at the time it fell due');
    const left = await callOk(server, 'game.action', { game_id: created.game_id, action: 'leave' }, { token: tokens.get(1) });
    assert.equal(left.packets[0].events[0].type, 'leave');
  });
});

test('a game resumes on a new server from its stored actions', async () => {
  const first = await startTestServer({ world });
  const token = await tokenFor(first, 1);
  const created = await callOk(first, 'games.createVsComputer', { computers: 1 }, { token });
  await callOk(first, 'game.action', { game_id: created.game_id, action: 'roll-dices' }, { token });
  const before = await callOk(first, 'games.getReplay', { game_id: created.game_id }, { token });
  await first.app.close();
  const second = await startTestServer({ location: first.location });
  try {
    const after = await callOk(second, 'games.getReplay', { game_id: created.game_id }, { token });
    assert.deepEqual(after, before);
    const status = before.packets.at(-1).status;
    const next = await second.call('game.action', { game_id: created.game_id, ...aliceMove(status) }, { token });
    assert.equal(next.body.code, 0, JSON.stringify(next.body));
  } finally {
    await second.close();
    await first.db.close();
    await first.location.dispose();
  }
});

test(
  'concurrent actions on one game over two processes: one is played, the others refused, the end counted once',
  { skip: CLUSTERED && missing.redis },
  async () => {
    const processes = await startProcesses({ world, redis: false });
    try {
      const [server] = processes.servers;
      const token = await tokenFor(server!, 1);
      const call = callsInTurn(processes, () => token);
      const created = await call(1, 'games.createVsComputer', { computers: 1 });
      const gameId = created.data.game_id;
      const answers = await Promise.all(Array.from({ length: 8 }, () => call(1, 'game.action', { game_id: gameId, action: 'leave' })));
      assert.equal(answers.filter((a) => a.code === 0).length, 1, JSON.stringify(answers.map((a) => a.code)));
      for (const a of answers.filter((x) => x.code !== 0)) assert.equal(a.code, 1902, JSON.stringify(a));
      const [profile] = (await call(1, 'users.get', { user_ids: '1' })).data;
      assert.deepEqual([profile.games, profile.games_wins], [1, 0]);
      const replay = await call(1, 'games.getReplay', { game_id: gameId });
      assert.equal(replay.data.packets.filter((p: Packet) => p.events.some((e) => e.type === 'leave')).length, 1);
    } finally {
      await processes.close();
    }
  },
);
