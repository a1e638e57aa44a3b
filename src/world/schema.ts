import { Kind, Type, TypeRegistry, type Static, type TSchema } from '@sinclair/typebox';
import { RECOVERY_CODE_COUNT } from '../auth/index.js';
import { WorldRank } from '../users/index.js';
import { characterCountFor } from '../infra/text.js';
import { ItemProtoStatus, Price } from '../catalog/index.js';
import { LEDGER_KINDS, PlatformAccount } from '../market/index.js';
import { WorldGame, WorldRoom } from './schema-lobby.js';

const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const Uint = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const Ts = Type.Integer({ minimum: -1, maximum: Number.MAX_SAFE_INTEGER });
const Bit = Type.Union([Type.Literal(0), Type.Literal(1), Type.Boolean()]);
const IdList = Type.Array(Id);

/** Limits of a world string, in characters (code points), as JSON Schema and the API's methods count them. */
interface TextLimits {
  minLength?: number;
  maxLength?: number;
}

/** Kind of the world's strings with length limits: TypeBox alone would count their UTF-16 units. */
export const TEXT_KIND = 'WorldText';

const withinLimits = (limits: TextLimits, value: string): boolean => {
  const characters = characterCountFor(value, limits);
  return characters >= (limits.minLength ?? 0) && characters <= (limits.maxLength ?? Infinity);
};

TypeRegistry.Set<TextLimits>(TEXT_KIND, (limits, value) => typeof value === 'string' && withinLimits(limits, value));

/** A string of minLength to maxLength characters; the JSON Schema document shows a plain string with these limits. */
const Text = (limits: TextLimits) => Type.Unsafe<string>({ [Kind]: TEXT_KIND, ...limits, type: 'string' });

/** What a string of these limits must be, for an error message. */
export function textLimitsProblem(schema: TSchema): string {
  const { minLength, maxLength } = schema as TextLimits;
  if (minLength !== undefined && maxLength !== undefined) return `must be ${minLength} to ${maxLength} characters`;
  return maxLength !== undefined ? `must be at most ${maxLength} characters` : `must be at least ${minLength} characters`;
}

export const WorldCollection = Type.Object({ collection_id: Id, title: Type.String() }, { additionalProperties: false });

export const WorldQuality = Type.Object(
  { quality_id: Uint, title: Type.String(), coeff_rent: Type.Number() },
  { additionalProperties: false },
);

export const WorldItemType = Type.Object({ type: Uint, title: Type.String() }, { additionalProperties: false });

/** Largest drop weight: sums of a list's weights stay exact integers. */
export const MAX_DROP_WEIGHT = 1_000_000_000;

export const WorldDropEntry = Type.Object(
  {
    item_proto_id: Id,
    is_secondary: Type.Optional(Bit),
    is_rare: Type.Optional(Bit),
    /** Cases: the entry's integer weight (default 1); its chance is weight over the sum of the case's weights. */
    weight: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DROP_WEIGHT })),
  },
  { additionalProperties: false },
);

