import { api, ok } from './api/client';
import { connections, counters, onFeedEvent, type FeedEvent } from './realtime';
import { navigate } from './router';
import { session } from './session';
import { Store } from './store';
import { tablePath } from './table-links';
import { usersById, type UserLike } from './users';

/** A page of the lobby, or one room (`room_id`). */
const readRooms = async (body: { room_id?: number; offset?: number; count?: number }) =>
  (await ok(api.POST('/api/rooms.get', { body }))).data;
export type Room = Awaited<ReturnType<typeof readRooms>>['rooms'][number];

/** The lobby as the signed-in player sees it: the waiting rooms (public ones, and private ones they are in or invited to). */
export interface Lobby {
  /** Whose lobby it is. */
  owner: number;
  rooms: Map<string, Room>;
  users: Map<number, UserLike>;
}

/** A change of the player's own room that the lobby page tells them of. */
export type LobbyNotice = { kind: 'kicked' | 'deleted'; roomId: string } | undefined;

/** The lobby, once read; kept current by the feed's `room.set`, `room.patch` and `room.delete` events. */
export const lobby = new Store<Lobby | undefined>(undefined);
/** The invitations to waiting rooms: the `auth` frame's counter until the lobby is read, then counted in it. */
export const invitationCount = new Store(0);
export const lobbyNotice = new Store<LobbyNotice>(undefined);

const PAGE = 200;
/** Pages of rooms read at most (the first 2,000 rooms). */
const MAX_PAGES = 10;
/** `room.patch` operations: `[op, path, value]`. */
const REMOVE = 0;
const ADD = 1;
const SET = 2;
const STARTED = 1;

type Patch = [number, string, unknown];

const me = () => session.value?.user_id;
const playersOf = (room: Room) => room.players.flat();

/** The waiting room the player is in. */
export function roomOf(state: Lobby | undefined, userId: number | undefined): Room | undefined {
  if (!state || userId === undefined) return undefined;
  for (const room of state.rooms.values()) if (room.status === 0 && playersOf(room).includes(userId)) return room;
  return undefined;
}

/** The waiting rooms the player is invited to (and not in), oldest first. */
export function invitationsOf(state: Lobby | undefined, userId: number | undefined): Room[] {
  if (!state || userId === undefined) return [];
  return [...state.rooms.values()].filter(
    (room) => room.status === 0 && room.invites.some(([invited]) => invited === userId) && !playersOf(room).includes(userId),
  );
}

function count(): void {
  invitationCount.set(lobby.value ? invitationsOf(lobby.value, me()).length : (counters.value.invites ?? 0));
}

/** Users the rooms name that the lobby has no profile of yet. */
function unknownUsers(state: Lobby): number[] {
  const ids = new Set<number>();
  for (const room of state.rooms.values())
    for (const id of [...playersOf(room), ...room.invites.map(([invited]) => invited)]) if (id > 0 && !state.users.has(id)) ids.add(id);
  return [...ids];
}

let fetchingUsers = false;
async function completeUsers(): Promise<void> {
  const state = lobby.value;
  if (!state || fetchingUsers) return;
  const missing = unknownUsers(state);
  if (missing.length === 0) return;
  fetchingUsers = true;
  try {
    const found = await usersById(missing);
    const now = lobby.value;
    if (now) lobby.set({ ...now, users: new Map([...now.users, ...found]) });
  } catch {
    // Shown by id until the next change brings them.
  } finally {
    fetchingUsers = false;
  }
}

/** Takes a player whose room has just started to its table, once. */
let tableShown: string | undefined;
function followStart(room: Room): void {
  const userId = me();
  if (room.status !== STARTED || !room.gs_id || !room.gs_game_id || userId === undefined || !playersOf(room).includes(userId)) return;
  const path = tablePath(room.gs_id, room.gs_game_id);
  if (tableShown === path) return;
  tableShown = path;
  navigate(path);
}

/** Reads a started room of the player's again (its start may have been missed) and takes them to its table. */
export async function followRoom(roomId: string): Promise<void> {
  const room = (await readRooms({ room_id: Number(roomId) })).rooms[0];
  if (room) followStart(room);
}

function applyPatch(room: Room, patches: Patch[]): Room {
  const next: Room = structuredClone(room);
  for (const [op, path, value] of patches) {
    if (path === 'players.0') {
      const seats = next.players[0] ?? (next.players[0] = []);
      if (op === ADD && !seats.includes(value as number)) seats.push(value as number);
      if (op === REMOVE) next.players[0] = seats.filter((id) => id !== value);
    } else if (path === 'invites') {
      if (op === ADD) next.invites.push(value as [number, number]);
      if (op === REMOVE) next.invites = next.invites.filter(([invited]) => invited !== value);
    } else if (path === 'bans') {
      if (op === ADD && !next.bans.includes(value as number)) next.bans.push(value as number);
      if (op === REMOVE) next.bans = next.bans.filter((id) => id !== value);
    } else if (op === SET) {
      const [head, name] = path.split('.');
      if (head === 'settings' && name) (next.settings as Record<string, unknown>)[name] = value;
      else if (head === 'admin' || head === 'status') next[head] = value as number;
      else if (head === 'gs_id' || head === 'gs_game_id') next[head] = String(value);
    }
  }
  return next;
}

