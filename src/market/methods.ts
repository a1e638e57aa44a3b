import { Type } from '@sinclair/typebox';
import { SerializedData, defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Strict, Uint } from '../api/schema-types.js';
import { getCatalog } from '../catalog/index.js';
import { nowSeconds } from '../services.js';
import { LEDGER_KINDS } from './ledger.js';
import { checkPrice, toUnits, unitsToKopecks, wholeKopecks } from './money.js';
import {
  countHistory,
  countListingsOf,
  countOnSale,
  countSellerListings,
  MAX_COUNTED_LISTINGS,
  readBalance,
  selectHistory,
  selectListingsOf,
  selectOffers,
  selectRecentSales,
  selectSellerListings,
} from './queries.js';
import { HistoryEntry, LastSellups, MarketList, Money } from './schemas.js';
import { buy, cancel, sell } from './trading.js';
import { buyFromShop, quickSell } from './shop.js';
import { Item } from '../catalog/index.js';
import { listingsJson, marketThingJson } from './views.js';

export const MAX_LISTING_PAGE = 100;
export const MAX_SELLUPS_PAGE = 50;
export const MAX_HISTORY_PAGE = 100;

const THING_ID = P.uint({ minimum: 1, description: 'the item (thing_id / item_id)' });
const offsetParam = P.uint({ default: 0, maximum: 1_000_000, description: 'rows to skip' });
const countParam = (max: number, fallback: number) =>
  P.uint({ default: fallback, minimum: 1, maximum: max, description: `rows to answer, at most ${max}` });

const ITEM_ERRORS = { 603: 'the item is not in your inventory, cannot be traded (yet or ever), is equipped or is in an open trade' };
const FROZEN = { 2105: 'an administrator has frozen your use of the market' };

export const walletMethods: AnyMethod[] = [
  defineMethod({
    name: 'execute.wallet',
    summary: "The caller's wallet",
    description:
      'Answers `{ "code": 0, "result": { "info": { "balance": 12.5 } } }` (under `result`, as the execute.* methods answer): the balance in units of the currency (kopecks / 100).',
    auth: 'required',
    resultKey: 'result',
    params: P.object({}),
    result: Type.Object({ info: Type.Object({ balance: Money }, Strict) }, Strict),
    handler: async ({ services, caller }) => ({ info: { balance: toUnits(await readBalance(services.db.kysely, caller.userId)) } }),
  }),

  defineMethod({
    name: 'wallet.getHistory',
    summary: "The caller's ledger entries, newest first",
    description:
      'Each change of the balance is one entry: its amount (signed) and the balance after it, in units, what it records (`kind`) and the item, prototype or listing concerned. ' +
      'Every entry has its counter-entries in the ledger (the other party, the fee account).',
    auth: 'required',
    params: P.object({
      offset: offsetParam,
      count: countParam(MAX_HISTORY_PAGE, 20),
      type: P.optional(P.enum(LEDGER_KINDS, { description: 'only entries of this kind' })),
    }),
    result: Type.Object({ count: Uint, history: Type.Array(HistoryEntry) }, Strict),
    handler: async ({ services, caller }, params) => {
      const db = services.db.kysely;
      const [rows, count] = await Promise.all([
        selectHistory(db, caller.userId, params.offset, params.count, params.type),
        countHistory(db, caller.userId, params.type),
      ]);
      return {
        count,
        history: rows.map((row) => ({
          id: Number(row.entry_id),
          ts: Number(row.ts),
          amount: toUnits(Number(row.amount)),
          balance: toUnits(Number(row.balance_after ?? 0)),
          kind: row.kind as (typeof LEDGER_KINDS)[number],
          ...(row.item_id !== null ? { thing_id: Number(row.item_id) } : {}),
          ...(row.item_proto_id !== null ? { thing_prototype_id: Number(row.item_proto_id) } : {}),
          ...(row.listing_id !== null ? { listing_id: Number(row.listing_id) } : {}),
        })),
      };
    },
  }),
];

