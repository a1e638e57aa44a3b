import { sql, type Selectable } from 'kysely';
import type { DialectName, Executor } from '../db/connection.js';
import type { RoomsTable } from '../db/tables.js';

export type StoredRoom = Selectable<RoomsTable>;

/** Room statuses as the clients read them. */
export const RoomStatus = { WAITING: 0, STARTED: 1 } as const;
const WAITING = sql.lit(RoomStatus.WAITING);

const numberOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

function storedRoom(row: Record<string, unknown>): StoredRoom {
  return {
    room_id: Number(row.room_id),
    status: Number(row.status),
    admin_id: Number(row.admin_id),
    game_submode: Number(row.game_submode),
    maxplayers: Number(row.maxplayers),
    private: Number(row.private),
    autostart: Number(row.autostart),
    game_timers: Number(row.game_timers),
    br_corner: Number(row.br_corner),
    v: Number(row.v),
    ts_created: Number(row.ts_created),
    players: row.players === null ? null : String(row.players),
    game_id: numberOrNull(row.game_id),
    gs_id: row.gs_id === null ? null : String(row.gs_id),
  };
}

export interface NewRoom {
  admin_id: number;
  game_submode: number;
  maxplayers: number;
  private: number;
  autostart: number;
  ts_created: number;
}

export async function insertRoom(trx: Executor, room: NewRoom): Promise<number> {
  const row = await trx
    .insertInto('rooms')
    .values({ ...room, status: RoomStatus.WAITING, game_timers: 1, br_corner: 0, v: 1 })
    .returning('room_id')
    .executeTakeFirstOrThrow();
  return Number(row.room_id);
}

/**
 * Holds a user's place in the lobby until the transaction ends: every change of a user's
 * membership (create, join, leave) takes it first, then the room's lock, always in that order.
 */
export async function lockUser(trx: Executor, dialect: DialectName, userId: number): Promise<boolean> {
  const lock = dialect === 'postgres' ? sql` for update` : sql``;
  const rows = await sql<{ user_id: number }>`select user_id from users where user_id = ${userId}${lock}`.execute(trx);
  return rows.rows.length > 0;
}

/** The room, locked against other writers until the transaction ends (PostgreSQL; SQLite has one writer). */
export async function selectRoomForUpdate(trx: Executor, dialect: DialectName, roomId: number): Promise<StoredRoom | undefined> {
  let query = trx.selectFrom('rooms').selectAll().where('room_id', '=', roomId);
  if (dialect === 'postgres') query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row ? storedRoom(row) : undefined;
}

export async function selectRoom(db: Executor, roomId: number): Promise<StoredRoom | undefined> {
  const row = await db.selectFrom('rooms').selectAll().where('room_id', '=', roomId).executeTakeFirst();
  return row ? storedRoom(row) : undefined;
}

/** Waiting rooms the viewer may see (the public ones, and the private ones they are in or invited to), oldest first, and how many there are. */
export async function selectVisibleRooms(
  db: Executor,
  viewerId: number | undefined,
  offset: number,
  count: number,
): Promise<{ rooms: StoredRoom[]; total: number }> {
  const visible = db
    .selectFrom('rooms')
    .where('status', '=', WAITING)
    .where((eb) =>
      viewerId === undefined
        ? eb('private', '=', 0)
        : eb.or([
            eb('private', '=', 0),
            eb('room_id', 'in', eb.selectFrom('room_members').select('room_id').where('user_id', '=', viewerId)),
            eb('room_id', 'in', eb.selectFrom('room_invites').select('room_id').where('user_id', '=', viewerId)),
          ]),
    );
  const [rows, total] = await Promise.all([
    visible.selectAll().orderBy('room_id').offset(offset).limit(count).execute(),
    visible.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst(),
  ]);
  return { rooms: rows.map(storedRoom), total: Number(total?.n ?? 0) };
}

export async function roomOfUser(db: Executor, userId: number): Promise<number | undefined> {
  const row = await db.selectFrom('room_members').select('room_id').where('user_id', '=', userId).executeTakeFirst();
  return row ? Number(row.room_id) : undefined;
}

/** The members of rooms in seat order, by room. */
export async function membersOf(db: Executor, roomIds: number[]): Promise<Map<number, number[]>> {
  const members = new Map<number, number[]>(roomIds.map((id) => [id, []]));
  if (roomIds.length === 0) return members;
  const rows = await db
    .selectFrom('room_members')
    .select(['room_id', 'user_id'])
    .where('room_id', 'in', roomIds)
    .orderBy('room_id')
    .orderBy('seat')
    .execute();
  for (const row of rows) members.get(Number(row.room_id))?.push(Number(row.user_id));
  return members;
}

export async function insertMember(trx: Executor, roomId: number, userId: number, ts: number): Promise<void> {
  const last = await trx
    .selectFrom('room_members')
    .select((eb) => eb.fn.max('seat').as('seat'))
    .where('room_id', '=', roomId)
    .executeTakeFirst();
  const seat = last?.seat === null || last?.seat === undefined ? 0 : Number(last.seat) + 1;
  await trx.insertInto('room_members').values({ room_id: roomId, user_id: userId, seat, ts_joined: ts }).execute();
}