export const WorldItemProto = Type.Object(
  {
    item_proto_id: Id,
    type: Uint,
    title: Type.String({ minLength: 1 }),
    description: Type.Optional(Type.String()),
    image: Type.Optional(Type.String()),
    quality_id: Type.Optional(Uint),
    collection_id: Type.Optional(Id),
    monopoly_id: Type.Optional(Id),
    sticker_group_id: Type.Optional(Id),
    prices: Type.Optional(Type.Object({ buy: Type.Optional(Price), quick_sell: Type.Optional(Price) }, { additionalProperties: false })),
    key_item_proto_id: Type.Optional(Id),
    case_item_proto_ids: Type.Optional(IdList),
    drop: Type.Optional(Type.Array(WorldDropEntry)),
    twin_item_proto_ids: Type.Optional(IdList),
    can_craft: Type.Optional(Bit),
    /** May be drawn as the result of a craft (default true). */
    craft_result: Type.Optional(Bit),
    item_proto_status: Type.Optional(ItemProtoStatus),
    /** Further prototype data kept as is (legacy fields such as buy_cost, can_sell; `uses` of subscriptions). */
    extra: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

/**
 * A user. An entry that leaves out email_verified, a trades_income setting, last_seen or
 * totp_last_step keeps the stored user's in a merge, and has the default after a replace.
 */
export const WorldUser = Type.Object(
  {
    user_id: Id,
    email: Type.Optional(Text({ minLength: 3, maxLength: 254 })),
    password: Type.Optional(Text({ minLength: 10, maxLength: 1000 })),
    password_hash: Type.Optional(Type.String()),
    totp_secret: Type.Optional(Type.String({ pattern: '^[A-Z2-7]+=*$', minLength: 16 })),
    domain: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^(?![0-9-]+$)[A-Za-z0-9_.-]+$' })),
    nick: Type.String(),
    nicks_old: Type.Optional(Type.Array(Type.String())),
    gender: Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1)], { description: 'the values clients know: 0 and 1' })),
    avatar: Type.Optional(Type.String()),
    avatar_key: Type.Optional(Type.String()),
    profile_cover: Type.Optional(Type.String()),
    approved: Type.Optional(Bit),
    vip: Type.Optional(Bit),
    moderator: Type.Optional(Bit),
    superadmin: Type.Optional(Bit),
    rank: Type.Optional(WorldRank),
    games: Type.Optional(Uint),
    games_wins: Type.Optional(Uint),
    xp: Type.Optional(Uint),
    xp_level: Type.Optional(Uint),
    global_ban: Type.Optional(Bit),
    captcha: Type.Optional(Type.Literal('always')),
    inventory_privacy: Type.Optional(Type.Union([Type.Literal('everyone'), Type.Literal('friends'), Type.Literal('nobody')])),
    /** privacy.update's `messages`: who may send this user private messages (default everyone). */
    messages_privacy: Type.Optional(Type.Union([Type.Literal('everyone'), Type.Literal('friends'), Type.Literal('nobody')])),
    muted_until: Type.Optional(Uint),
    /** A bot's owner, who cannot be a bot. */
    bot_owner: Type.Optional(Id),
    online: Type.Optional(Bit),
    created_at: Type.Optional(Uint),
    /** The e-mail address was confirmed (default 0). */
    email_verified: Type.Optional(Bit),
    /** privacy.update: 1 (default) anyone may offer this user trades, 0 nobody. */
    trades_income: Type.Optional(Bit),
    /** 1: only friends may (default 0). */
    trades_income_from_friends: Type.Optional(Bit),
    /** 1 (default): gifts are accepted even where trades are not. */
    trades_income_gifts: Type.Optional(Bit),
    /** 1: a gift completes at once, as if accepted (default 0). */
    trades_income_gifts_autoaccept: Type.Optional(Bit),
    /** When the user was last seen, seconds since the epoch (default 0: never). */
    last_seen: Type.Optional(Uint),
    /** The last authenticator time step used: codes of it and earlier ones are refused. A merge never lowers the stored one. */
    totp_last_step: Type.Optional(Uint),
    /**
     * The unused recovery codes of two-factor sign-in, as their stored SHA-256 hashes (never the
     * codes). Given, they replace the stored ones; left out, a merge keeps the stored ones while
     * totp_secret stays the same.
     */
    recovery_code_hashes: Type.Optional(
      Type.Array(Type.String({ pattern: '^[0-9a-f]{64}$' }), { maxItems: RECOVERY_CODE_COUNT, uniqueItems: true }),
    ),
  },
  { additionalProperties: false },
);

export const WorldEquip = Type.Union([
  Type.Object(
    {
      game: Text({ minLength: 1, maxLength: 100 }),
      slot: Type.Union([Type.Literal('cards'), Type.Literal('generator'), Type.Literal('joke')]),
      monopoly_id: Type.Optional(Id),
    },
    { additionalProperties: false },
  ),
  Type.Object({ slot: Type.Literal('badge') }, { additionalProperties: false }),
]);

/** The most items one world file may make through `copies`; larger inventories are listed item by item. */
export const MAX_WORLD_COPIES = 100_000;

export const WorldItem = Type.Object(
  {
    item_id: Type.Optional(Id),
    user_id: Id,
    item_proto_id: Id,
    ts_owned: Type.Optional(Uint),
    ts_can_trade: Type.Optional(Ts),
    /** Several identical items; the copies of all entries of a file add up to at most MAX_WORLD_COPIES. */
    copies: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_WORLD_COPIES })),
    equip: Type.Optional(WorldEquip),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

export const WorldFriendship = Type.Union([
  Type.Tuple([Id, Id]),
  Type.Object({ user_id: Id, friend_id: Id, since: Type.Optional(Uint) }, { additionalProperties: false }),
]);

