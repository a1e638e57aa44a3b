import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { callFails, callOk, callVoid, tokenFor, user } from './item-fixtures.js';
import type { World } from '../src/world/schema.js';

/*
 * The lobby through the API: rooms are created, joined, left, kicked from, set and deleted as
 * the reference clients send it, with the rules (one room per player, private rooms by
 * invitation, blocks, kicks, unsupported options refused by name), and rooms.get shows them as
 * the clients read them.
 */

const world: World = {
  users: [user(1), user(2), user(3), user(4), user(5), user(6), user(7)],
  blocks: [{ user_id: 6, blocked_user_id: 1 }],
};

let server: TestServer;
const tokens = new Map<number, string>();
const as = (userId: number) => ({ token: tokens.get(userId) });

before(async () => {
  server = await startTestServer({ world });
  for (const id of [1, 2, 3, 4, 5, 6, 7]) tokens.set(id, await tokenFor(server, id));
});
after(() => server.close());

const create = async (userId: number, params: Record<string, unknown> = {}) =>
  (await callOk(server, 'rooms.create', { maxplayers: 4, ...params }, as(userId))).room_id as string;
const roomOf = async (roomId: string, userId = 1) => (await callOk(server, 'rooms.get', { room_id: roomId }, as(userId))).rooms[0];
const leaveAll = async () => {
  for (const id of tokens.keys()) await server.call('rooms.leave', {}, as(id));
};