export const marketMethods: AnyMethod[] = [
  defineMethod({
    name: 'market.sell',
    summary: 'Put an item on sale, or change the price of one on sale',
    description:
      'The item leaves the inventory while on sale (trades, crafts and openings refuse it) and comes back when taken off (market.cancel) or when the listing expires (`--market-ttl`). ' +
      '`price` is in units of the currency with at most two decimals (as the website sends it), between `--market-min-price` and `--market-max-price`. ' +
      'Selling an item already on sale changes its price.',
    auth: 'required',
    params: P.object({
      thing_id: THING_ID,
      price: P.double({ minimum: 0, maximum: 1e13, description: 'the price in units (e.g. 12.5)' }),
    }),
    result: Type.Object({ listing_id: Uint, price: Money }, Strict),
    errors: { ...ITEM_ERRORS, ...FROZEN },
    handler: async ({ services, caller }, params) => {
      const price = checkPrice(services, 'price', unitsToKopecks('price', params.price));
      const listed = await sell(services, caller.userId, params.thing_id, price);
      return { listing_id: listed.listing_id, price: toUnits(price) };
    },
  }),

  defineMethod({
    name: 'market.cancel',
    summary: 'Take an item off the market',
    description: 'The item returns to the inventory as it was.',
    auth: 'required',
    extension: true,
    params: P.object({ thing_id: THING_ID }),
    errors: { 2101: 'you have no listing of this item' },
    handler: async ({ services, caller }, params) => {
      await cancel(services, caller.userId, params.thing_id);
    },
  }),

  defineMethod({
    name: 'market.buy',
    summary: 'Buy an item on sale at its price',
    description:
      "`price` is in kopecks (units × 100, as clients send it; a float within a rounding error of a whole number is taken as it) and must be the listing's price: " +
      'a price changed meanwhile answers 2102 with the current one in `data.price` (units). The seller receives the price less `--market-fee` percent (rounded down); ' +
      'the item cannot be traded, crafted or sold again for `--market-hold`. Of concurrent buyers one wins; the others answer 2101 and keep their money.',
    auth: 'required',
    params: P.object({
      thing_id: THING_ID,
      price: P.double({ minimum: 0, maximum: 1e15, description: 'the listing price in kopecks (units × 100)' }),
    }),
    result: Type.Object({ thing_id: Uint, price: Money, balance: Money }, Strict),
    errors: {
      2101: 'the item is not on sale: sold, taken off, expired or never listed',
      2102: 'the listing has another price (data.price: the current one, in units)',
      2103: 'your balance does not cover the price',
      2104: 'the listing is your own',
      ...FROZEN,
    },
    handler: async ({ services, caller }, params) => {
      const price = wholeKopecks('price', params.price);
      const bought = await buy(services, caller.userId, params.thing_id, price);
      return { thing_id: params.thing_id, price: toUnits(price), balance: toUnits(bought.balance) };
    },
  }),

  defineMethod({
    name: 'market.getListing',
    summary: "A prototype's items on sale, cheapest first",
    description: `Each item as its prototype (legacy form) with \`thing_id\` and \`price\` (units); nothing about its seller. \`count\`: how many are on sale, counted up to ${MAX_COUNTED_LISTINGS}.`,
    auth: 'optional',
    params: P.object({
      thing_prototype_id: P.uint({ minimum: 1, description: 'the prototype' }),
      count: countParam(MAX_LISTING_PAGE, 20),
    }),
    result: MarketList,
    handler: async ({ services }, params) => {
      const db = services.db.kysely;
      const now = nowSeconds(services);
      const [catalog, rows, count] = await Promise.all([
        getCatalog(services),
        selectListingsOf(db, params.thing_prototype_id, now, params.count),
        countListingsOf(db, params.thing_prototype_id, now),
      ]);
      return new SerializedData(`{"count":${count},"things":[${listingsJson(catalog, rows, false).join(',')}]}`);
    },
  }),

  defineMethod({
    name: 'market.search',
    summary: 'Prototypes on sale, each with its lowest price and how many are on sale',
    description: 'Cheapest first. `thing_id` is one of the cheapest items.',
    auth: 'optional',
    params: P.object({
      thing_type: P.optional(P.uint({ maximum: 1000, description: "the prototypes' type" })),
      quality: P.optional(P.uint({ maximum: 1000, description: "the prototypes' class" })),
      offset: offsetParam,
      count: countParam(MAX_LISTING_PAGE, 20),
    }),
    result: MarketList,
    handler: async ({ services }, params) => {
      const now = nowSeconds(services);
      const filter = {
        ...(params.thing_type !== undefined ? { type: params.thing_type } : {}),
        ...(params.quality !== undefined ? { quality: params.quality } : {}),
      };
      const [catalog, offers] = await Promise.all([
        getCatalog(services),
        selectOffers(services.db.kysely, filter, now, params.offset, params.count),
      ]);
      const things = offers.rows.flatMap((row) => {
        const proto = catalog.protos.get(row.item_proto_id);
        return proto ? [marketThingJson(proto, { price: toUnits(row.price), count: row.count })] : [];
      });
      return new SerializedData(`{"count":${offers.total},"things":[${things.join(',')}]}`);
    },
  }),

  defineMethod({
    name: 'market.getLastSellups',
    summary: 'Recent sales, newest first',
    description:
      'Each sale as its prototype (legacy form) with the item sold (`thing_id`), its `price` (units), when (`ts`) and how many of the prototype are on sale now (`count`); ' +
      'with the collections, classes and types the sales name.',
    auth: 'optional',
    params: P.object({ offset: offsetParam, count: countParam(MAX_SELLUPS_PAGE, 20) }),
    result: LastSellups,
    handler: async ({ services }, params) => {
      const now = nowSeconds(services);
      const db = services.db.kysely;
      const [catalog, sales] = await Promise.all([getCatalog(services), selectRecentSales(db, params.offset, params.count)]);
      const onSale = await countOnSale(db, [...new Set(sales.map((s) => s.item_proto_id))], now);
      const collections = new Map<number, string>();
      const qualities = new Set<number>();
      const types = new Set<number>();
      const things = sales.flatMap((sale) => {
        const proto = catalog.protos.get(sale.item_proto_id);
        if (!proto) return [];
        if (proto.collectionId !== null) collections.set(proto.collectionId, catalog.collections.get(proto.collectionId)?.title ?? '');
        qualities.add(proto.qualityId);
        types.add(proto.type);
        return [
          marketThingJson(proto, {
            thing_id: sale.item_id,
            price: toUnits(sale.price),
            ts: sale.ts,
            count: onSale.get(sale.item_proto_id) ?? 0,
          }),
        ];
      });
      const collectionList = [...collections].map(([id, title]) => ({ id, title }));
      const qualityList = [...qualities].flatMap((id) => {
        const quality = catalog.qualities.get(id);
        return quality ? [{ id, title: quality.title, coeff_rent: quality.coeff_rent }] : [];
      });
      const typeList = [...types].map((id) => ({ id, title: catalog.itemTypes.get(id) ?? '' }));
      return new SerializedData(
        `{"count":${things.length},"things":[${things.join(',')}],"collections":${JSON.stringify(collectionList)},` +
          `"qualities":${JSON.stringify(qualityList)},"thing_types":${JSON.stringify(typeList)}}`,
      );
    },
  }),

  defineMethod({
    name: 'market.getMy',
    summary: "The caller's items on sale, newest first",
    description: 'As market.getListing shows them, with when each was listed and when it expires.',
    auth: 'required',
    extension: true,
    params: P.object({ offset: offsetParam, count: countParam(MAX_LISTING_PAGE, 20) }),
    result: MarketList,
    handler: async ({ services, caller }, params) => {
      const db = services.db.kysely;
      const [catalog, rows, count] = await Promise.all([
        getCatalog(services),
        selectSellerListings(db, caller.userId, params.offset, params.count),
        countSellerListings(db, caller.userId),
      ]);
      return new SerializedData(`{"count":${count},"things":[${listingsJson(catalog, rows, true).join(',')}]}`);
    },
  }),
];

