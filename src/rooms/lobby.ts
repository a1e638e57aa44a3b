/**
 * The lobby's changes. Each runs in one transaction that takes, in this order, the acting
 * user's lock (a player's place in the lobby: create, join and leave take it, so one player's
 * requests cannot put them in two rooms) and the room's lock (every change of a room takes it,
 * so its seats, status and settings are read and written by one request at a time); what it
 * changed is announced on the realtime feed once it has committed.
 */
import { ApiError, Code } from '../api/errors.js';
import { ownTransaction, type Executor } from '../db/connection.js';
import type { Transaction } from 'kysely';
import type { Tables } from '../db/tables.js';
import { nowSeconds, type Services } from '../services.js';
import { requireUser } from '../users/index.js';
import { alreadyInGame } from '../game/index.js';
import { announce, type Announcement, type Patch } from './announce.js';
import {
  blockBetween,
  deleteBan,
  deleteInvite,
  deleteMember,
  deleteRoom,
  insertBan,
  insertInvite,
  insertMember,
  insertRoom,
  invitedTo,
  isBanned,
  isInvited,
  lockUser,
  membersOf,
  roomOfUser,
  RoomStatus,
  selectRoomForUpdate,
  updateRoom,
  type RoomChange,
  type StoredRoom,
} from './queries.js';
import { liveGameOf, startRoomGame } from './start.js';
import { roomViews, type RoomView } from './views.js';

/** Invitations a room holds at most. */
export const MAX_INVITES = 50;

/** The settings rooms.settingsChange takes, with the values this server plays. */
export const ROOM_SETTINGS = {
  private: [0, 1],
  autostart: [0, 1],
  maxplayers: [2, 3, 4, 5],
  game_timers: [1],
  br_corner: [0],
} as const;
export type RoomSetting = keyof typeof ROOM_SETTINGS;

export interface RoomOptions {
  maxplayers: number;
  private: number;
  autostart: number;
  game_submode: number;
  game_2x2: number;
  is_tournament: number;
}

type Trx = Transaction<Tables>;

const noRoom = (roomId: number) => new ApiError(Code.NO_SUCH_ROOM, `no room ${roomId}`);

/** Runs a change of the lobby in one transaction, then announces what it says. */
async function change<T>(services: Services, work: (trx: Trx, told: Announcement[]) => Promise<T>): Promise<T> {
  const told: Announcement[] = [];
  const result = await ownTransaction(services.db)((trx) => work(trx, told));
  await announce(services, told);
  return result;
}

async function viewOf(trx: Executor, room: StoredRoom): Promise<RoomView> {
  const [view] = await roomViews(trx, [room]);
  return view!;
}

async function lockedRoom(services: Services, trx: Trx, roomId: number): Promise<StoredRoom> {
  const room = await selectRoomForUpdate(trx, services.db.dialect, roomId);
  if (!room) throw noRoom(roomId);
  return room;
}

function requireWaiting(room: StoredRoom): void {
  if (room.status !== RoomStatus.WAITING) throw new ApiError(Code.ROOM_STARTED, `the game of room ${room.room_id} has started`);
}

function requireAdmin(room: StoredRoom, userId: number): void {
  if (room.admin_id !== userId) throw new ApiError(Code.NOT_ROOM_ADMIN, `only the creator of room ${room.room_id} may do that`);
}

async function requireFree(services: Services, trx: Trx, userId: number): Promise<void> {
  if (!(await lockUser(trx, services.db.dialect, userId))) throw new ApiError(Code.USER_NOT_FOUND, `user ${userId} does not exist`);
  const current = await roomOfUser(trx, userId);
  if (current !== undefined)
    throw new ApiError(Code.IN_A_ROOM, `you are in room ${current} already: leave it first`, { room_id: String(current) });
}

/**
 * Refuses a player in a live game, before the transaction (its read is the game's own); a game
 * that starts meanwhile is refused to them at the start, whose key allows one live game each.
 */
