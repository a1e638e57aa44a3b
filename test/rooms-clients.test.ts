import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { listen } from './chat-support.js';
import { ExtwsClient, type ExtwsFrame } from './extws-client.js';
import { tokenFor, user } from './item-fixtures.js';

/*
 * The lobby as the reference service's unofficial clients use it, through their own call shapes:
 * `Zakovskiy/monopolyone.py` (JSON bodies with `access_token` and `sct`, `/ws?subs=rooms` read
 * with its frame parser, every key its objects read with `[...]` required) and
 * `RolanUnix/MonopolyOne-API` (form-encoded calls, the rooms methods' parameter names and the
 * five `rooms.settingsChange` parameters of its ChangeParameter enum).
 */

const PASSWORD = 'a long password';
const people = [1, 2, 3].map((id) => user(id, { email: `user${id}@example.com`, password: PASSWORD }));

let server: TestServer;
let base: string;
before(async () => {
  server = await startTestServer({ world: { users: [...people, user(4), user(5), user(6)] } });
  base = await listen(server);
});
after(() => server.close());

/** The Python client's request body: its parameters, then `access_token` and `sct` (seconds). */
const pythonCall = async (method: string, params: Record<string, unknown>, token?: string) => {
  const answer = await server.call(method, {
    ...params,
    ...(token !== undefined ? { access_token: token } : {}),
    sct: Math.floor(server.clock.now() / 1000),
  });
  return answer.body;
};

/** The keys the Python client's objects read with `[...]`: a missing one raises KeyError there. */
const READS = {
  session: ['access_token', 'expires', 'refresh_token', 'user_id'],
  userData: [
    'user_id',
    'nick',
    'nicks_old',
    'gender',
    'avatar',
    'avatar_key',
    'online',
    'rank',
    'games_wins',
    'games',
    'xp',
    'xp_level',
    'admin_rights',
    'penalties',
  ],
  counters: ['vip_expires', 'balance', 'friends_requests', 'messages_new', 'invites', 'trades_new', 'email_verified'],
  status: ['time', 'online', 'streams', 'sct', 'emotes_restricted'],
  roomSetOrDelete: ['id', 'type', 'room_id'],
  roomPatch: ['id', 'patches', 'room_id', 'type', 'v'],
  usersData: ['avatar', 'gender', 'nick', 'rank', 'user_id'],
} as const;

const hasKeys = (value: Record<string, unknown>, keys: readonly string[], what: string) =>
  assert.deepEqual(
    keys.filter((key) => !(key in value)),
    [],
    `${what} lacks keys the client reads: ${JSON.stringify(value)}`,
  );

/** Reads the frames as the Python client's `listen` does: the event's name is what lies between the digit and the JSON. */
function pythonEvent(frame: ExtwsFrame): { type: string; json: any } {
  const text = frame.text;
  const json = JSON.parse(text.slice(text.indexOf('{')));
  return { type: text.slice(1, text.indexOf('{')), json };
}

/** Waits for the `events` frame holding an event of this type and room, checking each of its entries as the client reads them. */
async function roomEvent(client: ExtwsClient, type: string, roomId: string, after = 0): Promise<any> {
  const frame = await client.next(
    (f) =>
      client.frames.indexOf(f) >= after && f.event === 'events' && f.data.events.some((e: any) => e.type === type && e.room_id === roomId),
  );
  const { type: name, json } = pythonEvent(frame);
  assert.equal(name, 'events');
  for (const event of json.events) hasKeys(event, event.type === 'room.patch' ? READS.roomPatch : READS.roomSetOrDelete, event.type);
  for (const entry of json.users_data ?? []) hasKeys(entry, READS.usersData, 'users_data entry');
  return json;
}

