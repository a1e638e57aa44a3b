import { ApiError, Code } from '../api/errors.js';
import type { Services } from '../services.js';
import { selectRoom, selectVisibleRooms, RoomStatus } from './queries.js';
import { audienceOf, roomViews, usersDataOf, type RoomView } from './views.js';

export interface RoomList {
  count: number;
  rooms: RoomView[];
  users_data: Awaited<ReturnType<typeof usersDataOf>>;
}

/** The lobby as the viewer sees it: waiting rooms, public or theirs, with their users. */
export async function lobbyOf(services: Services, viewerId: number | undefined, offset: number, count: number): Promise<RoomList> {
  const { rooms, total } = await selectVisibleRooms(services.db.kysely, viewerId, offset, count);
  const views = await roomViews(services.db.kysely, rooms);
  return { count: total, rooms: views, users_data: await usersDataOf(services, views) };
}

/** One room, waiting or started; a private one only to its players and invited users. */
export async function oneRoom(services: Services, viewerId: number | undefined, roomId: number): Promise<RoomList> {
  const room = await selectRoom(services.db.kysely, roomId);
  const [view] = room ? await roomViews(services.db.kysely, [room]) : [];
  const audience = view ? audienceOf(view) : null;
  if (!view || (room!.status === RoomStatus.WAITING && audience !== null && (viewerId === undefined || !audience.includes(viewerId))))
    throw new ApiError(Code.NO_SUCH_ROOM, `no room ${roomId}`);
  return { count: 1, rooms: [view], users_data: await usersDataOf(services, [view]) };
}