async function refuseIfPlaying(services: Services, userId: number): Promise<void> {
  const live = await liveGameOf(services, userId);
  if (live) throw alreadyInGame(userId, live.gs_game_id);
}

/** Reads the room again after a change, with its new version. */
async function reread(services: Services, trx: Trx, roomId: number): Promise<RoomView> {
  return viewOf(trx, await lockedRoom(services, trx, roomId));
}

/** Starts the room's game when it is full and set to start by itself; the announcements of the start are added. */
async function autostartIfFull(services: Services, trx: Trx, roomId: number, told: Announcement[]): Promise<void> {
  const room = await lockedRoom(services, trx, roomId);
  const members = (await membersOf(trx, [roomId])).get(roomId) ?? [];
  if (room.autostart === 1 && members.length >= room.maxplayers) told.push(...(await startRoomGame(services, trx, room, members)));
}

export async function createRoom(services: Services, userId: number, options: RoomOptions): Promise<number> {
  if (options.game_2x2) throw new ApiError(Code.ROOM_OPTION_UNSUPPORTED, 'parameter game_2x2: two against two is not played here');
  if (options.is_tournament) throw new ApiError(Code.ROOM_OPTION_UNSUPPORTED, 'parameter is_tournament: tournaments are not played here');
  if (options.game_submode !== 0)
    throw new ApiError(
      Code.ROOM_OPTION_UNSUPPORTED,
      `parameter game_submode: only the classic game (0) is played here, not ${options.game_submode}`,
    );
  await refuseIfPlaying(services, userId);
  return change(services, async (trx, told) => {
    await requireFree(services, trx, userId);
    const ts = nowSeconds(services);
    const roomId = await insertRoom(trx, {
      admin_id: userId,
      game_submode: options.game_submode,
      maxplayers: options.maxplayers,
      private: options.private,
      autostart: options.autostart,
      ts_created: ts,
    });
    await insertMember(trx, roomId, userId, ts);
    told.push({ kind: 'set', view: await reread(services, trx, roomId) });
    return roomId;
  });
}

export async function joinRoom(services: Services, userId: number, roomId: number): Promise<void> {
  await refuseIfPlaying(services, userId);
  await change(services, async (trx, told) => {
    await requireFree(services, trx, userId);
    const room = await lockedRoom(services, trx, roomId);
    const members = (await membersOf(trx, [roomId])).get(roomId) ?? [];
    const invited = await isInvited(trx, roomId, userId);
    if (room.private && !invited) throw noRoomForStranger(room);
    requireWaiting(room);
    if (await isBanned(trx, roomId, userId)) throw new ApiError(Code.KICKED_FROM_ROOM, `you were kicked from room ${roomId}`);
    if (await blockBetween(trx, userId, members))
      throw new ApiError(Code.BLOCKED_BY_USER, `a player of room ${roomId} and you have blocked one another`);
    if (members.length >= room.maxplayers) throw new ApiError(Code.ROOM_FULL, `room ${roomId} is full`);
    await insertMember(trx, roomId, userId, nowSeconds(services));
    const patches: Patch[] = [[1, 'players.0', userId]];
    if (invited) {
      await deleteInvite(trx, roomId, userId);
      patches.push([0, 'invites', userId]);
    }
    await updateRoom(trx, room, {});
    told.push({ kind: 'patch', view: await reread(services, trx, roomId), patches });
    await autostartIfFull(services, trx, roomId, told);
  });
}

/** A private room is not shown to whoever was not invited: it answers as no room. */
function noRoomForStranger(room: StoredRoom): ApiError {
  return new ApiError(Code.ROOM_PRIVATE, `room ${room.room_id} is private: it is joined by invitation only`);
}

