import { createHash, randomInt } from 'node:crypto';
import { ApiError, Code, badParam } from '../api/errors.js';
import type { DialectName, Executor } from '../db/connection.js';
import { nowSeconds, type Services } from '../services.js';
import {
  CASE_TYPE,
  type Catalog,
  type DropWeight,
  getCatalog,
  GIFT_SET_TYPE,
  ownedItemJson,
  type OwnedRow,
  type ProtoEntry,
} from '../catalog/index.js';
import { postSystemMessage, type SystemMessageFields } from '../chat/index.js';
import { announceInventoriesChanged } from './answer-cache.js';
import type { InvalidatedTrade } from './hooks.js';
import type { DomainEvents } from '../operations/metrics.js';
import { requireUser } from '../users/index.js';
import {
  consumeOwnedItems,
  insertReceivedItems,
  isFriend,
  readDrawAnswer,
  readOpeningInputs,
  recordDraw,
  unequipItems,
  type OpeningInput,
} from './queries.js';

export interface OpenRequest {
  userId: number;
  itemId: number;
  keyItemId?: number;
  /** A gift set opened for a friend: the friend receives its items. */
  receiverId?: number;
  /** The caller's idempotency key: a second request with it answers the first result. */
  requestId?: string;
}

export interface Opened {
  /** JSON text of the received items, `[Item, ...]` in the add_legacy = 0 form. */
  itemsJson: string;
}

const unusable = (description: string) => new ApiError(Code.CRAFT_ITEM_UNUSABLE, description);
const notYours = (description = 'the item is not in your inventory') => unusable(description);
const wrongKey = () => notYours('the key is not in your inventory or does not open this case');

/**
 * The trade lock of what an opening gives: the strictest of the items it consumes (one never
 * tradable makes it never tradable), none once every lock has ended. Opening a locked case
 * cannot make its value tradable sooner.
 */
function carriedLock(inputs: readonly OpeningInput[], now: number): number {
  if (inputs.some((input) => input.ts_can_trade === -1)) return -1;
  const until = Math.max(0, ...inputs.map((input) => input.ts_can_trade));
  return until > now ? until : 0;
}

/**
 * One entry of a case's published drop list, drawn with `crypto` randomness in proportion to
 * the integer weights: an entry of weight w among weights summing to W is drawn with
 * probability exactly w / W (randomInt draws uniformly, without modulo bias).
 */
export function drawEntry(drops: readonly DropWeight[]): DropWeight {
  const total = drops.reduce((sum, d) => sum + d.weight, 0);
  let ticket = randomInt(total);
  for (const entry of drops) {
    if (ticket < entry.weight) return entry;
    ticket -= entry.weight;
  }
  throw new Error('a draw fell outside its weights');
}

/** The version of a list of odds: the first 16 hex digits of the SHA-256 of its JSON text. */
export const oddsVersion = (oddsJson: string) => createHash('sha256').update(oddsJson).digest('hex').slice(0, 16);

/** What an opening consumes and gives, once the items are checked. */
interface Plan {
  container: ProtoEntry;
  key?: OpeningInput;
  received: ProtoEntry[];
  /** The received items' trade lock (carriedLock). */
  tsCanTrade: number;
  odds: DropWeight[];
}

/**
 * Checks the item and key and decides what is received: 603 when an item is not the caller's
 * owned item or the key is not the case's, or a gift set for someone else is trade-locked; 624
 * when the item is neither a case nor a gift set (or has nothing inside); 2 when a case needs a
 * key and none was sent.
 */
