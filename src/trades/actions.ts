import { ApiError, Code, badParam, rateLimited } from '../api/errors.js';
import { getCatalog, type Catalog } from '../catalog/index.js';
import { dialectAdapter } from '../db/dialect.js';
import type { Executor } from '../db/connection.js';
import { Friendship } from '../friends/index.js';
import { announceInventoriesChanged, inventoryShownTo } from '../inventory/index.js';
import { nowSeconds, type Services } from '../services.js';
import { admissionFrom, relationForTrade, requireAdmitted, type Admission } from './admission.js';
import { announceClosed, announceInvalidated, announceOffered } from './announce.js';
import { checkOwnSide, checkPartnerSide } from './items.js';
import { settleAsCaller, settleTrade, type Settlement, type TradeParties } from './settle.js';
import {
  createInOneStatement,
  insertTrade,
  markEnded,
  readForCreation,
  tradeById,
  tradeStatus,
  tradeWithEntries,
  type CreationReads,
  type TradeRecord,
} from './queries.js';
import { Side, TradeStatus, expiryCutoff } from './status.js';

export const MAX_SIDE_ITEMS = 50;

export const noSuchTrade = () => new ApiError(Code.NO_SUCH_TRADE, 'parameter trade_id: no such trade of yours');
export const tradeClosed = () => new ApiError(Code.TRADE_CLOSED, 'the trade is no longer open');
const tradeInvalid = () => new ApiError(Code.CRAFT_ITEM_UNUSABLE, 'an item of the trade is no longer available: the trade is invalid');

/** A trade the caller takes part in; 801 when there is none (or it is someone else's). */
export async function tradeOfParty(services: Services, tradeId: number, userId: number): Promise<TradeRecord> {
  const row = await tradeById(services.db.kysely, tradeId);
  if (!row || (row.user_id_from !== userId && row.user_id_to !== userId)) throw noSuchTrade();
  return row;
}

/** The answer for a trade a transition found no longer open: 603 when an item made it invalid, else 802. */
async function closedError(services: Services, tradeId: number): Promise<ApiError> {
  const status = await tradeStatus(services.db.kysely, tradeId);
  return status === TradeStatus.INVALID ? tradeInvalid() : tradeClosed();
}

export interface NewTrade {
  fromId: number;
  toId: number;
  /** Offered by the sender. */
  thingsFrom: number[];
  /** Asked of the receiver. */
  thingsTo: number[];
  /** The parameters the sides came in, as errors name them (by default thing_ids_from and thing_ids_to). */
  names?: { from: string; to: string };
}

const SIDE_NAMES = { from: 'thing_ids_from', to: 'thing_ids_to' };

function checkSides(trade: NewTrade): void {
  const { thingsFrom, thingsTo, names = SIDE_NAMES } = trade;
  if (thingsFrom.length === 0 && thingsTo.length === 0) throw badParam(names.from, 'a trade needs at least one item on one side');
  if (new Set(thingsFrom).size !== thingsFrom.length) throw badParam(names.from, 'lists an item twice');
  if (new Set(thingsTo).size !== thingsTo.length) throw badParam(names.to, 'lists an item twice');
  if (thingsFrom.some((id) => thingsTo.includes(id))) throw badParam(names.to, 'lists an item that is also offered');
}

/** Every item of a new trade, with its side and the user it must belong to. */
function itemSides({
  fromId,
  toId,
  thingsFrom,
  thingsTo,
}: NewTrade): { item_id: number; side: (typeof Side)[keyof typeof Side]; owner: number }[] {
  return [
    ...thingsFrom.map((item_id) => ({ item_id, side: Side.FROM, owner: fromId })),
    ...thingsTo.map((item_id) => ({ item_id, side: Side.TO, owner: toId })),
  ];
}

/** The window of a sender's creations a minute, in seconds. */
const CREATION_WINDOW = 60;

/**
 * Whether a new trade may be made, from what was read for it: the receiver's settings must
 * admit it (701, 101), and their inventory privacy must show their inventory to the sender when
 * it asks for their items (701); the sender must be under their creations a minute (the trades
 * they made in the last CREATION_WINDOW seconds) and their open trades (7); and every item must
 * be its side's, owned, tradable and not equipped, and none asked for of the stock class (603).
 * Answers what the receiver's settings admit.
 */
