import { Type } from '@sinclair/typebox';
import { defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Strict } from '../api/schema-types.js';
import {
  changeRoomSetting,
  createRoom,
  deleteRoomOf,
  inviteToRoom,
  joinRoom,
  kickFromRoom,
  leaveRoom,
  ROOM_SETTINGS,
  startRoom,
  type RoomSetting,
} from './lobby.js';
import { lobbyOf, oneRoom } from './list.js';
import { RoomList } from './schemas.js';
import { gamesGetLive } from './live-games.js';

const roomId = P.uint({ minimum: 1, description: 'the room' });
const userId = P.uint({ minimum: 1, description: 'the user' });

const NoRoom = { 2201: 'no such room, or a private one the caller was not invited to' };
const Waiting = { 2205: 'the room’s game has started' };
const AdminOnly = { 2204: 'only the room’s creator may do that' };
const Joining = {
  2202: 'the room is full',
  2203: 'the caller is in a room already (data.room_id names it): leave it first',
  1903: 'the caller is playing a live game (data names it)',
};

export const roomsCreate = defineMethod({
  name: 'rooms.create',
  summary: 'Create a room of the lobby; the caller is its first player',
  description:
    'A room waiting for players: the classic game (`game_submode` 0), every player for themselves. A private room is joined by ' +
    'invitation only; one with `option_autostart` starts its game as soon as it is full. A player is in one room at most.',
  auth: 'required',
  bots: true,
  params: P.object({
    maxplayers: P.uint({ default: 4, minimum: 2, maximum: 5, description: 'players of the game, 2 to 5' }),
    option_private: P.bit({ default: 0, description: '1: joined by invitation only' }),
    option_autostart: P.bit({ default: 0, description: '1: the game starts as soon as the room is full' }),
    game_submode: P.uint({ default: 0, maximum: 100, description: 'the game’s variant: 0, the classic game, is the one played here' }),
    game_2x2: P.bit({ default: 0, description: 'two against two: not played here (1 is refused)' }),
    is_tournament: P.bit({ default: 0, description: 'a tournament room: not played here (1 is refused)' }),
  }),
  result: Type.Object({ room_id: Type.String({ description: 'the new room' }) }, Strict),
  errors: {
    ...Joining,
    2208: 'an option this server does not play (game_submode other than 0, game_2x2, is_tournament); the description names it',
  },
  handler: async ({ services, caller }, params) => {
    const id = await createRoom(services, caller.userId, {
      maxplayers: params.maxplayers,
      private: params.option_private,
      autostart: params.option_autostart,
      game_submode: params.game_submode,
      game_2x2: params.game_2x2,
      is_tournament: params.is_tournament,
    });
    return { room_id: String(id) };
  },
});

export const roomsJoin = defineMethod({
  name: 'rooms.join',
  summary: 'Take a seat in a room',
  description: 'The caller joins a waiting room: a private one by invitation only; a full room with autostart starts its game at once.',
  auth: 'required',
  bots: true,
  params: P.object({ room_id: roomId }),
  errors: {
    ...NoRoom,
    ...Joining,
    ...Waiting,
    2206: 'the room is private and the caller was not invited',
    2207: 'the caller was kicked from the room',
    107: 'a player of the room and the caller have blocked one another',
  },
  handler: async ({ services, caller }, params) => {
    await joinRoom(services, caller.userId, params.room_id);
  },
});

export const roomsLeave = defineMethod({
  name: 'rooms.leave',
  summary: 'Leave the caller’s room',
  description:
    'The caller leaves the room they wait in; the room passes to the next player when its creator leaves, and goes when it is empty.',
  auth: 'required',
  bots: true,
  params: P.object({}),
  errors: { 2211: 'the caller is in no room' },
  handler: async ({ services, caller }) => {
    await leaveRoom(services, caller.userId);
  },
});

export const roomsDelete = defineMethod({
  name: 'rooms.delete',
  summary: 'Delete a waiting room (its creator)',
  auth: 'required',
  bots: true,
  params: P.object({ room_id: roomId }),
  errors: { ...NoRoom, ...AdminOnly, ...Waiting },
  handler: async ({ services, caller }, params) => {
    await deleteRoomOf(services, caller.userId, params.room_id);
  },
});

