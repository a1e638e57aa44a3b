import type { Transaction } from 'kysely';
import { ApiError, Code, authError } from '../api/errors.js';
import type { InTransaction } from '../db/connection.js';
import type { Tables } from '../db/tables.js';
import type { Services } from '../services.js';
import {
  areFriends,
  blockedEitherWay,
  hideMessage,
  insertEvent,
  insertMessage,
  lockParties,
  lockPartiesOfSend,
  markRead,
  msgIdOfSendId,
  newCounter,
  refreshLastMessage,
  selectMessage,
  touchDialogs,
  type MessageRow,
  type PartyRow,
} from './queries.js';
import { MessageType, SyncEventType, type PrivateMessage } from './schemas.js';
import { inAnnouncedTransaction } from './turns.js';

export function messageOf(row: MessageRow): PrivateMessage {
  return {
    msg_id: row.msg_id,
    is_read: row.is_read === 1 ? 1 : 0,
    text: row.text,
    ts_created: row.ts_created,
    type: MessageType.TEXT,
    user_id: row.sender_id,
  };
}

const nowSeconds = (services: Services) => Math.floor(services.clock.now() / 1000);

/**
 * Refuses a message from `sender` to `receiver` that a ban, a mute, a block (`blocked`: between
 * the two) or the receiver's privacy forbids.
 */
async function checkAllowed(
  trx: Transaction<Tables>,
  parties: Map<number, PartyRow>,
  sender: PartyRow,
  receiverId: number,
  blocked: boolean,
  now: number,
) {
  const receiver = parties.get(receiverId);
  if (!receiver || receiver.global_ban === 1)
    throw new ApiError(Code.USER_NOT_FOUND, `parameter user_id: user ${receiverId} does not exist`);
  if (sender.global_ban === 1) throw new ApiError(Code.GLOBAL_BAN, 'your account is blocked');
  if (sender.muted_until !== null && sender.muted_until > now)
    throw new ApiError(Code.MUTED, 'you are muted', { muted_until: sender.muted_until });
  // A bot acts for its owner: the owner's blocks bind it too.
  const owner = sender.bot_owner_id;
  if (blocked || (owner !== null && owner !== receiverId && (await blockedEitherWay(trx, owner, receiverId))))
    throw new ApiError(Code.BLOCKED_BY_USER, 'you cannot write to this user: one of you has blocked the other');
  if (receiver.im_privacy === 'nobody') throw new ApiError(Code.PRIVACY, "the user's privacy settings allow no private messages");
  if (receiver.im_privacy === 'friends' && !(await areFriends(trx, sender.user_id, receiverId)))
    throw new ApiError(Code.PRIVACY, "the user's privacy settings allow private messages from friends only");
}

export interface Outgoing {
  senderId: number;
  receiverId: number;
  text: string;
  sendId: string | null;
}

/**
 * Stores a message and counts it unread for its receiver, in one transaction under both parties'
 * locks; a send_id the sender used before answers that message's id and stores nothing. Both
 * parties' connections are told once it has committed, in the order of the events' ids.
 */
export async function storeOutgoing(services: Services, outgoing: Outgoing): Promise<{ msgId: number; created: boolean }> {
  const { senderId, receiverId, text, sendId } = outgoing;
  const now = nowSeconds(services);
  return inAnnouncedTransaction(services, async (trx, announce) => {
    const { parties, blocked } = await lockPartiesOfSend(trx, services.db.dialect, [senderId, receiverId]);
    const sender = parties.get(senderId);
    if (!sender) throw authError();
    if (sendId !== null) {
      const earlier = await msgIdOfSendId(trx, senderId, sendId);
      if (earlier !== undefined) return { msgId: earlier, created: false };
    }
    await checkAllowed(trx, parties, sender, receiverId, blocked, now);
    const msgId = await insertEvent(trx, SyncEventType.NEW, null, senderId, receiverId, now);
    await insertMessage(trx, { msg_id: msgId, sender_id: senderId, receiver_id: receiverId, text, ts_created: now, send_id: sendId });
    await touchDialogs(trx, senderId, receiverId, msgId);
    const message: PrivateMessage = { msg_id: msgId, is_read: 0, text, ts_created: now, type: MessageType.TEXT, user_id: senderId };
    await announce({ eventId: msgId, type: SyncEventType.NEW, msgId, parties: [senderId, receiverId], message });
    return { msgId, created: true };
  });
}

/**
 * Marks the partner's unread messages to the user read, when there are any: one transaction
 * under both locks, its event told to both parties once committed. Answers whether anything was marked.
 */
export async function readConversation(services: Services, userId: number, partnerId: number): Promise<boolean> {
  if ((await newCounter(services.db.kysely, userId, partnerId)) === 0) return false;
  const now = nowSeconds(services);
  return inAnnouncedTransaction(services, async (trx, announce) => {
    await lockParties(trx, services.db.dialect, [userId, partnerId]);
    const newest = await markRead(trx, userId, partnerId);
    if (newest === undefined) return false;
    const eventId = await insertEvent(trx, SyncEventType.READ, newest, userId, partnerId, now);
    await announce({ eventId, type: SyncEventType.READ, msgId: newest, parties: [userId, partnerId] });
    return true;
  });
}

export const NO_SUCH_MESSAGE = (msgId: number) => new ApiError(Code.BAD_PARAM, `parameter msg_id: no message ${msgId}`);

/**
 * Deletes a message for both parties: `allowed` sees it under the parties' locks and refuses
 * what the caller may not delete. An unread message stops counting; both parties are told once
 * `inTransaction` (by default one of its own) has committed.
 */
export async function deleteMessage(
  services: Services,
  msgId: number,
  allowed: (message: MessageRow) => void,
  inTransaction?: InTransaction,
): Promise<MessageRow> {
  const found = await selectMessage(services.db.kysely, msgId);
  if (!found || found.deleted_at !== null) throw NO_SUCH_MESSAGE(msgId);
  const now = nowSeconds(services);
  return inAnnouncedTransaction(
    services,
    async (trx, announce) => {
      await lockParties(trx, services.db.dialect, [found.sender_id, found.receiver_id]);
      const message = await selectMessage(trx, msgId);
      if (!message || message.deleted_at !== null) throw NO_SUCH_MESSAGE(msgId);
      allowed(message);
      await hideMessage(trx, message, now);
      await refreshLastMessage(trx, message.sender_id, message.receiver_id);
      const eventId = await insertEvent(trx, SyncEventType.DELETED, msgId, message.sender_id, message.receiver_id, now);
      await announce({ eventId, type: SyncEventType.DELETED, msgId, parties: [message.sender_id, message.receiver_id] });
      return message;
    },
    inTransaction,
  );
}