export const WorldFriendRequest = Type.Object({ from: Id, to: Id, ts: Type.Optional(Uint) }, { additionalProperties: false });
export const WorldBlock = Type.Object({ user_id: Id, blocked_user_id: Id, ts: Type.Optional(Uint) }, { additionalProperties: false });

/** An item of a trade as it was when the trade was made. */
export const WorldTradeItem = Type.Object(
  {
    item_id: Id,
    item_proto_id: Id,
    /** Its owner then; default: the side's user. */
    user_id: Type.Optional(Id),
    ts_owned: Type.Optional(Uint),
    ts_can_trade: Type.Optional(Ts),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);

export const WorldTrade = Type.Object(
  {
    trade_id: Id,
    user_id_from: Id,
    user_id_to: Id,
    /** 0 open (default), 1 accepted, 2 declined, 3 revoked, 4 invalid, 5 expired */
    status: Type.Optional(Type.Integer({ minimum: 0, maximum: 5 })),
    create_time: Type.Optional(Uint),
    reaction_time: Type.Optional(Uint),
    things_from: Type.Optional(Type.Array(WorldTradeItem, { maxItems: 50 })),
    things_to: Type.Optional(Type.Array(WorldTradeItem, { maxItems: 50 })),
  },
  { additionalProperties: false },
);

/** One item a trade moved: the ledger. */
export const WorldTradeMove = Type.Object(
  { trade_id: Id, item_id: Id, from_user_id: Id, to_user_id: Id, ts: Uint },
  { additionalProperties: false },
);

export const WorldChatMessage = Type.Object(
  {
    msg_id: Type.Optional(Text({ minLength: 1, maxLength: 64 })),
    type: Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3), Type.Literal(4)]),
    user_id: Id,
    ts: Type.Optional(Uint),
    /** At most the 500 characters gchat.send takes (its MAX_MESSAGE_LENGTH). */
    text: Type.Optional(Text({ maxLength: 500 })),
    user_ids_mentioned: Type.Optional(IdList),
    case_item_proto_id: Type.Optional(Id),
    drop_item_proto_id: Type.Optional(Id),
    user_id_receiver: Type.Optional(Id),
    item_proto_id: Type.Optional(Id),
    item_proto_ids: Type.Optional(IdList),
  },
  { additionalProperties: false },
);

/** A private message (im.send); deleted messages are not carried. */
export const WorldPrivateMessage = Type.Object(
  {
    /** Unique; ids given later by the server follow the highest. */
    msg_id: Id,
    from: Id,
    to: Id,
    /** At most the 1,000 characters im.send takes. */
    text: Text({ minLength: 1, maxLength: 1000 }),
    ts_created: Type.Optional(Uint),
    /** 1: the receiver has read it; default 0. */
    is_read: Type.Optional(Bit),
  },
  { additionalProperties: false },
);

export const WorldChatStatus = Type.Object(
  {
    closed: Type.Optional(Type.Boolean()),
    slowmode: Type.Optional(Type.Boolean()),
    emoteonly: Type.Optional(Type.Boolean()),
    slowmode_interval: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
  },
  { additionalProperties: false },
);

/** An amount of money in kopecks (1/100 of the unit), as the database keeps it. */
const Kopecks = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const SignedKopecks = Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER });

/** A user's balance in kopecks: the sum of the user's entries in `ledger`, which the import checks. */
export const WorldBalance = Type.Object({ user_id: Id, balance: Kopecks }, { additionalProperties: false });

/** An account of the ledger: a user's (its user id), the fee account (-1) or the issuing account (-2). */
const LedgerAccount = Type.Union([Id, Type.Literal(PlatformAccount.FEES), Type.Literal(PlatformAccount.ISSUE)]);
const LedgerKind = Type.Union(LEDGER_KINDS.map((kind) => Type.Literal(kind)));

/** One side of a transfer. */
export const WorldLedgerEntry = Type.Object(
  {
    /** Unique; entries without one are numbered after the highest, in the order of the file. */
    entry_id: Type.Optional(Id),
    account_id: LedgerAccount,
    kind: LedgerKind,
    amount: SignedKopecks,
    /** A user's balance after the entry (required for users' accounts, absent for the platform's). */
    balance_after: Type.Optional(Kopecks),
  },
  { additionalProperties: false },
);

