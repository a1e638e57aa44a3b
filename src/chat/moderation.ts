import { ApiError, Code, badParam } from '../api/errors.js';
import type { Flag } from '../db/flags.js';
import { nowSeconds, type Services } from '../services.js';
import { ownTransaction, type InTransaction } from '../db/connection.js';
import { hideMessage, updateChatState } from './queries.js';
import { protosNamedBy, storeMessage, type SystemMessageFields } from './messages.js';
import { ChatRuntime, enrichmentOf, readChatSettings } from './runtime.js';
import type { ChatSettings } from './history.js';
import type { ChatMessage } from './schemas.js';

export interface ChatStatusChange {
  closed?: boolean | 0 | 1;
  slowmode?: boolean | 0 | 1;
  emoteonly?: boolean | 0 | 1;
  /** Seconds between two messages of one user in slow mode. */
  slowmode_interval?: number;
}

const bit = (value: boolean | Flag | undefined): Flag | undefined =>
  value === undefined ? undefined : value === true || value === 1 ? 1 : 0;

/**
 * Changes the given chat flags (the others stay), then tells every process; gchat.get and
 * `gchat.status` subscribers see the change in every process. Returns the resulting settings.
 */
export async function setChatStatus(
  services: Services,
  change: ChatStatusChange,
  inTransaction = ownTransaction(services.db),
): Promise<ChatSettings> {
  const interval = change.slowmode_interval;
  if (interval !== undefined && (!Number.isSafeInteger(interval) || interval < 1 || interval > 86400))
    throw badParam('slowmode_interval', 'must be an integer from 1 to 86400');
  const values = {
    ...(bit(change.closed) !== undefined ? { closed: bit(change.closed) } : {}),
    ...(bit(change.slowmode) !== undefined ? { slowmode: bit(change.slowmode) } : {}),
    ...(bit(change.emoteonly) !== undefined ? { emoteonly: bit(change.emoteonly) } : {}),
    ...(interval !== undefined ? { slowmode_interval: interval } : {}),
  };
  if (Object.keys(values).length > 0) await inTransaction((trx) => updateChatState(trx, values));
  await services.chat.publish({ kind: 'status', id: ChatRuntime.eventId() });
  return readChatSettings(services);
}

/** Hides a message from the chat in every process; code 2 when no visible message has that id. */
export async function deleteMessage(services: Services, msgId: string, inTransaction = ownTransaction(services.db)): Promise<void> {
  await inTransaction(async (trx) => {
    if (!(await hideMessage(trx, msgId, nowSeconds(services)))) throw badParam('msg_id', `no message ${msgId} in the chat`);
  });
  await services.chat.publish({ kind: 'delete', id: ChatRuntime.eventId(), msg_id: msgId });
}

function positiveId(name: string, id: unknown): number {
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) throw badParam(name, 'must be positive integer ids');
  return id;
}

/**
 * Posts a system message: type 2 (user_id opened case_item_proto_id and got
 * drop_item_proto_id), 3 (user_id gave user_id_receiver the item item_proto_id) or 4 (user_id
 * redeemed a promo code for item_proto_ids). It is kept and shown like any message, whatever
 * the chat status. Returns its msg_id.
 */
export async function postSystemMessage(services: Services, fields: SystemMessageFields, inTransaction?: InTransaction): Promise<string> {
  const now = services.clock.now();
  // The msg_id is given when the message is stored.
  const common = { user_id: fields.user_id, msg_id: '', ts: Math.floor(now / 1000) };
  let message: ChatMessage;
  switch (fields.type) {
    case 2: {
      const caseId = positiveId('case_item_proto_id', fields.case_item_proto_id);
      const dropId = positiveId('case_item_proto_id', fields.drop_item_proto_id);
      message = { type: 2, ...common, case_item_proto_id: caseId, drop_item_proto_id: dropId };
      break;
    }
    case 3: {
      const receiver = positiveId('user_id_receiver', fields.user_id_receiver);
      const protoId = positiveId('user_id_receiver', fields.item_proto_id);
      message = { type: 3, ...common, user_id_receiver: receiver, item_proto_id: protoId };
      break;
    }
    case 4: {
      if (!Array.isArray(fields.item_proto_ids) || fields.item_proto_ids.length === 0)
        throw badParam('item_proto_ids', 'must list at least one prototype');
      message = { type: 4, ...common, item_proto_ids: [...new Set(fields.item_proto_ids.map((id) => positiveId('item_proto_ids', id)))] };
      break;
    }
    default:
      throw badParam('type', 'system messages are of type 2, 3 or 4');
  }
  const { users, item_protos } = await enrichmentOf(services, message);
  const named = new Set(users.map((u) => u.user_id));
  for (const id of [message.user_id, ...(message.type === 3 ? [message.user_id_receiver] : [])])
    if (!named.has(id)) throw new ApiError(Code.USER_NOT_FOUND, `user ${id} does not exist`);
  const known = new Set(item_protos.map((p) => p.item_proto_id));
  const unknown = [...new Set(protosNamedBy(message))].filter((id) => !known.has(id));
  if (unknown.length > 0) throw badParam('item_proto_id', `no prototype ${unknown.join(', ')}`);

  const runtime = services.chat;
  let published!: Promise<void>;
  const stored = await storeMessage(
    services,
    now,
    (msgId) => ({ ...message, msg_id: msgId }),
    (s) =>
      (published = runtime.publish({
        kind: 'add',
        id: ChatRuntime.eventId(),
        seq: s.seq,
        message: s.message,
        users,
        item_protos,
        audience: null,
      })),
    inTransaction,
  );
  await published;
  return stored.message.msg_id;
}
