import type { Transaction } from 'kysely';
import type { Tables } from '../db/tables.js';
import type { Services } from '../services.js';
import { partyCounters } from './queries.js';
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

/** What one party's connections are told of an event. */
export interface PartyFrame {
  userId: number;
  fields: Record<string, unknown>;
}

/**
 * The `im.sync` event each party of `event` is told: `{id_last, chain, data: {type, msg_id,
 * dialog: {user_id}}, message?, new_counter, messages_new}` with the party's own counters as
 * the event's transaction leaves them (one query for both parties).
 */
export async function framesOf(trx: Transaction<Tables>, event: ConversationEvent): Promise<PartyFrame[]> {
  const [actor, other] = event.parties;
  const counters = await partyCounters(trx, actor, other);
  const targets: [number, number][] =
    actor === other
      ? [[actor, other]]
      : [
          [actor, other],
          [other, actor],
        ];
  return targets.map(([userId, partnerId]) => {
    const { counter, total } = counters.get(userId) ?? { counter: 0, total: 0 };
    return {
      userId,
      fields: {
        id_last: event.eventId,
        chain: [null, event.eventId],
        data: { type: event.type, msg_id: event.msgId, dialog: { user_id: partnerId } },
        ...(event.message ? { message: event.message } : {}),
        new_counter: counter,
        messages_new: total,
      },
    };
  });
}

/**
 * Tells each party's connections, in every process. A failure to tell is logged: the change
 * stands, and `im.sync` gives it to clients that ask.
 */
export async function publishFrames(services: Services, frames: readonly PartyFrame[]): Promise<void> {
  for (const { userId, fields } of frames) {
    try {
      await services.realtime.pushToUser(userId, { type: IM_SYNC_EVENT, fields, json: fields });
    } catch (error) {
      services.log.error({ err: error }, 'could not announce a private message event on the realtime feed');
    }
  }
}
