import type { Executor } from '../db/connection.js';
import type { Services } from '../services.js';
import { newCounter, unreadTotal } from './queries.js';
import type { PrivateMessage } from './schemas.js';

/** The realtime event type of every change to a user's conversations (what Zakovskiy/monopolyone.py reads as ImSync). */
export const IM_SYNC_EVENT = 'im.sync';

export interface ConversationEvent {
  eventId: number;
  type: number;
  msgId: number;
  /** [the one who acted (sender, reader, author of the deleted message), the other party] */
  parties: [number, number];
  message?: PrivateMessage;
}

/**
 * Tells each party's connections, in every process, of an event of their conversation: an
 * `im.sync` event `{id_last, chain, data: {type, msg_id, dialog: {user_id}}, message?,
 * new_counter, messages_new}` with the party's own counters, read in `trx`. Run while the
 * parties' locks are held, so their events are told in the order of their ids. A failure to
 * tell is logged: the change stands, and `im.sync` gives it to clients that ask.
 */
export async function announceEvent(services: Services, trx: Executor, event: ConversationEvent): Promise<void> {
  const [first, second] = event.parties;
  const targets =
    first === second
      ? [[first, second]]
      : [
          [first, second],
          [second, first],
        ];
  for (const [userId, partnerId] of targets as [number, number][]) {
    const [counter, total] = await Promise.all([newCounter(trx, userId, partnerId), unreadTotal(trx, userId)]);
    const fields = {
      id_last: event.eventId,
      chain: [null, event.eventId],
      data: { type: event.type, msg_id: event.msgId, dialog: { user_id: partnerId } },
      ...(event.message ? { message: event.message } : {}),
      new_counter: counter,
      messages_new: total,
    };
    try {
      await services.realtime.pushToUser(userId, { type: IM_SYNC_EVENT, fields, json: fields });
    } catch (error) {
      services.log.error({ err: error }, 'could not announce a private message event on the realtime feed');
    }
  }
}
