import { ApiError, Code } from '../api/errors.js';
import { nowSeconds, type Services } from '../services.js';
import { getCatalog } from '../catalog/index.js';
import { announceInventoriesChanged } from '../inventory/index.js';
import { heldByOpenTrade } from '../trades/index.js';
import { announceBalances, transfer } from './ledger.js';
import { toUnits } from './money.js';
import {
  PlatformAccount,
  deleteListing,
  insertListing,
  insertSale,
  isFrozen,
  markListed,
  markUnlisted,
  moveListedItem,
  readListableItem,
  readListing,
  repriceListing,
  selectExpiredListings,
  takeListingForBuyer,
  type Listing,
} from './queries.js';

const ITEM_UNUSABLE = (why: string) => new ApiError(Code.CRAFT_ITEM_UNUSABLE, `the item ${why}`);
const notListed = () =>
  new ApiError(Code.MARKET_NOT_LISTED, 'the item is not on sale: it was sold, taken off the market, expired or never listed');

async function refuseFrozen(services: Services, userId: number): Promise<void> {
  if (await isFrozen(services.db.kysely, userId))
    throw new ApiError(Code.MARKET_FROZEN, 'an administrator has frozen your use of the market');
}

/** Realtime event to a seller whose item sold: `{thing_id, thing_prototype_id, price}` (price in units, before the fee). */
export const SOLD_EVENT = 'market.sold';

export interface SellResult {
  listing_id: number;
  /** Whether an existing listing only changed its price. */
  repriced: boolean;
}

/**
 * market.sell: lists the caller's item at `price` kopecks, or changes the price of its listing.
 * The item must be the caller's, owned, of a tradable prototype, tradable now, not equipped and
 * held by no open trade (603 otherwise); listing it puts it in state `listed` in one
 * conditional update, so trades, crafts and openings refuse it from then on with their own codes.
 */
export async function sell(services: Services, sellerId: number, itemId: number, price: number): Promise<SellResult> {
  await refuseFrozen(services, sellerId);
  const catalog = await getCatalog(services);
  const now = nowSeconds(services);
  const { market } = services.config;
  const result = await services.db.kysely.transaction().execute(async (trx) => {
    const repriced = await repriceListing(trx, itemId, sellerId, price, now);
    if (repriced) return { listing_id: Number(repriced.listing_id), repriced: true };
    const item = await readListableItem(trx, itemId);
    if (!item || Number(item.user_id) !== sellerId || item.state !== 'owned') throw ITEM_UNUSABLE('is not in your inventory');
    const proto = catalog.protos.get(item.item_proto_id);
    if (!proto || proto.item.item_proto_status === 1 || item.ts_can_trade === -1) throw ITEM_UNUSABLE('can never be traded');
    if (item.ts_can_trade > now) throw ITEM_UNUSABLE('cannot be traded or sold yet');
    if (item.equipped) throw ITEM_UNUSABLE('is equipped');
    if (!(await markListed(trx, itemId, sellerId, now))) throw ITEM_UNUSABLE('is not in your inventory');
    // Only once the item is listed (its row locked, as every writer locks items before trades):
    // an offer of it made meanwhile has committed and is seen now, or waits and finds it listed.
    if (await heldByOpenTrade(services, trx, [itemId], now)) throw ITEM_UNUSABLE('is in an open trade');
    const listingId = await insertListing(trx, {
      item_id: itemId,
      seller_id: sellerId,
      item_proto_id: item.item_proto_id,
      type: item.type,
      quality_id: item.quality_id,
      price,
      ts_listed: now,
      ts_expires: now + market.ttl,
    });
    return { listing_id: listingId, repriced: false };
  });
  if (!result.repriced) await announceInventoriesChanged(services, [sellerId]);
  services.metrics.count('market', result.repriced ? 'repriced' : 'listed');
  return result;
}

/** Ends listings and gives their items back to their sellers, in the caller's transaction. */
async function returnItems(trx: Parameters<typeof markUnlisted>[0], listings: Listing[]): Promise<void> {
  for (const listing of listings) {
    if (!(await markUnlisted(trx, listing.item_id, listing.seller_id)))
      throw new Error(`listed item ${listing.item_id} was not in state listed`);
  }
}

/** market.cancel: takes the caller's item off the market and back into their inventory (2101 when it is not on sale). */
export async function cancel(services: Services, sellerId: number, itemId: number): Promise<void> {
  await services.db.kysely.transaction().execute(async (trx) => {
    const listing = await deleteListing(trx, itemId, sellerId);
    if (!listing) throw notListed();
    await returnItems(trx, [listing]);
  });
  await announceInventoriesChanged(services, [sellerId]);
  services.metrics.count('market', 'cancelled');
}