test('the Python client signs in, opens the lobby, creates, joins, leaves and fills a room that starts itself, reading every key it reads', async () => {
  const tokens: string[] = [];
  for (const person of people) {
    const signIn = await pythonCall('auth.signin', { email: person.email, password: PASSWORD });
    assert.equal(signIn.code, 0, JSON.stringify(signIn));
    hasKeys(signIn.data, READS.session, 'auth.signin data');
    assert.equal(signIn.data.user_id, person.user_id);
    tokens.push(signIn.data.access_token);
  }
  const [ann, bob, cid] = tokens as [string, string, string];
  // create_connection(subs="rooms"): its own URL with the host changed.
  const watchers = await Promise.all(tokens.map((token) => ExtwsClient.connect(base, { subs: 'rooms', access_token: token })));
  for (const [i, watcher] of watchers.entries()) {
    const auth = pythonEvent(await watcher.next((f) => f.event === 'auth'));
    assert.equal(auth.type, 'auth');
    hasKeys(auth.json, ['status', 'user_data', 'counters'], 'auth');
    hasKeys(auth.json.user_data, READS.userData, 'auth user_data');
    hasKeys(auth.json.counters, READS.counters, 'auth counters');
    assert.deepEqual(
      [auth.json.user_data.user_id, auth.json.user_data.avatar_key, auth.json.user_data.online, auth.json.user_data.rank],
      [i + 1, '', 1, { hidden: 1 }],
    );
    const status = pythonEvent(await watcher.next((f) => f.event === 'status'));
    hasKeys(status.json.status, READS.status, 'status');
  }
  const cidsFeed = watchers[2]!;

  // room_create(maxplayers=3, option_private=False, game_submode=0, option_autostart=True)
  const created = await pythonCall('rooms.create', { maxplayers: 3, option_private: 0, game_submode: 0, option_autostart: 1 }, ann);
  assert.equal(created.code, 0, JSON.stringify(created));
  const roomId: string = created.data.room_id;
  assert.equal(typeof roomId, 'string');
  const set = await roomEvent(cidsFeed, 'room.set', roomId);
  assert.deepEqual(
    set.users_data.map((u: any) => [u.user_id, u.nick, u.rank]),
    [[1, 'user1', { hidden: 1 }]],
  );

  let seen = cidsFeed.frames.length;
  assert.deepEqual(await pythonCall('rooms.join', { room_id: roomId }, bob), { code: 0 });
  const joined = await roomEvent(cidsFeed, 'room.patch', roomId, seen);
  assert.deepEqual(
    joined.events.map((e: any) => [e.type, e.room_id, e.patches, e.v]),
    [['room.patch', roomId, [[1, 'players.0', 2]], 2]],
  );
  assert.deepEqual(
    joined.users_data.map((u: any) => u.user_id),
    [2],
  );

  seen = cidsFeed.frames.length;
  assert.deepEqual(await pythonCall('rooms.leave', {}, bob), { code: 0 });
  const left = await roomEvent(cidsFeed, 'room.patch', roomId, seen);
  assert.deepEqual(
    left.events.map((e: any) => [e.patches, e.v]),
    [[[[0, 'players.0', 2]], 3]],
  );

  assert.deepEqual(await pythonCall('rooms.join', { room_id: roomId }, bob), { code: 0 });
  await cidsFeed.next((f) => f.event === 'events' && f.data.events.some((e: any) => e.type === 'room.patch' && e.v === 4));

  // The third player fills it: the room starts itself, tells its game, and leaves the lobby.
  const bobsFeed = watchers[1]!;
  assert.deepEqual(await pythonCall('rooms.join', { room_id: roomId }, cid), { code: 0 });
  await roomEvent(bobsFeed, 'room.delete', roomId);
  // Events arrive after their call's answer: the ones of this join are told by their versions.
  const patches = bobsFeed
    .events()
    .filter((e: any) => e.type === 'room.patch' && e.room_id === roomId && e.v > 4)
    .map((e: any) => [e.patches, e.v]);
  const gameId = patches.flatMap(([list]: any) => list).find((p: any) => p[1] === 'gs_game_id')?.[2];
  assert.deepEqual(patches, [
    [[[1, 'players.0', 3]], 5],
    [
      [
        [2, 'status', 1],
        [2, 'gs_id', 'gs-1'],
        [2, 'gs_game_id', gameId],
      ],
      6,
    ],
  ]);

  // users_get("1,2,3"), games_resolve(gs_game_id, gs_id), games_my(): the game the room became.
  const profiles = await pythonCall('users.get', { user_ids: '1,2,3', type: 'short' }, ann);
  assert.deepEqual(
    profiles.data.map((p: any) => [p.user_id, p.current_game]),
    [1, 2, 3].map((id) => [id, { gs_id: 'gs-1', gs_game_id: gameId }]),
  );
  const resolved = await pythonCall('games.resolve', { gs_game_id: gameId, gs_id: 'gs-1' }, ann);
  assert.deepEqual([resolved.code, resolved.data.gs_game_id, resolved.data.player], [0, Number(gameId), 1]);
  const mine = await pythonCall('games.my', { offset: 0, count: 30 }, bob);
  assert.deepEqual(
    mine.data.games.map((g: any) => [g.game_id, g.status, g.user_ids]),
    [[Number(gameId), 'live', [1, 2, 3]]],
  );
  for (const watcher of watchers) watcher.close();
});

