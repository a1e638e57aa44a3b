import type { Executor } from '../db/connection.js';
import { messageOf } from './conversation.js';
import { selectCounters, selectEventsAfter, selectMessages } from './queries.js';
import { SyncEventType, type Sync } from './schemas.js';

/** Events one sync answers at most; a client asks again from the last id for more. */
export const SYNC_EVENTS = 100;

export const EMPTY_SYNC: Sync = { events: [], dialogs: [], messages: [] };

/**
 * The changes to the user's conversations after `idLast` (only those with `partnerId` when
 * given): each event chained to the one before it, the unread count now of every conversation
 * they touch, and the new messages they name that are still there.
 */
export async function syncAfter(k: Executor, userId: number, idLast: number, partnerId?: number): Promise<Sync> {
  const rows = await selectEventsAfter(k, userId, idLast, SYNC_EVENTS, partnerId);
  if (rows.length === 0) return EMPTY_SYNC;
  let previous: number | null = idLast;
  const events = rows.map((row) => {
    const partner = row.user_low === userId ? row.user_high : row.user_low;
    const event = {
      id: row.event_id,
      chain: [previous, row.event_id],
      data: { type: row.type as Sync['events'][number]['data']['type'], msg_id: row.msg_id ?? row.event_id, dialog: { user_id: partner } },
    };
    previous = row.event_id;
    return event;
  });
  const partners = [...new Set(events.map((event) => event.data.dialog.user_id))];
  const newIds = events.filter((event) => event.data.type === SyncEventType.NEW).map((event) => event.data.msg_id);
  const [counters, messages] = await Promise.all([selectCounters(k, userId, partners), selectMessages(k, newIds)]);
  return {
    events,
    dialogs: partners.map((id) => ({ user_id: id, new_counter: counters.get(id) ?? 0 })),
    messages: messages
      .filter((row) => row.deleted_at === null)
      .sort((a, b) => a.msg_id - b.msg_id)
      .map(messageOf),
  };
}