export const roomsInvite = defineMethod({
  name: 'rooms.invite',
  summary: 'Invite a user to the caller’s room',
  description:
    'A player of a waiting room invites a user, who may then join it even when it is private; the invited user’s `invites` counter ' +
    'counts it, and a `room.invite` event tells their connections. The creator’s invitation lets a kicked user in again.',
  auth: 'required',
  bots: true,
  params: P.object({ room_id: roomId, user_id: userId }),
  errors: {
    ...NoRoom,
    ...Waiting,
    101: 'no such user',
    107: 'the user and the caller have blocked one another',
    2203: 'the user is in the room already',
    2207: 'the user was kicked from the room (only its creator may invite them again)',
    2211: 'the caller is not in the room',
    6: 'the room holds 50 invitations already',
  },
  handler: async ({ services, caller }, params) => {
    await inviteToRoom(services, caller.userId, params.room_id, params.user_id);
  },
});

export const roomsKick = defineMethod({
  name: 'rooms.kick',
  summary: 'Take a player (or an invitation) out of a room (its creator)',
  description: 'The user leaves the room, or loses their invitation, and may not come back unless the creator invites them again.',
  auth: 'required',
  bots: true,
  params: P.object({ room_id: roomId, user_id: userId }),
  errors: { ...NoRoom, ...AdminOnly, ...Waiting, 2211: 'the user is neither in the room nor invited to it' },
  handler: async ({ services, caller }, params) => {
    await kickFromRoom(services, caller.userId, params.room_id, params.user_id);
  },
});

const settingNames = Object.keys(ROOM_SETTINGS) as [RoomSetting, ...RoomSetting[]];

export const roomsSettingsChange = defineMethod({
  name: 'rooms.settingsChange',
  summary: 'Change a setting of a waiting room (its creator)',
  description:
    'private 0 or 1; autostart 0 or 1 (a full room then starts); maxplayers 2 to 5, not below the players seated; game_timers 1 ' +
    '(games without timers are not played here); br_corner 0 (the classic corners).',
  auth: 'required',
  bots: true,
  params: P.object({
    room_id: roomId,
    param: P.enum(settingNames, { description: 'the setting' }),
    value: P.int({ minimum: -1000, maximum: 1000, description: 'its new value' }),
  }),
  errors: {
    ...NoRoom,
    ...AdminOnly,
    ...Waiting,
    2202: 'maxplayers below the players seated',
    2208: 'a value this server does not play; the description gives those it does',
  },
  handler: async ({ services, caller }, params) => {
    await changeRoomSetting(services, caller.userId, params.room_id, params.param, params.value);
  },
});

export const roomsStartGame = defineMethod({
  name: 'rooms.startGame',
  summary: 'Start the room’s game (its creator)',
  description: 'The room’s players, in seat order, start a live game; the room then shows it (`gs_id`, `gs_game_id`) and leaves the lobby.',
  auth: 'required',
  bots: true,
  params: P.object({ room_id: roomId }),
  errors: {
    ...NoRoom,
    ...AdminOnly,
    ...Waiting,
    2209: 'the room has one player: a game needs two',
    1903: 'a player of the room is in a live game (data names them and it)',
  },
  handler: async ({ services, caller }, params) => {
    await startRoom(services, caller.userId, params.room_id);
  },
});

export const roomsGet = defineMethod({
  name: 'rooms.get',
  summary: 'The lobby: waiting rooms, or one room',
  description:
    'Without `room_id`, the waiting rooms the caller may see (public ones, and private ones they are in or invited to), oldest first; ' +
    'with it, that room, waiting or started. `users_data` holds the short profiles of their players and invited users.',
  auth: 'optional',
  params: P.object({
    room_id: P.optional(roomId),
    offset: P.uint({ default: 0, maximum: 1_000_000, description: 'rooms to skip' }),
    count: P.uint({ default: 200, minimum: 1, maximum: 200, description: 'rooms to list' }),
  }),
  result: RoomList,
  errors: NoRoom,
  handler: async ({ services, caller }, params) =>
    params.room_id === undefined
      ? lobbyOf(services, caller?.userId, params.offset, params.count)
      : oneRoom(services, caller?.userId, params.room_id),
});

export const roomMethods = [
  roomsCreate,
  roomsJoin,
  roomsLeave,
  roomsDelete,
  roomsInvite,
  roomsKick,
  roomsSettingsChange,
  roomsStartGame,
  roomsGet,
  gamesGetLive,
];