function admitCreation(
  services: Services,
  trade: NewTrade,
  reads: CreationReads,
  context: { relation: number; catalog: Catalog; now: number; cutoff: number },
): Admission {
  const { fromId, toId, thingsFrom, thingsTo, names = SIDE_NAMES } = trade;
  const { relation, catalog, now, cutoff } = context;
  const limits = services.config.trades;
  // Read again under the parties' locks: a block or a ban that came first refuses the offer (one after it ends it).
  if (reads.banned.sender) throw new ApiError(Code.GLOBAL_BAN, 'your account is globally blocked');
  if (reads.banned.receiver) throw new ApiError(Code.USER_NOT_FOUND, 'parameter user_id: user does not exist');
  if (reads.blocked) throw new ApiError(Code.BLOCKED_BY_USER, 'one of you has blocked the other');
  const admission = admissionFrom(relation, reads.privacy);
  requireAdmitted(admission, thingsTo.length === 0);
  if (thingsTo.length > 0 && !inventoryShownTo(reads.inventoryPrivacy, relation === Friendship.FRIENDS))
    throw new ApiError(Code.PRIVACY, 'the privacy settings of the user hide their inventory from you: you can only offer them gifts');
  const { recent, open, items } = reads;
  if (recent.n >= limits.createsPerMinute) throw rateLimited(Math.max(1, Number(recent.oldest) + CREATION_WINDOW - now));
  if (open.n >= limits.maxOpenOutgoing) throw rateLimited(Math.max(1, Number(open.oldest) - cutoff));
  const byId = new Map(items.map((item) => [item.item_id, item]));
  const check = { catalog, byId, now };
  checkOwnSide(check, { ids: thingsFrom, ownerId: fromId, name: names.from });
  checkPartnerSide(check, { ids: thingsTo, ownerId: toId, name: names.to });
  return admission;
}

/**
 * Offers a trade: the sender's items for the receiver's, checked by admitCreation. A gift
 * (nothing asked) to a receiver who accepts gifts at once completes in the same transaction.
 * Answers the new trade's id and whether it completed.
 */
export async function createTrade(services: Services, trade: NewTrade): Promise<{ tradeId: number; completed: boolean }> {
  checkSides(trade);
  const { fromId, toId, thingsTo } = trade;
  if (fromId === toId) throw badParam('user_id', 'you cannot trade with yourself');
  const gift = thingsTo.length === 0;
  const relation = await relationForTrade(services, fromId, toId);
  const sides = itemSides(trade);
  const now = nowSeconds(services);
  const cutoff = expiryCutoff(services, now);
  const since = now - CREATION_WINDOW;
  const postgres = services.db.dialect === 'postgres';
  if (postgres) {
    // One call that records the offer when nothing refuses it; else the transaction below answers why.
    const limits = services.config.trades;
    const tradeId = await createInOneStatement(
      services.db.kysely,
      { fromId, toId, items: sides },
      { now, cutoff, maxOpen: limits.maxOpenOutgoing, since, maxRecent: limits.createsPerMinute, friend: relation === Friendship.FRIENDS },
    );
    if (tradeId !== undefined) {
      await announceOffered(services, { trade_id: tradeId, user_id_from: fromId, user_id_to: toId }, false);
      return { tradeId, completed: false };
    }
  }
  const catalog = await getCatalog(services);
  const outcome = await services.db.kysely.transaction().execute(async (trx) => {
    // The sender's row serialises their creations: the limits of open trades and of creations a
    // minute hold under concurrency. With the receiver's, it orders the offer with a block or a
    // ban of either.
    await dialectAdapter.lockUsers(trx, services.db.dialect, [fromId, toId]);
    // The items stay where they are until this trade is committed: whoever moves one meanwhile
    // waits, and then finds this trade to invalidate. A gift accepted at once moves them here, and
    // whether it is accepted at once is in the receiver's settings, read with them: a gift takes
    // them for update from the start.
    const itemIds = sides.map((item) => item.item_id);
    const reads = await readForCreation(trx, { fromId, toId, itemIds, cutoff, since }, { lock: gift ? 'update' : 'share', postgres });
    const admission = admitCreation(services, trade, reads, { relation, catalog, now, cutoff });
    const byId = new Map(reads.items.map((item) => [item.item_id, item]));
    const tradeId = await insertTrade(
      trx,
      services.db.dialect,
      { user_id_from: fromId, user_id_to: toId, status: TradeStatus.OPEN, create_time: now, reaction_time: null },
      sides.map(({ item_id, side }) => {
        const item = byId.get(item_id)!;
        return {
          item_id,
          side,
          user_id: item.user_id,
          item_proto_id: item.item_proto_id,
          ts_owned: item.ts_owned,
          ts_can_trade: item.ts_can_trade,
          data: item.data,
        };
      }),
    );
    const parties = { trade_id: tradeId, user_id_from: fromId, user_id_to: toId };
    const settled = gift && admission.autoaccept ? await settleTrade(services, trx, catalog, parties) : undefined;
    return { tradeId, settled };
  });
  const { settled } = outcome;
  const offered = { trade_id: outcome.tradeId, user_id_from: fromId, user_id_to: toId };
  if (settled?.kind !== 'accepted') {
    await announceOffered(services, offered, false);
    return { tradeId: outcome.tradeId, completed: false };
  }
  await announceMoved(services, offered, () => announceOffered(services, offered, true), settled.invalidated);
  return { tradeId: outcome.tradeId, completed: true };
}

