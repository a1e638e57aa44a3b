import { sql } from 'kysely';
import type { Executor } from '../db/connection.js';
import type { MarketListingsTable } from '../db/tables.js';
import type { Selectable } from 'kysely';

/** The platform's own accounts in the ledger (users' accounts are their user ids). */
export const PlatformAccount = {
  /** What the market's fees have earned. */
  FEES: -1,
  /** Where money enters and leaves the economy: the shop, quick sales, grants, promo codes. */
  ISSUE: -2,
} as const;

export type Listing = Selectable<MarketListingsTable>;

// ---- balances and the ledger ----

export async function readBalance(db: Executor, userId: number): Promise<number> {
  const row = await db.selectFrom('balances').select('balance').where('user_id', '=', userId).executeTakeFirst();
  return row ? Number(row.balance) : 0;
}

/** Adds `amount` (kopecks, positive) to a user's balance; answers the new balance. */
export async function creditBalance(trx: Executor, userId: number, amount: number): Promise<number> {
  const row = await trx
    .insertInto('balances')
    .values({ user_id: userId, balance: amount })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ balance: sql`balances.balance + ${amount}` }))
    .returning('balance')
    .executeTakeFirstOrThrow();
  return Number(row.balance);
}

/** Takes `amount` (kopecks, positive) from a user's balance if it covers it; the new balance, or undefined when it does not. */
export async function debitBalance(trx: Executor, userId: number, amount: number): Promise<number | undefined> {
  const row = await trx
    .updateTable('balances')
    .set({ balance: sql`balance - ${amount}` })
    .where('user_id', '=', userId)
    .where('balance', '>=', amount)
    .returning('balance')
    .executeTakeFirst();
  return row ? Number(row.balance) : undefined;
}

export interface TransferRecord {
  ts: number;
  kind: string;
  item_id?: number | null;
  item_proto_id?: number | null;
  listing_id?: number | null;
  reason?: string | null;
}

export interface EntryRecord {
  account_id: number;
  kind: string;
  amount: number;
  balance_after: number | null;
}

/** Records a transfer and its entries (which sum to zero); answers the transfer's id. */
export async function insertTransfer(trx: Executor, transfer: TransferRecord, entries: EntryRecord[]): Promise<number> {
  const { transfer_id } = await trx
    .insertInto('ledger_transfers')
    .values({
      ts: transfer.ts,
      kind: transfer.kind,
      item_id: transfer.item_id ?? null,
      item_proto_id: transfer.item_proto_id ?? null,
      listing_id: transfer.listing_id ?? null,
      reason: transfer.reason ?? null,
    })
    .returning('transfer_id')
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('ledger_entries')
    .values(entries.map((entry) => ({ ...entry, transfer_id: Number(transfer_id) })))
    .execute();
  return Number(transfer_id);
}

export interface HistoryRow {
  entry_id: number;
  ts: number;
  kind: string;
  amount: number;
  balance_after: number | null;
  item_id: number | null;
  item_proto_id: number | null;
  listing_id: number | null;
}

/** A page of an account's entries, newest first, optionally of one kind. */
export async function selectHistory(db: Executor, accountId: number, offset: number, count: number, kind?: string): Promise<HistoryRow[]> {
  let query = db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_transfers as t', 't.transfer_id', 'e.transfer_id')
    .select(['e.entry_id', 't.ts', 'e.kind', 'e.amount', 'e.balance_after', 't.item_id', 't.item_proto_id', 't.listing_id'])
    .where('e.account_id', '=', accountId);
  if (kind !== undefined) query = query.where('e.kind', '=', kind);
  return query.orderBy('e.entry_id', 'desc').offset(offset).limit(count).execute();
}