export async function deleteMember(trx: Executor, roomId: number, userId: number): Promise<boolean> {
  const result = await trx.deleteFrom('room_members').where('room_id', '=', roomId).where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Invitations of rooms as [invited user, inviter], oldest first, by room. */
export async function invitesOf(db: Executor, roomIds: number[]): Promise<Map<number, [number, number][]>> {
  const invites = new Map<number, [number, number][]>(roomIds.map((id) => [id, []]));
  if (roomIds.length === 0) return invites;
  const rows = await db
    .selectFrom('room_invites')
    .select(['room_id', 'user_id', 'inviter_id'])
    .where('room_id', 'in', roomIds)
    .orderBy('ts')
    .orderBy('user_id')
    .execute();
  for (const row of rows) invites.get(Number(row.room_id))?.push([Number(row.user_id), Number(row.inviter_id)]);
  return invites;
}

export async function bansOf(db: Executor, roomIds: number[]): Promise<Map<number, number[]>> {
  const bans = new Map<number, number[]>(roomIds.map((id) => [id, []]));
  if (roomIds.length === 0) return bans;
  const rows = await db.selectFrom('room_bans').select(['room_id', 'user_id']).where('room_id', 'in', roomIds).orderBy('user_id').execute();
  for (const row of rows) bans.get(Number(row.room_id))?.push(Number(row.user_id));
  return bans;
}

export async function isInvited(db: Executor, roomId: number, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('room_invites')
    .select('user_id')
    .where('room_id', '=', roomId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function isBanned(db: Executor, roomId: number, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('room_bans')
    .select('user_id')
    .where('room_id', '=', roomId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Adds an invitation; false when the user was invited already. */
export async function insertInvite(
  trx: Executor,
  invite: { room_id: number; user_id: number; inviter_id: number; ts: number },
): Promise<boolean> {
  const result = await trx
    .insertInto('room_invites')
    .values(invite)
    .onConflict((oc) => oc.columns(['room_id', 'user_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function deleteInvite(trx: Executor, roomId: number, userId: number): Promise<boolean> {
  const result = await trx.deleteFrom('room_invites').where('room_id', '=', roomId).where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function insertBan(trx: Executor, roomId: number, userId: number): Promise<void> {
  await trx
    .insertInto('room_bans')
    .values({ room_id: roomId, user_id: userId })
    .onConflict((oc) => oc.columns(['room_id', 'user_id']).doNothing())
    .execute();
}

export async function deleteBan(trx: Executor, roomId: number, userId: number): Promise<boolean> {
  const result = await trx.deleteFrom('room_bans').where('room_id', '=', roomId).where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Who was invited to a room: they are told when it goes. */
export async function invitedTo(db: Executor, roomId: number): Promise<number[]> {
  const rows = await db.selectFrom('room_invites').select('user_id').where('room_id', '=', roomId).execute();
  return rows.map((r) => Number(r.user_id));
}

/** Removes a room and everything that hangs on it. */
export async function deleteRoom(trx: Executor, roomId: number): Promise<void> {
  await trx.deleteFrom('room_members').where('room_id', '=', roomId).execute();
  await trx.deleteFrom('room_invites').where('room_id', '=', roomId).execute();
  await trx.deleteFrom('room_bans').where('room_id', '=', roomId).execute();
  await trx.deleteFrom('rooms').where('room_id', '=', roomId).execute();
}

export type RoomChange = Partial<Pick<StoredRoom, 'admin_id' | 'maxplayers' | 'private' | 'autostart' | 'game_timers' | 'br_corner'>>;

/** Writes a change and the room's next version; answers that version. */
export async function updateRoom(trx: Executor, room: StoredRoom, change: RoomChange): Promise<number> {
  const v = room.v + 1;
  await trx
    .updateTable('rooms')
    .set({ ...change, v })
    .where('room_id', '=', room.room_id)
    .execute();
  return v;
}

/** Marks the room started as the game: its players are written down and it holds members no more. */
export async function markStarted(
  trx: Executor,
  room: StoredRoom,
  players: number[],
  game: { gameId: number; gsId: string },
): Promise<number> {
  const v = room.v + 1;
  await trx
    .updateTable('rooms')
    .set({ status: RoomStatus.STARTED, v, players: JSON.stringify(players), game_id: game.gameId, gs_id: game.gsId })
    .where('room_id', '=', room.room_id)
    .execute();
  await trx.deleteFrom('room_members').where('room_id', '=', room.room_id).execute();
  await trx.deleteFrom('room_invites').where('room_id', '=', room.room_id).execute();
  return v;
}

/** Invitations to waiting rooms a user has: the `invites` counter. */
export async function inviteCount(db: Executor, userId: number): Promise<number> {
  const row = await db
    .selectFrom('room_invites')
    .innerJoin('rooms', 'rooms.room_id', 'room_invites.room_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('room_invites.user_id', '=', userId)
    .where('rooms.status', '=', WAITING)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Blocks between a user and any of others, in either direction. */
export async function blockBetween(db: Executor, userId: number, otherIds: number[]): Promise<boolean> {
  if (otherIds.length === 0) return false;
  const row = await db
    .selectFrom('blocks')
    .select('user_id')
    .where((eb) =>
      eb.or([
        eb.and([eb('user_id', '=', userId), eb('blocked_user_id', 'in', otherIds)]),
        eb.and([eb('user_id', 'in', otherIds), eb('blocked_user_id', '=', userId)]),
      ]),
    )
    .executeTakeFirst();
  return row !== undefined;
}

/** Of these users, those globally blocked. */
export async function globallyBanned(db: Executor, userIds: number[]): Promise<number[]> {
  if (userIds.length === 0) return [];
  const rows = await db.selectFrom('users').select('user_id').where('user_id', 'in', userIds).where('global_ban', '=', 1).execute();
  return rows.map((r) => Number(r.user_id));
}