/** Takes a player out of their room: the room passes to the next player when its creator leaves, and goes when it is empty. */
async function removeMember(
  services: Services,
  trx: Trx,
  room: StoredRoom,
  userId: number,
  told: Announcement[],
  kicked: boolean,
): Promise<void> {
  // Read once the room is held: a start or a kick that held it first has taken the player out already.
  if (!(await deleteMember(trx, room.room_id, userId)))
    throw new ApiError(Code.NOT_IN_ROOM, `user ${userId} is not in room ${room.room_id}`);
  const members = (await membersOf(trx, [room.room_id])).get(room.room_id) ?? [];
  if (members.length === 0) {
    const view = await viewOf(trx, room);
    await deleteRoom(trx, room.room_id);
    told.push({ kind: 'delete', roomId: view.room_id });
    return;
  }
  const patches: Patch[] = [[0, 'players.0', userId]];
  const change: RoomChange = {};
  if (room.admin_id === userId) {
    change.admin_id = members[0]!;
    patches.push([2, 'admin', members[0]!]);
  }
  if (kicked) {
    await insertBan(trx, room.room_id, userId);
    patches.push([1, 'bans', userId]);
  }
  await updateRoom(trx, room, change);
  told.push({ kind: 'patch', view: await reread(services, trx, room.room_id), patches, also: [userId] });
}

export async function leaveRoom(services: Services, userId: number): Promise<void> {
  await change(services, async (trx, told) => {
    await lockUser(trx, services.db.dialect, userId);
    const roomId = await roomOfUser(trx, userId);
    if (roomId === undefined) throw new ApiError(Code.NOT_IN_ROOM, 'you are in no room');
    const room = await lockedRoom(services, trx, roomId);
    if ((await roomOfUser(trx, userId)) !== roomId) throw new ApiError(Code.NOT_IN_ROOM, 'you are in no room');
    await removeMember(services, trx, room, userId, told, false);
  });
}

/** Takes users out of their rooms, as they leave (a globally blocked account, for example); answers how many were in one. */
export async function removeFromRooms(services: Services, userIds: number[]): Promise<number> {
  let removed = 0;
  for (const userId of userIds)
    await change(services, async (trx, told) => {
      await lockUser(trx, services.db.dialect, userId);
      const roomId = await roomOfUser(trx, userId);
      if (roomId === undefined) return;
      const room = await lockedRoom(services, trx, roomId);
      if (!(await roomOfUser(trx, userId))) return;
      await removeMember(services, trx, room, userId, told, false);
      removed++;
    });
  return removed;
}

export async function deleteRoomOf(services: Services, userId: number, roomId: number): Promise<void> {
  await change(services, async (trx, told) => {
    const room = await lockedRoom(services, trx, roomId);
    requireAdmin(room, userId);
    requireWaiting(room);
    const view = await viewOf(trx, room);
    await deleteRoom(trx, roomId);
    told.push({ kind: 'delete', roomId: view.room_id });
  });
}

export async function inviteToRoom(services: Services, userId: number, roomId: number, targetId: number): Promise<void> {
  await requireUser(services, targetId, { active: true });
  await change(services, async (trx, told) => {
    const room = await lockedRoom(services, trx, roomId);
    const members = (await membersOf(trx, [roomId])).get(roomId) ?? [];
    if (!members.includes(userId)) throw new ApiError(Code.NOT_IN_ROOM, `you are not in room ${roomId}`);
    requireWaiting(room);
    if (members.includes(targetId))
      throw new ApiError(Code.IN_A_ROOM, `user ${targetId} is in room ${roomId} already`, { room_id: String(roomId) });
    if (await blockBetween(trx, targetId, members))
      throw new ApiError(Code.BLOCKED_BY_USER, `user ${targetId} and a player of room ${roomId} have blocked one another`);
    const patches: Patch[] = [];
    if (await isBanned(trx, roomId, targetId)) {
      if (room.admin_id !== userId) throw new ApiError(Code.KICKED_FROM_ROOM, `user ${targetId} was kicked from room ${roomId}`);
      await deleteBan(trx, roomId, targetId);
      patches.push([0, 'bans', targetId]);
    }
    const current = (await invitedTo(trx, roomId)).length;
    if (await isInvited(trx, roomId, targetId)) {
      if (patches.length === 0) return;
    } else {
      if (current >= MAX_INVITES) throw new ApiError(Code.TOO_MANY_OBJECTS, `room ${roomId} holds ${MAX_INVITES} invitations already`);
      await insertInvite(trx, { room_id: roomId, user_id: targetId, inviter_id: userId, ts: nowSeconds(services) });
      patches.push([1, 'invites', [targetId, userId]]);
      told.push({ kind: 'invited', userId: targetId, roomId: String(roomId), from: userId });
    }
    await updateRoom(trx, room, {});
    const view = await reread(services, trx, roomId);
    // The invited user is shown a private room from now on: whole.
    if (room.private) told.unshift({ kind: 'set', view, audience: [targetId] });
    told.unshift({ kind: 'patch', view, patches });
  });
}