export async function countHistory(db: Executor, accountId: number, kind?: string): Promise<number> {
  let query = db
    .selectFrom('ledger_entries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId);
  if (kind !== undefined) query = query.where('kind', '=', kind);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

/** What the ledger check compares: every account's stored balance and the sum of its entries, transfers that do not sum to zero, and the fees. */
export async function readLedgerTotals(db: Executor) {
  const [balances, sums, unbalanced, fees, feeEntries, lastAfter] = await Promise.all([
    db.selectFrom('balances').select(['user_id', 'balance']).execute(),
    db
      .selectFrom('ledger_entries')
      .select(['account_id', (eb) => eb.fn.sum<number>('amount').as('total')])
      .groupBy('account_id')
      .execute(),
    db
      .selectFrom('ledger_entries')
      .select(['transfer_id', (eb) => eb.fn.sum<number>('amount').as('total')])
      .groupBy('transfer_id')
      .having((eb) => eb.fn.sum('amount'), '<>', 0)
      .execute(),
    db
      .selectFrom('market_sales')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('fee'), sql<number>`0`).as('total'))
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('ledger_entries')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount'), sql<number>`0`).as('total'))
      .where('kind', '=', 'fee')
      .executeTakeFirstOrThrow(),
    sql<{ account_id: number; balance_after: number }>`
      select account_id, balance_after from ledger_entries e
      where account_id > 0 and entry_id = (select max(entry_id) from ledger_entries f where f.account_id = e.account_id)`.execute(db),
  ]);
  return {
    balances: balances.map((b) => ({ user_id: Number(b.user_id), balance: Number(b.balance) })),
    sums: sums.map((s) => ({ account_id: Number(s.account_id), total: Number(s.total) })),
    unbalanced: unbalanced.map((u) => Number(u.transfer_id)),
    saleFees: Number(fees.total),
    feeEntries: Number(feeEntries.total),
    lastAfter: lastAfter.rows.map((r) => ({ account_id: Number(r.account_id), balance_after: Number(r.balance_after) })),
  };
}

// ---- listings ----

export interface ListableItem {
  item_id: number;
  user_id: number;
  item_proto_id: number;
  type: number;
  quality_id: number;
  state: string;
  ts_can_trade: number;
  equipped: unknown;
}

/** An item with what decides whether it may be listed. */
export async function readListableItem(db: Executor, itemId: number): Promise<ListableItem | undefined> {
  return db
    .selectFrom('items')
    .select(['item_id', 'user_id', 'item_proto_id', 'type', 'quality_id', 'state', 'ts_can_trade'])
    .select((eb) =>
      eb.exists(eb.selectFrom('equipped').select('equipped.item_id').whereRef('equipped.item_id', '=', 'items.item_id')).as('equipped'),
    )
    .where('item_id', '=', itemId)
    .executeTakeFirst();
}

/**
 * Puts an owned item of the seller on sale (state `listed`), if it still is the seller's,
 * owned, tradable at `now` and not equipped, in one conditional update; whether it did.
 */
export async function markListed(trx: Executor, itemId: number, sellerId: number, now: number): Promise<boolean> {
  const result = await sql`
    update items set state = 'listed'
    where item_id = ${itemId} and user_id = ${sellerId} and state = 'owned' and ts_can_trade <> -1 and ts_can_trade <= ${now}
      and not exists (select 1 from equipped where equipped.item_id = items.item_id)`.execute(trx);
  return Number(result.numAffectedRows ?? 0n) === 1;
}

/** Gives a listed item back to its seller as owned; whether it did. */
export async function markUnlisted(trx: Executor, itemId: number, sellerId: number): Promise<boolean> {
  const result =
    await sql`update items set state = 'owned' where item_id = ${itemId} and user_id = ${sellerId} and state = 'listed'`.execute(trx);
  return Number(result.numAffectedRows ?? 0n) === 1;
}