/** One transfer of the double-entry ledger: its entries sum to zero. */
export const WorldTransfer = Type.Object(
  {
    transfer_id: Id,
    ts: Type.Optional(Uint),
    kind: LedgerKind,
    item_id: Type.Optional(Id),
    item_proto_id: Type.Optional(Id),
    listing_id: Type.Optional(Id),
    reason: Type.Optional(Text({ maxLength: 500 })),
    entries: Type.Array(WorldLedgerEntry, { minItems: 1, maxItems: 10 }),
  },
  { additionalProperties: false },
);

/** An item on sale: the item (owned by its seller, not equipped) leaves the inventory while listed. */
export const WorldListing = Type.Object(
  {
    /** Default: numbered after the highest. */
    listing_id: Type.Optional(Id),
    item_id: Id,
    /** In kopecks. */
    price: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    ts_listed: Type.Optional(Uint),
    /** Default: 30 days (the default --market-ttl) after ts_listed. */
    ts_expires: Type.Optional(Uint),
  },
  { additionalProperties: false },
);

/** A sale made on the market (market.getLastSellups shows them; their fees are the fee account's). */
export const WorldSale = Type.Object(
  {
    sale_id: Id,
    listing_id: Id,
    item_id: Id,
    item_proto_id: Id,
    seller_id: Id,
    buyer_id: Id,
    /** In kopecks, the fee included. */
    price: Kopecks,
    fee: Kopecks,
    ts: Type.Optional(Uint),
  },
  { additionalProperties: false },
);

/** A user whose use of the market an administrator froze. */
export const WorldMarketFreeze = Type.Object(
  { user_id: Id, ts: Type.Optional(Uint), reason: Text({ minLength: 1, maxLength: 500 }) },
  { additionalProperties: false },
);

/** One user's redemption of a promo code (a user redeems a code once). */
export const WorldPromocodeUse = Type.Object(
  {
    user_id: Id,
    ts: Type.Optional(Uint),
    /** The items the redemption granted, as a record (they may since have moved or gone); default none. */
    item_ids: Type.Optional(Type.Array(Id, { maxItems: 50 })),
  },
  { additionalProperties: false },
);

export const WorldPromocode = Type.Object(
  {
    code: Type.String({ pattern: '^[A-Za-z0-9_-]{4,64}$', description: 'kept and matched in upper case' }),
    /** Empty only when the code gives money. */
    item_proto_ids: Type.Array(Id, { maxItems: 50 }),
    max_uses: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
    ts_expires: Type.Optional(Uint),
    disabled: Type.Optional(Bit),
    /** Default: the time of the import, or in a merge the stored code's. */
    created_at: Type.Optional(Uint),
    /**
     * How many times the code was redeemed: at least the entries of used_by (default their number).
     * An entry that gives uses or used_by replaces the stored code's uses and redemptions; one that
     * gives neither (older files) keeps them in a merge, and has none after a replace.
     */
    uses: Type.Optional(Uint),
    /** Money each redemption pays, in kopecks (default 0); a code may give money, items or both. */
    money: Type.Optional(Kopecks),
    /** Who redeemed the code, each user once: they cannot redeem it again. */
    used_by: Type.Optional(Type.Array(WorldPromocodeUse)),
  },
  { additionalProperties: false },
);

/** An OAuth app, without its secret: a file never holds one (admin.updateApp with new_secret issues one). */
export const WorldOauthApp = Type.Object(
  {
    app_id: Id,
    name: Type.String({ minLength: 1, maxLength: 100 }),
    redirect_uris: Type.Array(
      Type.String({
        maxLength: 512,
        pattern: '^(https://[^/#\\s]|http://(localhost|127\\.0\\.0\\.1|\\[::1\\])[:/]?)[^#\\s]*$',
        description: 'matched exactly: https, or http on a loopback address; no fragment',
      }),
      { minItems: 1, maxItems: 10 },
    ),
    /** Bit mask of the scopes the app may ask for: offline 1, games 2, stat 8. Default 0. */
    scopes: Type.Optional(Type.Union([0, 1, 2, 3, 8, 9, 10, 11].map((mask) => Type.Literal(mask)))),
    /** A public client has no secret and must use PKCE. Default 0. */
    public_client: Type.Optional(Bit),
    /** Default 1. */
    active: Type.Optional(Bit),
  },
  { additionalProperties: false },
);

