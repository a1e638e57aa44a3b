import type { Services } from '../services.js';
import { inviteCount } from './queries.js';
import { audienceOf, usersDataOf, type RoomView } from './views.js';

/** The realtime topic of the lobby (`/ws?subs=rooms`). */
export const ROOMS_TOPIC = 'rooms';

/** Realtime event types of the lobby, as the clients name them. */
export const RoomEvent = {
  /** A room appeared (or must be taken whole): `{room_id}`, the room in `rooms`, its users in `users_data`. */
  SET: 'room.set',
  /** A room changed: `{room_id, patches, v}`. */
  PATCH: 'room.patch',
  /** A room is gone from the lobby (deleted, emptied or started): `{room_id}`. */
  DELETE: 'room.delete',
  /** The user was invited to a room (to the user only): `{room_id, user_id_from, invites}`. */
  INVITE: 'room.invite',
} as const;

/**
 * A change of a room, as its patches: `[1, path, value]` adds value to the list at path,
 * `[0, path, value]` removes it, `[2, path, value]` sets path to value. Paths: `players.0`
 * (the seats), `invites`, `bans`, `admin`, `status`, `gs_id`, `gs_game_id`, `settings.<name>`.
 */
export type Patch = [0 | 1 | 2, string, unknown];

/** What a committed change tells the lobby, in order. */
export type Announcement =
  | { kind: 'set'; view: RoomView; audience?: number[] | null }
  | { kind: 'patch'; view: RoomView; patches: Patch[]; also?: number[] }
  | { kind: 'delete'; roomId: string; audience?: number[] | null }
  | { kind: 'invited'; userId: number; roomId: string; from: number };

/**
 * Tells every process's subscribers of committed changes. A failure is logged: the change
 * stands, and rooms.get gives it to clients that ask.
 */
export async function announce(services: Services, announcements: Announcement[]): Promise<void> {
  for (const announcement of announcements) {
    try {
      await announceOne(services, announcement);
    } catch (error) {
      services.log.error({ err: error }, 'could not announce a room change on the realtime feed');
    }
  }
}

async function announceOne(services: Services, a: Announcement): Promise<void> {
  const { realtime } = services;
  switch (a.kind) {
    case 'set': {
      const fields = { room_id: a.view.room_id };
      const usersData = await usersDataOf(services, [a.view]);
      await realtime.publish({
        topic: ROOMS_TOPIC,
        type: RoomEvent.SET,
        fields,
        lists: { rooms: [a.view], users_data: usersData },
        json: { ...fields, room: a.view, users_data: usersData },
        audience: a.audience === undefined ? audienceOf(a.view) : a.audience,
      });
      return;
    }
    case 'patch': {
      const fields = { room_id: a.view.room_id, patches: a.patches, v: a.view.v };
      const joined = a.patches.filter(([op, path]) => op === 1 && path === 'players.0').map(([, , userId]) => userId as number);
      const usersData = joined.length > 0 ? await usersDataOf(services, [{ ...a.view, players: [joined], invites: [] }]) : [];
      const audience = audienceOf(a.view);
      await realtime.publish({
        topic: ROOMS_TOPIC,
        type: RoomEvent.PATCH,
        fields,
        ...(usersData.length > 0 ? { lists: { users_data: usersData } } : {}),
        json: usersData.length > 0 ? { ...fields, users_data: usersData } : fields,
        audience: audience === null ? null : [...new Set([...audience, ...(a.also ?? [])])],
      });
      return;
    }
    case 'delete': {
      const fields = { room_id: a.roomId };
      await realtime.publish({ topic: ROOMS_TOPIC, type: RoomEvent.DELETE, fields, json: fields, audience: a.audience ?? null });
      return;
    }
    case 'invited': {
      const fields = { room_id: a.roomId, user_id_from: a.from, invites: await inviteCount(services.db.kysely, a.userId) };
      await realtime.pushToUser(a.userId, { type: RoomEvent.INVITE, fields, json: fields });
      return;
    }
  }
}