/** Applies one event to the lobby; answers a room to read again when a change was missed. */
function apply(state: Lobby, event: FeedEvent, frame: { rooms?: unknown[]; users_data?: unknown[] }): string | undefined {
  const roomId = String(event.room_id);
  const userId = me();
  for (const user of (frame.users_data ?? []) as UserLike[]) state.users.set(user.user_id, user);
  if (event.type === 'room.set') {
    const given = ((frame.rooms ?? []) as Room[]).filter((room) => room.room_id === roomId).sort((a, b) => b.v - a.v)[0];
    const known = state.rooms.get(roomId);
    if (given && (!known || given.v >= known.v)) state.rooms.set(roomId, given);
    // A room made private is told gone, then given whole to those who still see it.
    if (given && lobbyNotice.value?.roomId === roomId) lobbyNotice.set(undefined);
  } else if (event.type === 'room.patch') {
    const known = state.rooms.get(roomId);
    const v = Number(event.v);
    if (!known) return roomId;
    if (v <= known.v) return undefined;
    if (v > known.v + 1) return roomId;
    const wasMine = userId !== undefined && playersOf(known).includes(userId);
    const room = { ...applyPatch(known, event.patches as Patch[]), v };
    state.rooms.set(roomId, room);
    if (wasMine && userId !== undefined && !playersOf(room).includes(userId) && room.status === 0 && room.bans.includes(userId))
      lobbyNotice.set({ kind: 'kicked', roomId });
    followStart(room);
  } else if (event.type === 'room.delete') {
    const known = state.rooms.get(roomId);
    if (known && known.status === 0 && userId !== undefined && playersOf(known).includes(userId) && known.admin !== userId)
      lobbyNotice.set({ kind: 'deleted', roomId });
    state.rooms.delete(roomId);
  }
  return undefined;
}

const ROOM_EVENTS = new Set(['room.set', 'room.patch', 'room.delete']);
/** Events heard while the lobby is being read: applied to what the read answers. */
let heldWhileLoading: [FeedEvent, { rooms?: unknown[]; users_data?: unknown[] }][] | undefined;

async function readRoom(roomId: string): Promise<void> {
  try {
    const data = await readRooms({ room_id: Number(roomId) });
    const state = lobby.value;
    const room = data.rooms[0];
    if (!state || !room) return;
    for (const user of data.users_data) state.users.set(user.user_id, user as UserLike);
    if (room.status === 0) state.rooms.set(roomId, room);
    else state.rooms.delete(roomId);
    followStart(room);
    lobby.set({ ...state });
    count();
  } catch {
    // Gone, or no longer visible.
    const state = lobby.value;
    if (state?.rooms.delete(roomId)) {
      lobby.set({ ...state });
      count();
    }
  }
}

function receive(event: FeedEvent, frame: { rooms?: unknown[]; users_data?: unknown[] }): void {
  if (event.type === 'room.invite' && typeof event.invites === 'number' && !lobby.value) {
    counters.set({ ...counters.value, invites: event.invites });
    count();
    return;
  }
  if (!ROOM_EVENTS.has(event.type)) return;
  if (heldWhileLoading) {
    heldWhileLoading.push([event, frame]);
    return;
  }
  const state = lobby.value;
  if (!state) return;
  const reread = apply(state, event, frame);
  // Seated again: what happened to the player's former room is old news.
  if (lobbyNotice.value && roomOf(state, me())) lobbyNotice.set(undefined);
  lobby.set({ ...state });
  count();
  if (reread) void readRoom(reread);
  void completeUsers();
}

let round = 0;
/** Reads the whole lobby (again); events heard meanwhile are applied to it once read. */
export async function loadLobby(): Promise<void> {
  const mine = ++round;
  if (me() === undefined) return;
  const before = roomOf(lobby.value, me());
  heldWhileLoading = [];
  try {
    const rooms = new Map<string, Room>();
    const users = new Map<number, UserLike>();
    for (let page = 0; page < MAX_PAGES; page++) {
      const data = await readRooms({ offset: page * PAGE, count: PAGE });
      for (const room of data.rooms) rooms.set(room.room_id, room);
      for (const user of data.users_data) users.set(user.user_id, user as UserLike);
      if (data.rooms.length < PAGE || (page + 1) * PAGE >= data.count) break;
    }
    if (mine !== round) return;
    const state: Lobby = { owner: me()!, rooms, users };
    const held = heldWhileLoading;
    heldWhileLoading = undefined;
    const reread = new Set<string>();
    for (const [event, frame] of held) {
      const roomId = apply(state, event, frame);
      if (roomId) reread.add(roomId);
    }
    lobby.set(state);
    count();
    for (const roomId of reread) void readRoom(roomId);
    void completeUsers();
    // The player's room started while the feed was away: its table.
    if (before && !roomOf(state, me())) await followRoom(before.room_id).catch(() => undefined);
  } finally {
    if (mine === round) heldWhileLoading = undefined;
  }
}

/** Follows the lobby for the signed-in player: read at each (re)connection of the feed, forgotten at sign-out. */
export function followLobby(): void {
  onFeedEvent(receive);
  counters.subscribe(() => count());
  connections.subscribe(() => {
    if (session.value) void loadLobby().catch(() => undefined);
  });
  session.subscribe((next) => {
    if (!next || next.user_id !== lobby.value?.owner) {
      round++;
      heldWhileLoading = undefined;
      lobby.set(undefined);
      lobbyNotice.set(undefined);
      count();
    }
  });
}