/** Moves a listed item to its buyer, owned and trade-locked until `canTrade`; whether it did. */
export async function moveListedItem(
  trx: Executor,
  itemId: number,
  sellerId: number,
  buyerId: number,
  now: number,
  canTrade: number,
): Promise<boolean> {
  const result = await sql`
    update items set state = 'owned', user_id = ${buyerId}, ts_owned = ${now}, ts_can_trade = ${canTrade}
    where item_id = ${itemId} and user_id = ${sellerId} and state = 'listed'`.execute(trx);
  return Number(result.numAffectedRows ?? 0n) === 1;
}

export async function insertListing(trx: Executor, listing: Omit<Listing, 'listing_id'>): Promise<number> {
  const row = await trx.insertInto('market_listings').values(listing).returning('listing_id').executeTakeFirstOrThrow();
  return Number(row.listing_id);
}

/** Changes the price of the seller's listing of an item that has not expired; the listing, or undefined when there is none. */
export async function repriceListing(
  trx: Executor,
  itemId: number,
  sellerId: number,
  price: number,
  now: number,
): Promise<Listing | undefined> {
  return trx
    .updateTable('market_listings')
    .set({ price })
    .where('item_id', '=', itemId)
    .where('seller_id', '=', sellerId)
    .where('ts_expires', '>', now)
    .returningAll()
    .executeTakeFirst();
}

/** Ends a listing of an item, by its seller (or anyone when `sellerId` is undefined); the listing ended, or undefined. */
export async function deleteListing(trx: Executor, itemId: number, sellerId?: number): Promise<Listing | undefined> {
  let query = trx.deleteFrom('market_listings').where('item_id', '=', itemId);
  if (sellerId !== undefined) query = query.where('seller_id', '=', sellerId);
  return query.returningAll().executeTakeFirst();
}

/**
 * Takes a listing off the market for a buyer, at `price` only and only while it has not
 * expired and is not the buyer's own: one conditional delete, so of concurrent buyers, a
 * cancel and a price change exactly one wins. The listing, or undefined.
 */
export async function takeListingForBuyer(
  trx: Executor,
  itemId: number,
  price: number,
  buyerId: number,
  now: number,
): Promise<Listing | undefined> {
  return trx
    .deleteFrom('market_listings')
    .where('item_id', '=', itemId)
    .where('price', '=', price)
    .where('seller_id', '<>', buyerId)
    .where('ts_expires', '>', now)
    .returningAll()
    .executeTakeFirst();
}

export async function readListing(db: Executor, itemId: number): Promise<Listing | undefined> {
  return db.selectFrom('market_listings').selectAll().where('item_id', '=', itemId).executeTakeFirst();
}

export async function insertSale(
  trx: Executor,
  sale: {
    listing_id: number;
    item_id: number;
    item_proto_id: number;
    seller_id: number;
    buyer_id: number;
    price: number;
    fee: number;
    ts: number;
  },
): Promise<void> {
  await trx.insertInto('market_sales').values(sale).execute();
}

/** A prototype's listings on sale at `now`, cheapest first. */
export async function selectListingsOf(db: Executor, protoId: number, now: number, count: number): Promise<Listing[]> {
  return db
    .selectFrom('market_listings')
    .selectAll()
    .where('item_proto_id', '=', protoId)
    .where('ts_expires', '>', now)
    .orderBy('price')
    .orderBy('listing_id')
    .limit(count)
    .execute();
}

/** Listings counted at most by getListing: a prototype with many would cost a walk of them all on every read. */
export const MAX_COUNTED_LISTINGS = 100;