export async function kickFromRoom(services: Services, userId: number, roomId: number, targetId: number): Promise<void> {
  await change(services, async (trx, told) => {
    const room = await lockedRoom(services, trx, roomId);
    requireAdmin(room, userId);
    requireWaiting(room);
    if (targetId === userId)
      throw new ApiError(Code.BAD_PARAM, 'parameter user_id: the creator leaves with rooms.leave or deletes the room');
    const members = (await membersOf(trx, [roomId])).get(roomId) ?? [];
    if (members.includes(targetId)) {
      await removeMember(services, trx, room, targetId, told, true);
      return;
    }
    if (!(await deleteInvite(trx, roomId, targetId)))
      throw new ApiError(Code.NOT_IN_ROOM, `user ${targetId} is neither in room ${roomId} nor invited`);
    await insertBan(trx, roomId, targetId);
    await updateRoom(trx, room, {});
    told.push({
      kind: 'patch',
      view: await reread(services, trx, roomId),
      patches: [
        [0, 'invites', targetId],
        [1, 'bans', targetId],
      ],
      also: [targetId],
    });
  });
}

export async function changeRoomSetting(
  services: Services,
  userId: number,
  roomId: number,
  param: RoomSetting,
  value: number,
): Promise<void> {
  const allowed: readonly number[] = ROOM_SETTINGS[param];
  if (!allowed.includes(value))
    throw new ApiError(Code.ROOM_OPTION_UNSUPPORTED, `parameter value: ${param} is one of ${allowed.join(', ')} here, not ${value}`);
  await change(services, async (trx, told) => {
    const room = await lockedRoom(services, trx, roomId);
    requireAdmin(room, userId);
    requireWaiting(room);
    if (room[param] === value) return;
    const members = (await membersOf(trx, [roomId])).get(roomId) ?? [];
    if (param === 'maxplayers' && value < members.length)
      throw new ApiError(Code.ROOM_FULL, `parameter value: room ${roomId} has ${members.length} players already`);
    await updateRoom(trx, room, { [param]: value });
    const view = await reread(services, trx, roomId);
    const patches: Patch[] = [[2, `settings.${param}`, value]];
    if (param === 'private') {
      // Who no longer sees the room is told it is gone; who now sees it is given it whole.
      if (value === 1) told.push({ kind: 'delete', roomId: view.room_id, audience: null }, { kind: 'set', view });
      else told.push({ kind: 'set', view, audience: null });
    } else told.push({ kind: 'patch', view, patches });
    await autostartIfFull(services, trx, roomId, told);
  });
}

export async function startRoom(services: Services, userId: number, roomId: number): Promise<void> {
  await change(services, async (trx, told) => {
    const room = await lockedRoom(services, trx, roomId);
    requireAdmin(room, userId);
    requireWaiting(room);
    const members = (await membersOf(trx, [roomId])).get(roomId) ?? [];
    if (members.length < 2) throw new ApiError(Code.NOT_ENOUGH_PLAYERS, `room ${roomId} has ${members.length} player: a game needs 2`);
    told.push(...(await startRoomGame(services, trx, room, members)));
  });
}