export const shopMethods: AnyMethod[] = [
  defineMethod({
    name: 'shop.buy',
    summary: 'Buy an item from the catalogue at its price',
    description:
      "One new item of the prototype, at its `prices.buy`, paid from the caller's balance. With `request_id`, a retry answers the first purchase made under it and buys nothing more.",
    auth: 'required',
    extension: true,
    params: P.object({
      item_proto_id: P.uint({ minimum: 1, description: 'the prototype' }),
      request_id: P.optional(
        P.string({ minLength: 1, maxLength: 64, description: 'makes a retry safe: the same id answers the same purchase' }),
      ),
    }),
    result: Type.Object({ item: Item, balance: Money }, Strict),
    errors: { 2103: 'your balance does not cover the price', 2106: 'the catalogue does not sell this prototype' },
    handler: async ({ services, caller }, params) =>
      new SerializedData(await buyFromShop(services, caller.userId, params.item_proto_id, params.request_id)),
  }),

  defineMethod({
    name: 'market.quickSell',
    summary: 'Sell an item back to the platform at its quick-sell price',
    description: 'The item ends and its `prices.quick_sell` is paid to the caller.',
    auth: 'required',
    extension: true,
    params: P.object({ thing_id: THING_ID }),
    result: Type.Object({ balance: Money }, Strict),
    errors: { ...ITEM_ERRORS, 2106: 'the platform does not buy this prototype back' },
    handler: async ({ services, caller }, params) => ({ balance: toUnits(await quickSell(services, caller.userId, params.thing_id)) }),
  }),
];
