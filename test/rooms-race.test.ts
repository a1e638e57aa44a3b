import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { needsRedis, callsInTurn, startProcesses, type Processes } from './race-support.js';
import { tokenFor, user } from './item-fixtures.js';
import type { TestServer } from './helpers.js';
import { missing } from './components.js';

/*
 * The lobby under concurrent requests, spread over two processes on PostgreSQL (one on
 * SQLite): the last seat is taken once, a player lands in one room however many they join at
 * once, a join racing the start is either in the game or refused, and so are a leave and a kick
 * racing it; nothing is left half done (members of a started room, a player in two rooms).
 */

const USERS = Array.from({ length: 40 }, (_, i) => i + 1);
/** Players not yet in a game (a started game keeps its players for good). */
let nextFresh = 13;
const fresh = (n: number) => Array.from({ length: n }, () => nextFresh++);
let processes: Processes;
let server: TestServer;
const tokens = new Map<number, string>();
let call: ReturnType<typeof callsInTurn>;

before(async () => {
  if (needsRedis) return;
  processes = await startProcesses({
    redis: !missing.redis,
    world: { users: USERS.map((id) => user(id)) },
  });
  server = processes.servers[0]!;
  for (const id of USERS) tokens.set(id, await tokenFor(server, id));
  call = callsInTurn(processes, (id) => tokens.get(id));
});
after(async () => {
  if (!needsRedis) await processes.close();
});
afterEach(async () => {
  if (needsRedis) return;
  for (const id of USERS) await call(id, 'rooms.leave', {});
  await server.db.kysely.deleteFrom('rooms').execute();
});

const codes = (answers: any[]) => answers.map((a) => a.code).sort((a, b) => a - b);

async function roomWith(admin: number, others: number[], params: Record<string, unknown> = {}): Promise<string> {
  const created = await call(admin, 'rooms.create', { maxplayers: 5, ...params });
  assert.equal(created.code, 0, JSON.stringify(created));
  for (const id of others) assert.equal((await call(id, 'rooms.join', { room_id: created.data.room_id })).code, 0);
  return created.data.room_id;
}

async function seated(roomId: string): Promise<number[]> {
  const rows = await server.db.kysely
    .selectFrom('room_members')
    .select('user_id')
    .where('room_id', '=', Number(roomId))
    .orderBy('seat')
    .execute();
  return rows.map((r) => Number(r.user_id));
}

/** The players of a game, in seat order, as it was started. */
async function gamePlayers(gameId: number): Promise<number[]> {
  const game = await server.db.kysely.selectFrom('games').select('players').where('game_id', '=', gameId).executeTakeFirstOrThrow();
  return (JSON.parse(game.players) as { user_id: number }[]).map((p) => p.user_id);
}

test('the last seat taken by many at once: one gets it, the others hear the room is full', { skip: needsRedis }, async () => {
  for (let round = 0; round < 3; round++) {
    const roomId = await roomWith(1, [2], { maxplayers: 3 });
    const joiners = [3, 4, 5, 6, 7, 8, 9, 10];
    const answers = await Promise.all(joiners.map((id) => call(id, 'rooms.join', { room_id: roomId })));
    assert.deepEqual(codes(answers), [0, 2202, 2202, 2202, 2202, 2202, 2202, 2202], JSON.stringify(answers));
    const winner = joiners[answers.findIndex((a) => a.code === 0)]!;
    assert.deepEqual(await seated(roomId), [1, 2, winner]);
    const room = (await call(1, 'rooms.get', { room_id: roomId })).data.rooms[0];
    assert.deepEqual([room.players, room.v], [[[1, 2, winner]], 3]);
    for (const id of USERS) await call(id, 'rooms.leave', {});
  }
});

test('one player joining several rooms at once lands in one of them', { skip: needsRedis }, async () => {
  for (let round = 0; round < 3; round++) {
    const rooms = [await roomWith(1, []), await roomWith(2, []), await roomWith(3, []), await roomWith(4, [])];
    const answers = await Promise.all([
      ...rooms.map((roomId) => call(12, 'rooms.join', { room_id: roomId })),
      call(12, 'rooms.create', {}),
    ]);
    assert.deepEqual(codes(answers), [0, 2203, 2203, 2203, 2203], JSON.stringify(answers));
    const rows = await server.db.kysely.selectFrom('room_members').select('room_id').where('user_id', '=', 12).execute();
    assert.equal(rows.length, 1);
    for (const id of USERS) await call(id, 'rooms.leave', {});
  }
});

test('a join racing the start: in the game, or refused; never a member of a started room', { skip: needsRedis }, async () => {
  for (let round = 0; round < 4; round++) {
    const [a, b, c] = fresh(3) as [number, number, number];
    const roomId = await roomWith(a, [b]);
    const [start, join] = await Promise.all([call(a, 'rooms.startGame', { room_id: roomId }), call(c, 'rooms.join', { room_id: roomId })]);
    assert.equal(start.code, 0, JSON.stringify(start));
    assert.ok([0, 2205].includes(join.code), JSON.stringify(join));
    const room = (await call(a, 'rooms.get', { room_id: roomId })).data.rooms[0];
    const players = join.code === 0 ? [a, b, c] : [a, b];
    assert.deepEqual(room.players, [players]);
    assert.deepEqual(await gamePlayers(Number(room.gs_game_id)), players);
    assert.equal(room.status, 1);
    assert.deepEqual(await seated(roomId), []);
  }
});

test('a leave racing the start: out of the game, or in it; a kick racing a join: out, or refused', { skip: needsRedis }, async () => {
  for (let round = 0; round < 4; round++) {
    const [a, b, c] = fresh(3) as [number, number, number];
    const roomId = await roomWith(a, [b, c]);
    const [start, leave] = await Promise.all([call(a, 'rooms.startGame', { room_id: roomId }), call(c, 'rooms.leave', {})]);
    assert.equal(start.code, 0, JSON.stringify(start));
    assert.ok([0, 2211].includes(leave.code), JSON.stringify(leave));
    const got = await call(a, 'rooms.get', { room_id: roomId });
    assert.equal(got.code, 0, JSON.stringify([got, start, leave]));
    const room = got.data.rooms[0];
    const players = leave.code === 0 ? [a, b] : [a, b, c];
    assert.deepEqual(room.players, [players]);
    assert.deepEqual(await gamePlayers(Number(room.gs_game_id)), players);
    assert.deepEqual(await seated(roomId), []);
  }
  for (let round = 0; round < 4; round++) {
    const roomId = await roomWith(4, [5]);
    assert.equal((await call(4, 'rooms.invite', { room_id: roomId, user_id: 6 })).code, 0);
    const [kick, join] = await Promise.all([
      call(4, 'rooms.kick', { room_id: roomId, user_id: 6 }),
      call(6, 'rooms.join', { room_id: roomId }),
    ]);
    assert.equal(kick.code, 0, JSON.stringify(kick));
    assert.ok([0, 2207].includes(join.code), JSON.stringify(join));
    const got = await call(4, 'rooms.get', { room_id: roomId });
    assert.equal(got.code, 0, JSON.stringify([got, kick, join]));
    const room = got.data.rooms[0];
    assert.deepEqual([room.players, room.bans, room.invites], [[[4, 5]], [6], []]);
    assert.deepEqual(await seated(roomId), [4, 5]);
    for (const id of USERS) await call(id, 'rooms.leave', {});
  }
});