/** `RolanUnix/MonopolyOne-API` src/Enums/ChangeParameter.cs: the descriptions it sends as `param`. */
const CHANGE_PARAMETERS = ['private', 'autostart', 'maxplayers', 'game_timers', 'br_corner'] as const;

test('the C# client’s form-encoded calls and parameter names: create, invite, kick, every settingsChange parameter, start, delete', async () => {
  const [owner, guest, other] = await Promise.all([4, 5, 6].map((id) => tokenFor(server, id)));
  // CallMethod: the parameters as a form, with access_token; answers' `data` read, `code` checked.
  const form = async (method: string, params: Record<string, string>, token: string) =>
    (await server.call(method, params, { token, form: true })).body;
  const created = await form(
    'rooms.create',
    { game_submode: '0', game_2x2: '0', maxplayers: '4', option_private: '0', option_autostart: '0', is_tournament: '0' },
    owner!,
  );
  assert.equal(created.code, 0, JSON.stringify(created));
  const roomId = String(created.data.room_id);
  assert.match(roomId, /^\d+$/, 'room_id is read as a ulong');

  const settings = { private: '1', autostart: '0', maxplayers: '3', game_timers: '1', br_corner: '0' };
  for (const param of CHANGE_PARAMETERS)
    assert.deepEqual(await form('rooms.settingsChange', { param, value: settings[param], room_id: roomId }, owner!), { code: 0 }, param);
  const room = (await server.call('rooms.get', { room_id: roomId }, { token: owner })).body.data.rooms[0];
  assert.deepEqual(
    CHANGE_PARAMETERS.map((param) => room.settings[param]),
    CHANGE_PARAMETERS.map((param) => Number(settings[param])),
  );

  assert.deepEqual(await form('rooms.invite', { user_id: '5', room_id: roomId }, owner!), { code: 0 });
  assert.deepEqual(await form('rooms.join', { room_id: roomId }, guest!), { code: 0 });
  assert.deepEqual(await form('rooms.invite', { user_id: '6', room_id: roomId }, owner!), { code: 0 });
  assert.deepEqual(await form('rooms.join', { room_id: roomId }, other!), { code: 0 });
  assert.deepEqual(await form('rooms.kick', { room_id: roomId, user_id: '6' }, owner!), { code: 0 });
  assert.deepEqual(await form('rooms.startGame', { room_id: roomId }, owner!), { code: 0 });
  const started = (await server.call('rooms.get', { room_id: roomId }, { token: owner })).body.data.rooms[0];
  assert.deepEqual([started.status, started.players], [1, [[4, 5]]]);

  const second = await form(
    'rooms.create',
    { game_submode: '0', game_2x2: '0', maxplayers: '2', option_private: '1', option_autostart: '1', is_tournament: '0' },
    other!,
  );
  assert.equal(second.code, 0, JSON.stringify(second));
  assert.deepEqual(await form('rooms.delete', { room_id: String(second.data.room_id) }, other!), { code: 0 });
  const gone = await server.call('rooms.get', { room_id: String(second.data.room_id) }, { token: other });
  assert.notEqual(gone.body.code, 0);
});