function plan(catalog: Catalog, request: OpenRequest, rows: OpeningInput[], now: number): Plan {
  const owned = (id: number | undefined) => rows.find((r) => r.item_id === id && r.user_id === request.userId && r.state === 'owned');
  const item = owned(request.itemId);
  if (!item) throw notYours();
  const container = catalog.protos.get(item.item_proto_id);
  const drops = container?.drops ?? [];
  const contents = drops.map((d) => catalog.protos.get(d.item_proto_id));
  if (!container || (container.type !== CASE_TYPE && container.type !== GIFT_SET_TYPE) || drops.length === 0 || contents.some((p) => !p))
    throw new ApiError(Code.ITEM_NOT_APPLICABLE, 'the item cannot be opened');
  const isCase = container.type === CASE_TYPE;
  if (request.receiverId !== undefined && isCase) throw badParam('user_id_receiver', 'only a gift set may be opened for someone else');
  let key: OpeningInput | undefined;
  if (isCase && container.keyItemProtoId !== null) {
    if (request.keyItemId === undefined) throw badParam('key_item_id', 'this case opens with a key');
    key = owned(request.keyItemId);
    if (!key || key.item_id === item.item_id || key.item_proto_id !== container.keyItemProtoId) throw wrongKey();
  } else if (request.keyItemId !== undefined) {
    throw badParam('key_item_id', 'this item opens without a key');
  }
  const tsCanTrade = carriedLock(key ? [item, key] : [item], now);
  if (!isCase) {
    // Given to someone else, a gift set's items change hands as a trade's would.
    if (request.receiverId !== undefined && tsCanTrade !== 0)
      throw unusable('the gift set is trade-locked: it may be opened only for yourself until its lock ends');
    return { container, received: contents as ProtoEntry[], tsCanTrade, odds: [...drops] };
  }
  const drawn = drawEntry(drops);
  return { container, key, received: [catalog.protos.get(drawn.item_proto_id)!], tsCanTrade, odds: [...drops] };
}

/**
 * A gift set opened for `receiverId`: 2 unless they are the caller's friend, read under a lock
 * that keeps the friendship until the opening commits; 701 when their settings refuse gifts.
 */
async function requireGiftReceiver(
  services: Services,
  trx: Executor,
  dialect: DialectName,
  userId: number,
  receiverId: number,
): Promise<void> {
  if (!(await isFriend(trx, userId, receiverId, dialect))) throw badParam('user_id_receiver', 'a gift set may be opened only for a friend');
  await services.hooks.inventory.requireGiftAdmitted(trx, receiverId);
}

/** A retry's stored answer: the first opening with this caller and request id. */
async function storedAnswer(k: Executor, userId: number, requestId: string): Promise<Opened | undefined> {
  const answer = await readDrawAnswer(k, userId, requestId);
  return answer === undefined ? undefined : { itemsJson: answer };
}

/** Who received what, for the chat once the opening is committed. */
interface Announcement {
  message: SystemMessageFields;
  quality: number;
}

/**
 * Opens a case (with its key) or a gift set, exactly once: in one transaction the case and
 * key are consumed by a conditional update that must change every one of their rows (so of
 * concurrent opens of one case one wins and the others answer 603), the items are received,
 * and the draw is recorded with the odds it used. The chat hears of it after the commit.
 */