describe('rooms', () => {
  afterEach(leaveAll);

  test('a room as the clients read it: created, joined, listed with its users', async () => {
    const roomId = await create(1, { option_private: 0, option_autostart: 0, game_submode: 0, game_2x2: 0, is_tournament: 0 });
    assert.match(roomId, /^\d+$/);
    await callVoid(server, 'rooms.join', { room_id: roomId }, as(2));
    const lobby = await callOk(server, 'rooms.get', {});
    assert.equal(lobby.count, 1);
    const room = lobby.rooms[0];
    assert.deepEqual(room, {
      room_id: roomId,
      status: 0,
      admin: 1,
      game_mode: 0,
      game_submode: 0,
      game_2x2: 0,
      players: [[1, 2]],
      players_joined: {},
      invites: [],
      bans: [],
      flags: { disposition_mode: 0, is_tournament: 0, ts_created: room.flags.ts_created, vip: 0 },
      settings: { autostart: 0, br_corner: 0, contract_protests: 1, game_timers: 1, maxplayers: 4, pm_allowed: 1, private: 0, restarts: 0 },
      gsm_vote_variants: [],
      gsm_votes: {},
      op_ts_end: 0,
      v: 2,
    });
    assert.deepEqual(
      lobby.users_data.map((u: any) => [u.user_id, u.nick]),
      [
        [1, 'user1'],
        [2, 'user2'],
      ],
    );
    await leaveAll();
    assert.equal((await callOk(server, 'rooms.get', {})).count, 0, 'a room its players all left is gone');
  });

  test('one room per player; the creator leaving passes the room on; only the creator deletes, sets, kicks and starts', async () => {
    const roomId = await create(1);
    const again = await callFails(server, 'rooms.create', {}, 2203, as(1));
    assert.deepEqual(again.body.data, { room_id: roomId });
    const other = await create(3);
    await callFails(server, 'rooms.join', { room_id: roomId }, 2203, as(3));
    await callVoid(server, 'rooms.join', { room_id: roomId }, as(2));
    await callFails(server, 'rooms.join', { room_id: roomId }, 2203, as(2));
    await callFails(server, 'rooms.delete', { room_id: roomId }, 2204, as(2));
    await callFails(server, 'rooms.settingsChange', { room_id: roomId, param: 'maxplayers', value: 3 }, 2204, as(2));
    await callFails(server, 'rooms.kick', { room_id: roomId, user_id: 1 }, 2204, as(2));
    await callFails(server, 'rooms.startGame', { room_id: roomId }, 2204, as(2));
    await callVoid(server, 'rooms.leave', {}, as(1));
    assert.equal((await roomOf(roomId, 2)).admin, 2);
    assert.deepEqual((await roomOf(roomId, 2)).players, [[2]]);
    await callFails(server, 'rooms.leave', {}, 2211, as(1));
    await callFails(server, 'rooms.startGame', { room_id: roomId }, 2209, as(2));
    await callVoid(server, 'rooms.delete', { room_id: roomId }, as(2));
    await callFails(server, 'rooms.get', { room_id: roomId }, 2201, as(2));
    await callFails(server, 'rooms.join', { room_id: roomId }, 2201, as(4));
    await callVoid(server, 'rooms.delete', { room_id: other }, as(3));
    await callOk(server, 'rooms.create', {}, as(2));
  });

  test('unsupported options and settings are refused by name', async () => {
    for (const [params, named] of [
      [{ game_submode: 2 }, /game_submode/],
      [{ game_2x2: 1 }, /game_2x2/],
      [{ is_tournament: 1 }, /is_tournament/],
    ] as const) {
      const answer = await callFails(server, 'rooms.create', params, 2208, as(1));
      assert.match(String(answer.body.description), named);
    }
    await callFails(server, 'rooms.create', { maxplayers: 6 }, 2, as(1));
    await callFails(server, 'rooms.create', { maxplayers: 1 }, 2, as(1));
    assert.equal((await callOk(server, 'rooms.get', {})).count, 0);
    const roomId = await create(1);
    await callFails(server, 'rooms.settingsChange', { room_id: roomId, param: 'game_timers', value: 0 }, 2208, as(1));
    await callFails(server, 'rooms.settingsChange', { room_id: roomId, param: 'br_corner', value: 2 }, 2208, as(1));
    await callFails(server, 'rooms.settingsChange', { room_id: roomId, param: 'colour', value: 1 }, 2, as(1));
    await callVoid(server, 'rooms.join', { room_id: roomId }, as(2));
    await callVoid(server, 'rooms.join', { room_id: roomId }, as(3));
    await callFails(server, 'rooms.settingsChange', { room_id: roomId, param: 'maxplayers', value: 2 }, 2202, as(1));
    await callVoid(server, 'rooms.settingsChange', { room_id: roomId, param: 'maxplayers', value: 3 }, as(1));
    await callFails(server, 'rooms.join', { room_id: roomId }, 2202, as(4));
    const room = await roomOf(roomId);
    assert.equal(room.settings.maxplayers, 3);
    assert.equal(room.v, 4);
  });

  test('a private room: seen and joined by invitation only; an invitation counts, and is used by joining', async () => {
    const roomId = await create(1, { option_private: 1 });
    assert.equal((await callOk(server, 'rooms.get', {}, as(2))).count, 0, 'not listed to others');
    assert.equal((await callOk(server, 'rooms.get', {})).count, 0, 'nor to anonymous callers');
    assert.equal((await callOk(server, 'rooms.get', {}, as(1))).count, 1, 'listed to its player');
    await callFails(server, 'rooms.get', { room_id: roomId }, 2201, as(2));
    await callFails(server, 'rooms.join', { room_id: roomId }, 2206, as(2));
    await callFails(server, 'rooms.invite', { room_id: roomId, user_id: 2 }, 2211, as(3));
    await callFails(server, 'rooms.invite', { room_id: roomId, user_id: 999 }, 101, as(1));
    await callVoid(server, 'rooms.invite', { room_id: roomId, user_id: 2 }, as(1));
    await callVoid(server, 'rooms.invite', { room_id: roomId, user_id: 2 }, as(1));
    assert.deepEqual((await roomOf(roomId, 2)).invites, [[2, 1]]);
    assert.equal((await callOk(server, 'rooms.get', {}, as(2))).count, 1);
    await callVoid(server, 'rooms.join', { room_id: roomId }, as(2));
    const room = await roomOf(roomId, 2);
    assert.deepEqual([room.players, room.invites, room.v], [[[1, 2]], [], 3], 'a second invitation of the same user changes nothing');
    await callVoid(server, 'rooms.settingsChange', { room_id: roomId, param: 'private', value: 0 }, as(1));
    assert.equal((await callOk(server, 'rooms.get', {}, as(3))).count, 1, 'made public, it is listed');
  });

  test('blocks: a user blocked by a player (or blocking one) cannot join, nor be invited', async () => {
    const roomId = await create(1);
    const refused = await callFails(server, 'rooms.join', { room_id: roomId }, 107, as(6));
    assert.match(String(refused.body.description), /blocked/);
    await callFails(server, 'rooms.invite', { room_id: roomId, user_id: 6 }, 107, as(1));
    await callVoid(server, 'rooms.join', { room_id: roomId }, as(2));
    // The inviter is not blocked, but the creator is.
    await callFails(server, 'rooms.invite', { room_id: roomId, user_id: 6 }, 107, as(2));
  });

  test('kicked: out of the room, listed in bans, not let in again unless the creator invites them', async () => {
    const roomId = await create(1);
    await callVoid(server, 'rooms.join', { room_id: roomId }, as(2));
    await callVoid(server, 'rooms.join', { room_id: roomId }, as(3));
    await callFails(server, 'rooms.kick', { room_id: roomId, user_id: 1 }, 2, as(1));
    await callFails(server, 'rooms.kick', { room_id: roomId, user_id: 4 }, 2211, as(1));
    await callVoid(server, 'rooms.kick', { room_id: roomId, user_id: 2 }, as(1));
    let room = await roomOf(roomId);
    assert.deepEqual([room.players, room.bans], [[[1, 3]], [2]]);
    await callFails(server, 'rooms.join', { room_id: roomId }, 2207, as(2));
    await callFails(server, 'rooms.invite', { room_id: roomId, user_id: 2 }, 2207, as(3));
    await callVoid(server, 'rooms.invite', { room_id: roomId, user_id: 2 }, as(1));
    room = await roomOf(roomId);
    assert.deepEqual([room.bans, room.invites], [[], [[2, 1]]]);
    await callVoid(server, 'rooms.kick', { room_id: roomId, user_id: 2 }, as(1));
    room = await roomOf(roomId);
    assert.deepEqual([room.players, room.bans, room.invites], [[[1, 3]], [2], []]);
  });

  test('bad input answers a clear error, never a crash', async () => {
    await callFails(server, 'rooms.join', { room_id: 'abc' }, 2, as(1));
    await callFails(server, 'rooms.join', {}, 2, as(1));
    await callFails(server, 'rooms.join', { room_id: 99_999_999 }, 2201, as(1));
    await callFails(server, 'rooms.create', {}, 1);
    await callFails(server, 'rooms.get', { count: 1000 }, 2);
    await callFails(server, 'rooms.settingsChange', { room_id: 1, param: 'private', value: 'x' }, 2, as(1));
  });
});
