import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { needsRedis, startProcesses, type Processes } from './race-support.js';
import { tokenFor, user } from './item-fixtures.js';
import { ExtwsClient } from './extws-client.js';
import type { TestServer } from './helpers.js';
import { missing } from './components.js';

/*
 * The lobby live on `/ws?subs=rooms`, as the reference clients parse it: room.set with the room
 * in `rooms` and its players in `users_data`, room.patch with `room_id`, `patches` and `v`,
 * room.delete; a private room's events reach only its players and invited users; the `auth`
 * frame counts invitations and an invitation reaches the invited user. On PostgreSQL the
 * changes are made through one process and heard through the other.
 */

let processes: Processes;
let server: TestServer;
const tokens = new Map<number, string>();

before(async () => {
  if (needsRedis) return;
  processes = await startProcesses({
    redis: !missing.redis,
    world: { users: [user(1), user(2), user(3), user(4)] },
  });
  server = processes.servers[0]!;
  for (const id of [1, 2, 3, 4]) tokens.set(id, await tokenFor(server, id));
});
after(async () => {
  if (!needsRedis) await processes.close();
});

const as = (userId: number) => ({ token: tokens.get(userId) });
const ok = async (userId: number, method: string, params: Record<string, unknown>) => {
  const answer = await server.call(method, params, as(userId));
  assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
  return answer.body.data;
};

/** The `events` frame holding the index-th event of the type (waiting for it). */
async function eventFrame(client: ExtwsClient, type: string, index = 0): Promise<any> {
  for (;;) {
    const matching = client.frames.filter((f) => f.event === 'events' && f.data.events.some((e: any) => e.type === type));
    if (matching.length > index) return matching[index]!.data;
    const seen = client.frames.length;
    await client.next((f) => client.frames.indexOf(f) >= seen);
  }
}

test('a room created, joined, set, left and deleted: every subscriber hears it as the clients parse it', { skip: needsRedis }, async () => {
  const watcher = await ExtwsClient.connect(processes.urls[1], { subs: 'rooms' });
  const roomId: string = (await ok(1, 'rooms.create', { maxplayers: 3 })).room_id;
  const set = await eventFrame(watcher, 'room.set');
  const { id: setId, ...setEvent } = set.events[0];
  assert.equal(typeof setId, 'number');
  assert.deepEqual(setEvent, { type: 'room.set', room_id: roomId });
  assert.deepEqual(
    set.rooms.map((r: any) => [r.room_id, r.players, r.v, r.settings.maxplayers]),
    [[roomId, [[1]], 1, 3]],
  );
  assert.deepEqual(
    set.users_data.map((u: any) => [u.user_id, u.nick]),
    [[1, 'user1']],
  );

  await ok(2, 'rooms.join', { room_id: roomId });
  const joined = await eventFrame(watcher, 'room.patch');
  const { id: _joinId, ...joinEvent } = joined.events[0];
  assert.deepEqual(joinEvent, { type: 'room.patch', room_id: roomId, patches: [[1, 'players.0', 2]], v: 2 });
  assert.deepEqual(
    joined.users_data.map((u: any) => u.user_id),
    [2],
  );

  await ok(1, 'rooms.settingsChange', { room_id: roomId, param: 'maxplayers', value: 4 });
  const { id: _setId, ...changed } = (await eventFrame(watcher, 'room.patch', 1)).events[0];
  assert.deepEqual(changed, { type: 'room.patch', room_id: roomId, patches: [[2, 'settings.maxplayers', 4]], v: 3 });

  await ok(1, 'rooms.leave', {});
  const { id: _leftId, ...left } = (await eventFrame(watcher, 'room.patch', 2)).events[0];
  assert.deepEqual(left, {
    type: 'room.patch',
    room_id: roomId,
    patches: [
      [0, 'players.0', 1],
      [2, 'admin', 2],
    ],
    v: 4,
  });

  await ok(2, 'rooms.delete', { room_id: roomId });
  const { id: _deleteId, ...deleted } = (await eventFrame(watcher, 'room.delete')).events[0];
  assert.deepEqual(deleted, { type: 'room.delete', room_id: roomId });
  watcher.close();
});

test(
  'a private room is heard by its players and invited users only; invitations are counted in the auth frame, live',
  { skip: needsRedis },
  async () => {
    const stranger = await ExtwsClient.connect(processes.urls[1], { subs: 'rooms' });
    const invited = await ExtwsClient.connect(processes.urls[1], { subs: 'rooms', access_token: tokens.get(4) });
    assert.equal((await invited.next((f) => f.event === 'auth')).data.counters.invites, 0);
    const roomId: string = (await ok(3, 'rooms.create', { option_private: 1 })).room_id;
    await ok(3, 'rooms.invite', { room_id: roomId, user_id: 4 });
    const { id: _inviteId, ...invitation } = (await eventFrame(invited, 'room.invite')).events[0];
    assert.deepEqual(invitation, { type: 'room.invite', room_id: roomId, user_id_from: 3, invites: 1 });
    const shown = await eventFrame(invited, 'room.set');
    assert.deepEqual(
      shown.rooms.map((r: any) => [r.room_id, r.invites]),
      [[roomId, [[4, 3]]]],
    );
    const again = await ExtwsClient.connect(processes.urls[0], { subs: 'rooms', access_token: tokens.get(4) });
    assert.equal((await again.next((f) => f.event === 'auth')).data.counters.invites, 1);
    await ok(4, 'rooms.join', { room_id: roomId });
    const { id: _joinId, ...joined } = (await eventFrame(invited, 'room.patch', 1)).events[0];
    assert.deepEqual(joined, {
      type: 'room.patch',
      room_id: roomId,
      patches: [
        [1, 'players.0', 4],
        [0, 'invites', 4],
      ],
      v: 3,
    });
    // Made public: everyone is given it whole.
    await ok(3, 'rooms.settingsChange', { room_id: roomId, param: 'private', value: 0 });
    const opened = await eventFrame(stranger, 'room.set');
    assert.deepEqual(
      opened.rooms.map((r: any) => [r.room_id, r.players, r.settings.private]),
      [[roomId, [[3, 4]], 0]],
    );
    assert.deepEqual(
      stranger.events().map((e) => e.type),
      ['room.set'],
      'nothing of the private room reached the stranger before',
    );
    for (const client of [stranger, invited, again]) client.close();
    await ok(3, 'rooms.leave', {});
    await ok(4, 'rooms.leave', {});
  },
);
