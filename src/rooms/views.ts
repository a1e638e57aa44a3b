import type { Executor } from '../db/connection.js';
import type { Services } from '../services.js';
import type { Static } from '@sinclair/typebox';
import { loadUsers, type UserShort } from '../users/index.js';
import { bansOf, invitesOf, membersOf, RoomStatus, type StoredRoom } from './queries.js';

/** A room as the clients read it (`asedias/MonopolyOne-Android` Rooms.kt, the Python clients' RoomPatch). */
export interface RoomView {
  room_id: string;
  status: number;
  admin: number;
  game_mode: number;
  game_submode: number;
  game_2x2: number;
  /** Teams of players in seat order: one team, as rooms play every player against every other. */
  players: number[][];
  players_joined: Record<string, number>;
  /** [invited user, who invited them] */
  invites: [number, number][];
  /** Users kicked from the room. */
  bans: number[];
  flags: { disposition_mode: number; is_tournament: number; ts_created: number; vip: number };
  settings: {
    autostart: number;
    br_corner: number;
    contract_protests: number;
    game_timers: number;
    maxplayers: number;
    pm_allowed: number;
    private: number;
    restarts: number;
  };
  gsm_vote_variants: never[];
  gsm_votes: Record<string, never>;
  op_ts_end: number;
  v: number;
  /** Once started: the game the room became (games.getReplay takes gs_game_id). */
  gs_id?: string;
  gs_game_id?: string;
}

/** The classic game, the only mode the rooms start. */
export const CLASSIC_MODE = 0;

export function roomView(room: StoredRoom, members: number[], invites: [number, number][], bans: number[]): RoomView {
  const players = room.status === RoomStatus.STARTED && room.players ? (JSON.parse(room.players) as number[]) : members;
  return {
    room_id: String(room.room_id),
    status: room.status,
    admin: room.admin_id,
    game_mode: CLASSIC_MODE,
    game_submode: room.game_submode,
    game_2x2: 0,
    players: [players],
    players_joined: {},
    invites,
    bans,
    flags: { disposition_mode: 0, is_tournament: 0, ts_created: room.ts_created, vip: 0 },
    settings: {
      autostart: room.autostart,
      br_corner: room.br_corner,
      contract_protests: 1,
      game_timers: room.game_timers,
      maxplayers: room.maxplayers,
      pm_allowed: 1,
      private: room.private,
      restarts: 0,
    },
    gsm_vote_variants: [],
    gsm_votes: {},
    op_ts_end: 0,
    v: room.v,
    ...(room.gs_id !== null && room.game_id !== null ? { gs_id: room.gs_id, gs_game_id: String(room.game_id) } : {}),
  };
}

/** The views of stored rooms, read in `db` (a transaction sees its own changes). */
export async function roomViews(db: Executor, rooms: StoredRoom[]): Promise<RoomView[]> {
  const ids = rooms.map((r) => r.room_id);
  const [members, invites, bans] = await Promise.all([membersOf(db, ids), invitesOf(db, ids), bansOf(db, ids)]);
  return rooms.map((room) =>
    roomView(room, members.get(room.room_id) ?? [], invites.get(room.room_id) ?? [], bans.get(room.room_id) ?? []),
  );
}

/** Who a room's events and listing reach: everyone for a public room; its players and invited users for a private one. */
export function audienceOf(view: RoomView): number[] | null {
  if (!view.settings.private) return null;
  return [...new Set([...view.players.flat(), ...view.invites.map(([userId]) => userId)])];
}

/** The rank shown for a user who has none: the reference clients read `rank` of every entry of `users_data`. */
export const NO_RANK = { hidden: 1 } as const;

/**
 * The short profiles of the players and invited users of rooms (`users_data` beside them),
 * each with a `rank` (`{hidden: 1}` for a user who has none), as the Python clients read it.
 */
export async function usersDataOf(services: Services, views: RoomView[]): Promise<Static<typeof UserShort>[]> {
  const ids = [...new Set(views.flatMap((view) => [...view.players.flat(), ...view.invites.map(([userId]) => userId)]))].filter(
    (id) => id > 0,
  );
  const users = await loadUsers(services, ids, { form: 'short' });
  return ids.flatMap((id) => {
    const user = users.get(id);
    return user ? [{ ...user, rank: user.rank ?? NO_RANK }] : [];
  });
}