/** How many of a prototype's listings are on sale at `now`, up to MAX_COUNTED_LISTINGS. */
export async function countListingsOf(db: Executor, protoId: number, now: number): Promise<number> {
  const some = db
    .selectFrom('market_listings')
    .select('listing_id')
    .where('item_proto_id', '=', protoId)
    .where('ts_expires', '>', now)
    .limit(MAX_COUNTED_LISTINGS);
  const row = await db
    .selectFrom(some.as('some'))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface ProtoOffer {
  item_proto_id: number;
  price: number;
  count: number;
  thing_id: number;
}

/** Prototypes on sale at `now` of a type (and class), each with its lowest price and how many are on sale, cheapest first. */
export async function selectOffers(db: Executor, filter: { type?: number; quality?: number }, now: number, offset: number, count: number) {
  let query = db
    .selectFrom('market_listings')
    .select(['item_proto_id', (eb) => eb.fn.min<number>('price').as('price'), (eb) => eb.fn.countAll<number>().as('count')])
    .where('ts_expires', '>', now);
  if (filter.type !== undefined) query = query.where('type', '=', filter.type);
  if (filter.quality !== undefined) query = query.where('quality_id', '=', filter.quality);
  const grouped = query.groupBy('item_proto_id');
  const [rows, total] = await Promise.all([
    grouped.orderBy('price').orderBy('item_proto_id').offset(offset).limit(count).execute(),
    db
      .selectFrom(grouped.as('g'))
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return {
    total: Number(total.n),
    rows: rows.map((r) => ({ item_proto_id: Number(r.item_proto_id), price: Number(r.price), count: Number(r.count) })),
  };
}

/** How many of each prototype are on sale at `now`. */
export async function countOnSale(db: Executor, protoIds: number[], now: number): Promise<Map<number, number>> {
  if (protoIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('market_listings')
    .select(['item_proto_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('item_proto_id', 'in', protoIds)
    .where('ts_expires', '>', now)
    .groupBy('item_proto_id')
    .execute();
  return new Map(rows.map((r) => [Number(r.item_proto_id), Number(r.n)]));
}

/** A seller's listings, newest first (expired ones too, until they are returned). */
export async function selectSellerListings(db: Executor, sellerId: number, offset: number, count: number): Promise<Listing[]> {
  return db
    .selectFrom('market_listings')
    .selectAll()
    .where('seller_id', '=', sellerId)
    .orderBy('listing_id', 'desc')
    .offset(offset)
    .limit(count)
    .execute();
}

export async function countSellerListings(db: Executor, sellerId: number): Promise<number> {
  const row = await db
    .selectFrom('market_listings')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('seller_id', '=', sellerId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Recent sales, newest first. */
export async function selectRecentSales(db: Executor, offset: number, count: number) {
  const rows = await db
    .selectFrom('market_sales')
    .select(['sale_id', 'item_id', 'item_proto_id', 'price', 'ts'])
    .orderBy('sale_id', 'desc')
    .offset(offset)
    .limit(count)
    .execute();
  return rows.map((r) => ({
    sale_id: Number(r.sale_id),
    item_id: Number(r.item_id),
    item_proto_id: Number(r.item_proto_id),
    price: Number(r.price),
    ts: Number(r.ts),
  }));
}

/** Listings past their time, oldest first. */
export async function selectExpiredListings(db: Executor, now: number, limit: number): Promise<Listing[]> {
  return db.selectFrom('market_listings').selectAll().where('ts_expires', '<=', now).orderBy('ts_expires').limit(limit).execute();
}

/** Every listing, newest first, optionally of one seller (administration). */
export async function selectAllListings(db: Executor, sellerId: number | undefined, offset: number, count: number) {
  let query = db.selectFrom('market_listings').selectAll();
  if (sellerId !== undefined) query = query.where('seller_id', '=', sellerId);
  let counted = db.selectFrom('market_listings').select((eb) => eb.fn.countAll<number>().as('n'));
  if (sellerId !== undefined) counted = counted.where('seller_id', '=', sellerId);
  const [rows, total] = await Promise.all([
    query.orderBy('listing_id', 'desc').offset(offset).limit(count).execute(),
    counted.executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

// ---- freezes ----

export async function isFrozen(db: Executor, userId: number): Promise<boolean> {
  return (await db.selectFrom('market_freezes').select('user_id').where('user_id', '=', userId).executeTakeFirst()) !== undefined;
}

export async function setFrozen(trx: Executor, userId: number, frozen: boolean, now: number, reason: string): Promise<void> {
  if (frozen) {
    await trx
      .insertInto('market_freezes')
      .values({ user_id: userId, ts: now, reason })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ ts: now, reason }))
      .execute();
  } else {
    await trx.deleteFrom('market_freezes').where('user_id', '=', userId).execute();
  }
}

// ---- the shop ----

/** Claims a request id for a shop purchase; false when the user made one with it already. */
export async function claimShopRequest(trx: Executor, userId: number, requestId: string, now: number): Promise<boolean> {
  const inserted = await trx
    .insertInto('shop_purchases')
    .values({ user_id: userId, request_id: requestId, ts: now, answer: '' })
    .onConflict((oc) => oc.columns(['user_id', 'request_id']).doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function readShopAnswer(db: Executor, userId: number, requestId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('shop_purchases')
    .select('answer')
    .where('user_id', '=', userId)
    .where('request_id', '=', requestId)
    .executeTakeFirst();
  return row?.answer;
}

export async function storeShopAnswer(trx: Executor, userId: number, requestId: string, answer: string): Promise<void> {
  await trx.updateTable('shop_purchases').set({ answer }).where('user_id', '=', userId).where('request_id', '=', requestId).execute();
}

/** A new owned item of a prototype for a user, tradable at once; its row. */
export async function insertBoughtItem(trx: Executor, userId: number, proto: { id: number; type: number; qualityId: number }, now: number) {
  return trx
    .insertInto('items')
    .values({
      user_id: userId,
      item_proto_id: proto.id,
      type: proto.type,
      quality_id: proto.qualityId,
      ts_owned: now,
      ts_can_trade: 0,
      state: 'owned',
    })
    .returning(['item_id', 'user_id', 'item_proto_id', 'ts_owned', 'ts_can_trade', 'data'])
    .executeTakeFirstOrThrow();
}

/** Ends an owned item of the user sold back to the platform, if it is owned, tradable at `now` and not equipped; whether it did. */
export async function consumeSoldItem(trx: Executor, itemId: number, userId: number, now: number): Promise<boolean> {
  const result = await sql`
    update items set state = 'consumed', ended_at = ${now}
    where item_id = ${itemId} and user_id = ${userId} and state = 'owned' and ts_can_trade <> -1 and ts_can_trade <= ${now}
      and not exists (select 1 from equipped where equipped.item_id = items.item_id)`.execute(trx);
  return Number(result.numAffectedRows ?? 0n) === 1;
}

// ---- the listings' check ----

/**
 * Listings whose item is not held for them (gone, not in state `listed`, another owner or
 * prototype, or equipped), and listed items without a listing.
 */
export async function readListingProblems(db: Executor) {
  const [unheld, orphans] = await Promise.all([
    sql<{ item_id: number; seller_id: number; owner: number | null; state: string | null; equipped: number }>`
      select l.item_id, l.seller_id, i.user_id as owner, i.state,
        case when exists (select 1 from equipped e where e.item_id = l.item_id) then 1 else 0 end as equipped
      from market_listings l left join items i on i.item_id = l.item_id
      where i.item_id is null or i.state <> 'listed' or i.user_id <> l.seller_id or i.item_proto_id <> l.item_proto_id
        or exists (select 1 from equipped e where e.item_id = l.item_id)
      order by l.item_id`.execute(db),
    sql<{ item_id: number; user_id: number }>`
      select i.item_id, i.user_id from items i
      where i.state = 'listed' and not exists (select 1 from market_listings l where l.item_id = i.item_id)
      order by i.item_id`.execute(db),
  ]);
  return {
    unheld: unheld.rows.map((r) => ({
      item_id: Number(r.item_id),
      seller_id: Number(r.seller_id),
      owner: r.owner === null ? null : Number(r.owner),
      state: r.state,
      equipped: Number(r.equipped) === 1,
    })),
    orphans: orphans.rows.map((r) => ({ item_id: Number(r.item_id), user_id: Number(r.user_id) })),
  };
}
