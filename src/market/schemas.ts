import { Type } from '@sinclair/typebox';
import { Strict, Ts, Uint } from '../api/schema-types.js';
import { ItemProtoLegacy } from '../catalog/index.js';
import { LEDGER_KINDS } from './ledger.js';

/** An amount of money in units of the currency (kopecks / 100): at most two decimals. */
export const Money = Type.Number({ description: 'units of the currency, at most two decimals (kept in kopecks)' });

/** An item on the market: its prototype in the legacy form, the item's id and its price. */
export const MarketThing = Type.Object(
  {
    ...ItemProtoLegacy.properties,
    thing_id: Type.Optional(Uint),
    price: Money,
    count: Type.Optional(Uint),
    ts_listed: Type.Optional(Ts),
    ts_expires: Type.Optional(Ts),
    ts: Type.Optional(Ts),
  },
  { ...Strict, $id: 'MarketThing' },
);

export const MarketList = Type.Object(
  { count: Uint, things: Type.Array(MarketThing) },
  { ...Strict, description: '`count`: how many the whole list holds' },
);

export const LastSellups = Type.Object(
  {
    count: Uint,
    things: Type.Array(MarketThing, {
      description: 'recent sales, newest first: the item sold, its price, and how many of its prototype are on sale now',
    }),
    collections: Type.Array(Type.Object({ id: Uint, title: Type.String() }, Strict)),
    qualities: Type.Array(Type.Object({ id: Uint, title: Type.String(), coeff_rent: Type.Number() }, Strict)),
    thing_types: Type.Array(Type.Object({ id: Uint, title: Type.String() }, Strict)),
  },
  Strict,
);

export const LedgerKind = Type.Union(
  LEDGER_KINDS.map((k) => Type.Literal(k)),
  { description: 'what the entry records' },
);

export const HistoryEntry = Type.Object(
  {
    id: Uint,
    ts: Ts,
    amount: Type.Number({ description: 'signed, in units' }),
    balance: Money,
    kind: LedgerKind,
    thing_id: Type.Optional(Uint),
    thing_prototype_id: Type.Optional(Uint),
    listing_id: Type.Optional(Uint),
  },
  { ...Strict, $id: 'WalletEntry' },
);