/** A player's count towards a mission in one week. */
export const WorldMissionProgress = Type.Object(
  {
    user_id: Id,
    /** The week: Unix time of its Monday, 00:00 UTC. */
    week: Uint,
    counter: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    /** When the week's reward was given (Unix time); absent: not yet (it needs counter to reach the target). */
    ts_rewarded: Type.Optional(Uint),
  },
  { additionalProperties: false },
);

/** An operator's mission of the week, with the players' progress. */
export const WorldMission = Type.Object(
  {
    mission_id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
    name: Text({ minLength: 1, maxLength: 100 }),
    goal: Type.Union([Type.Literal('play'), Type.Literal('win')]),
    target: Type.Integer({ minimum: 1, maximum: 1000 }),
    /** money: `reward` whole units of the currency (at most 1,000,000); item: one item of prototype `reward`. */
    reward_type: Type.Union([Type.Literal('money'), Type.Literal('item')]),
    reward: Id,
    /** Default 1. */
    active: Type.Optional(Bit),
    /** Default: the time of the import. */
    ts_created: Type.Optional(Uint),
    /** Replaces the stored mission's progress; default none. */
    progress: Type.Optional(Type.Array(WorldMissionProgress)),
  },
  { additionalProperties: false },
);

export const World = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    collections: Type.Optional(Type.Array(WorldCollection)),
    qualities: Type.Optional(Type.Array(WorldQuality)),
    item_types: Type.Optional(Type.Array(WorldItemType)),
    item_protos: Type.Optional(Type.Array(WorldItemProto)),
    users: Type.Optional(Type.Array(WorldUser)),
    items: Type.Optional(Type.Array(WorldItem)),
    friends: Type.Optional(Type.Array(WorldFriendship)),
    friend_requests: Type.Optional(Type.Array(WorldFriendRequest)),
    blocks: Type.Optional(Type.Array(WorldBlock)),
    trades: Type.Optional(Type.Array(WorldTrade)),
    trade_moves: Type.Optional(Type.Array(WorldTradeMove)),
    promocodes: Type.Optional(Type.Array(WorldPromocode)),
    apps: Type.Optional(Type.Array(WorldOauthApp)),
    private_messages: Type.Optional(Type.Array(WorldPrivateMessage)),
    balances: Type.Optional(Type.Array(WorldBalance)),
    ledger: Type.Optional(Type.Array(WorldTransfer)),
    listings: Type.Optional(Type.Array(WorldListing)),
    market_sales: Type.Optional(Type.Array(WorldSale)),
    market_freezes: Type.Optional(Type.Array(WorldMarketFreeze)),
    missions: Type.Optional(Type.Array(WorldMission)),
    // The lobby (schema-lobby.ts): waiting rooms and finished games.
    rooms: Type.Optional(Type.Array(WorldRoom)),
    games: Type.Optional(Type.Array(WorldGame)),
    gchat: Type.Optional(
      Type.Object(
        { status: Type.Optional(WorldChatStatus), messages: Type.Optional(Type.Array(WorldChatMessage)) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, title: 'game-platform world' },
);

export type World = Static<typeof World>;
export type WorldUser = Static<typeof WorldUser>;
export type WorldItemProto = Static<typeof WorldItemProto>;
export type WorldItem = Static<typeof WorldItem>;
export type WorldChatMessage = Static<typeof WorldChatMessage>;
export type WorldTrade = Static<typeof WorldTrade>;
export type WorldPromocode = Static<typeof WorldPromocode>;
export type WorldFriendship = Static<typeof WorldFriendship>;
export type WorldTransfer = Static<typeof WorldTransfer>;

/** Defaults per compatibility.md when a world gives none. */
export const DEFAULT_QUALITIES = [
  { quality_id: 0, title: 'Stock', coeff_rent: 1 },
  { quality_id: 1, title: 'Common', coeff_rent: 1.1 },
  { quality_id: 2, title: 'Standard', coeff_rent: 1.25 },
  { quality_id: 3, title: 'Special', coeff_rent: 1.5 },
  { quality_id: 4, title: 'Highest', coeff_rent: 2 },
  { quality_id: 5, title: 'Exclusive', coeff_rent: 2.5 },
];

export { DEFAULT_ITEM_TYPES } from '../catalog/index.js';