export async function openItem(services: Services, request: OpenRequest): Promise<Opened> {
  const k = services.db.kysely;
  const { userId, requestId } = request;
  if (requestId !== undefined) {
    const stored = await storedAnswer(k, userId, requestId);
    if (stored) return stored;
  }
  const receiverId = request.receiverId === userId ? undefined : request.receiverId;
  // A globally blocked account takes no part in the social graph, as with trades.
  if (receiverId !== undefined) await requireUser(services, receiverId, { parameter: 'user_id_receiver', active: true });
  const catalog = await getCatalog(services);
  const now = nowSeconds(services);
  const ids = [
    request.itemId,
    ...(request.keyItemId !== undefined && request.keyItemId !== request.itemId ? [request.keyItemId] : []),
  ].sort((a, b) => a - b);
  const dialect = services.db.dialect;
  const owner = receiverId ?? userId;

  let announcement: Announcement | undefined;
  let opened: Opened & { kind: DomainEvents['opening']; invalidated: InvalidatedTrade[] };
  try {
    opened = await k.transaction().execute(async (trx) => {
      if (receiverId !== undefined) await requireGiftReceiver(services, trx, dialect, userId, receiverId);
      const chosen = plan(catalog, { ...request, receiverId }, await readOpeningInputs(trx, dialect, ids), now);
      const consumed = [request.itemId, ...(chosen.key ? [chosen.key.item_id] : [])];
      const kind = chosen.container.type === CASE_TYPE ? 'case' : 'gift';
      const updated = await consumeOwnedItems(trx, dialect, userId, consumed, now);
      // Another opening took the case or key first: roll everything back.
      if (updated !== BigInt(consumed.length)) throw notYours('the item is no longer in your inventory');
      const invalidated = await services.hooks.inventory.endTradesHolding(services, trx, consumed);
      await unequipItems(trx, consumed);

      const received = chosen.received.map((proto) => ({ item_proto_id: proto.id, type: proto.type, quality_id: proto.qualityId }));
      // A gift set opened for a friend marks its items as a trade's gift does.
      const gift = receiverId === undefined ? null : JSON.stringify({ gift: { from_user_id: userId, to_user_id: receiverId, ts: now } });
      // Received from someone else, the items are held as a trade's would be (--trade-hold).
      const hold = services.config.trades.hold;
      const tsCanTrade = receiverId !== undefined && hold > 0 ? now + hold : chosen.tsCanTrade;
      const rows: OwnedRow[] = await insertReceivedItems(trx, owner, received, { now, tsCanTrade, data: gift });
      rows.sort((a, b) => a.item_id - b.item_id);
      const protoOf = new Map(chosen.received.map((p) => [p.id, p]));
      const itemsJson = `[${rows.map((row) => ownedItemJson(protoOf.get(row.item_proto_id)!, row, false)).join(',')}]`;
      const odds = JSON.stringify(chosen.odds);
      await recordDraw(trx, {
        ts: now,
        user_id: userId,
        receiver_user_id: owner,
        kind,
        case_item_id: request.itemId,
        case_item_proto_id: chosen.container.id,
        key_item_id: chosen.key?.item_id ?? null,
        key_item_proto_id: chosen.key?.item_proto_id ?? null,
        result_item_ids: JSON.stringify(rows.map((r) => r.item_id)),
        result_item_proto_ids: JSON.stringify(rows.map((r) => r.item_proto_id)),
        odds_version: oddsVersion(odds),
        odds,
        request_id: requestId ?? null,
        answer: itemsJson,
      });
      announcement = announcementOf(userId, receiverId, chosen);
      return { itemsJson, kind, invalidated };
    });
  } catch (error) {
    // A concurrent request with the same request id may have won: answer its result.
    if (requestId !== undefined) {
      const stored = await storedAnswer(k, userId, requestId);
      if (stored) return stored;
    }
    throw error;
  }
  services.metrics.count('opening', opened.kind);
  await announceInventoriesChanged(services, receiverId === undefined ? [userId] : [userId, receiverId]);
  await services.hooks.inventory.announceEndedTrades(services, opened.invalidated);
  if (announcement && announcement.quality >= services.config.announceDropsFromClass) {
    // The opening stands whatever happens to its announcement.
    await postSystemMessage(services, announcement.message).catch((error: unknown) =>
      services.log.error({ err: error }, 'could not announce an opening in the chat'),
    );
  }
  return { itemsJson: opened.itemsJson };
}

/**
 * A case's drop, or the best item of a gift set opened for oneself: message 2; a gift set
 * opened for a friend: message 3. Announced from the class of the best item received.
 */
function announcementOf(userId: number, receiverId: number | undefined, chosen: Plan): Announcement {
  const best = chosen.received.reduce((top, proto) => (proto.qualityId > top.qualityId ? proto : top));
  const message: SystemMessageFields =
    receiverId === undefined
      ? { type: 2, user_id: userId, case_item_proto_id: chosen.container.id, drop_item_proto_id: best.id }
      : { type: 3, user_id: userId, user_id_receiver: receiverId, item_proto_id: chosen.container.id };
  return { message, quality: best.qualityId };
}