/** Ends any listing of an item (administration), in the caller's transaction; the listing ended, or undefined. */
export async function cancelListingIn(trx: Parameters<typeof markUnlisted>[0], itemId: number): Promise<Listing | undefined> {
  const listing = await deleteListing(trx, itemId);
  if (listing) await returnItems(trx, [listing]);
  return listing;
}

export interface BuyResult {
  balance: number;
  listing: Listing;
}

/**
 * market.buy: buys a listed item at `price` kopecks, the listing's price. One transaction takes
 * the listing by a conditional delete (price, expiry and seller checked in it), debits the
 * buyer (2103 when the balance does not cover it), credits the seller less the fee, records
 * the transfer and the sale and moves the item, owned and locked for `--market-hold`. Two
 * buyers, a buyer and a cancel or a price change: one delete wins, the others find nothing.
 */
export async function buy(services: Services, buyerId: number, itemId: number, price: number): Promise<BuyResult> {
  await refuseFrozen(services, buyerId);
  const now = nowSeconds(services);
  const { market } = services.config;
  const outcome = await services.db.kysely.transaction().execute(async (trx) => {
    const listing = await takeListingForBuyer(trx, itemId, price, buyerId, now);
    if (!listing) {
      const current = await readListing(trx, itemId);
      if (!current || current.ts_expires <= now) throw notListed();
      if (Number(current.seller_id) === buyerId) throw new ApiError(Code.MARKET_OWN_LISTING, 'you cannot buy your own listing');
      throw new ApiError(Code.MARKET_PRICE_CHANGED, 'the price of the listing is not the one sent', {
        price: toUnits(Number(current.price)),
      });
    }
    const sellerId = Number(listing.seller_id);
    const fee = Math.floor((price * market.feePercent) / 100);
    const balances = await transfer(
      trx,
      { ts: now, kind: 'market_purchase', item_id: itemId, item_proto_id: listing.item_proto_id, listing_id: Number(listing.listing_id) },
      [
        { account: buyerId, amount: -price, kind: 'market_purchase' },
        { account: sellerId, amount: price - fee, kind: 'market_sale' },
        { account: PlatformAccount.FEES, amount: fee, kind: 'fee' },
      ],
    );
    if (!(await moveListedItem(trx, itemId, sellerId, buyerId, now, now + market.hold)))
      throw new Error(`listed item ${itemId} was not in state listed`);
    await insertSale(trx, {
      listing_id: Number(listing.listing_id),
      item_id: itemId,
      item_proto_id: listing.item_proto_id,
      seller_id: sellerId,
      buyer_id: buyerId,
      price,
      fee,
      ts: now,
    });
    return { balances, listing };
  });
  const sellerId = Number(outcome.listing.seller_id);
  services.metrics.count('market', 'sold');
  await announceInventoriesChanged(services, [buyerId, sellerId]);
  await announceBalances(services, outcome.balances);
  const fields = { thing_id: itemId, thing_prototype_id: outcome.listing.item_proto_id, price: toUnits(price) };
  await services.realtime.pushToUser(sellerId, { type: SOLD_EVENT, fields, json: fields }).catch((error: unknown) => {
    services.log.error({ err: error }, 'could not announce a sale on the realtime feed');
  });
  return { balance: outcome.balances.get(buyerId)!, listing: outcome.listing };
}

/** Listings returned per transaction by the expiry sweep. */
const SWEEP_BATCH = 500;

/** Ends listings past their time and gives their items back; how many. Answers never show them once expired. */
export async function sweepExpiredListings(services: Services): Promise<number> {
  let total = 0;
  for (;;) {
    const now = nowSeconds(services);
    const ended = await services.db.kysely.transaction().execute(async (trx) => {
      const expired = await selectExpiredListings(trx, now, SWEEP_BATCH);
      const done: Listing[] = [];
      for (const listing of expired) {
        // A buyer or a cancel may have taken it since it was read; the time of a listing never changes.
        const taken = await deleteListing(trx, listing.item_id);
        if (taken) done.push(taken);
      }
      await returnItems(trx, done);
      return { seen: expired.length, done };
    });
    if (ended.done.length > 0) await announceInventoriesChanged(services, [...new Set(ended.done.map((l) => Number(l.seller_id)))]);
    services.metrics.count('market', 'expired', ended.done.length);
    total += ended.done.length;
    if (ended.seen < SWEEP_BATCH) return total;
  }
}