/**
 * What a trade whose items moved announces: the parties' inventories changed, then `tell` (the
 * events of the trade itself), then the trades it made invalid. Sent together, without waiting
 * for one before the next: a message published reaches every process before those published
 * after it (see Bus), so no process hears of the trade before it forgets the inventories as
 * they were.
 */
function announceMoved(
  services: Services,
  trade: TradeParties,
  tell: () => Promise<void>,
  invalidated: readonly TradeParties[],
): Promise<unknown> {
  return Promise.all([
    announceInventoriesChanged(services, [trade.user_id_from, trade.user_id_to]),
    tell(),
    announceInvalidated(services, invalidated),
  ]);
}

const senderCannotAccept = () => new ApiError(Code.FORBIDDEN, 'only the receiver may accept a trade');

/**
 * The receiver accepts: see settleTrade (on PostgreSQL settleAsCaller, which reads the trade
 * itself). 801 when there is no such trade of the caller's, 4 for its sender, 802 when no longer
 * open, 603 when an item is no longer available.
 */
export async function acceptTrade(services: Services, userId: number, tradeId: number): Promise<void> {
  let trade: TradeParties;
  let settled: Settlement;
  if (services.db.dialect === 'postgres') {
    const outcome = await settleAsCaller(services, services.db.kysely, tradeId, userId);
    if (outcome.kind === 'none') throw noSuchTrade();
    if (outcome.kind === 'forbidden') throw senderCannotAccept();
    ({ trade } = outcome);
    settled = outcome;
  } else {
    const found = await tradeWithEntries(services.db.kysely, tradeId);
    if (!found || (found.trade.user_id_from !== userId && found.trade.user_id_to !== userId)) throw noSuchTrade();
    if (found.trade.user_id_to !== userId) throw senderCannotAccept();
    const catalog = await getCatalog(services);
    trade = found.trade;
    settled = await services.db.kysely.transaction().execute((trx) => settleTrade(services, trx, catalog, found.trade, found.entries));
  }
  if (settled.kind === 'closed') throw await closedError(services, tradeId);
  if (settled.kind === 'invalid') {
    await announceInvalidated(services, [trade]);
    throw tradeInvalid();
  }
  await announceMoved(services, trade, () => announceClosed(services, [trade], TradeStatus.ACCEPTED), settled.invalidated);
}

/**
 * Ends an open trade without moving anything: the receiver declines (2), the sender
 * revokes (3). A conditional update: of concurrent transitions exactly one happens.
 */
export async function closeTrade(services: Services, userId: number, tradeId: number, as: 'receiver' | 'sender' | 'either'): Promise<void> {
  const trade = await tradeOfParty(services, tradeId, userId);
  const sender = trade.user_id_from === userId;
  if (as === 'receiver' && sender) throw new ApiError(Code.FORBIDDEN, 'only the receiver may decline a trade; the sender revokes it');
  if (as === 'sender' && !sender) throw new ApiError(Code.FORBIDDEN, 'only the sender may revoke a trade; the receiver declines it');
  const status = sender ? TradeStatus.REVOKED : TradeStatus.DECLINED;
  if (!(await endOpenTrade(services, tradeId, status))) throw await closedError(services, tradeId);
  await announceClosed(services, [trade], status);
}

/**
 * Ends a trade that is still open with `status`, nothing moving: a conditional update, so of
 * concurrent transitions exactly one happens. False when it was no longer open. `executor`:
 * the caller's transaction, when the change must commit with the caller's other writes.
 */
export async function endOpenTrade(
  services: Services,
  tradeId: number,
  status: typeof TradeStatus.DECLINED | typeof TradeStatus.REVOKED,
  executor: Executor = services.db.kysely,
): Promise<boolean> {
  const now = nowSeconds(services);
  return markEnded(executor, tradeId, status, now, expiryCutoff(services, now));
}
