import { Type, type TProperties, type TSchema } from '@sinclair/typebox';

/**
 * Building blocks of the reference client's rules (the official SDK checks every answer
 * it receives), written from what its schemas require. Objects allow fields they do not
 * name, as the SDK's do: these rules only hold us to what the SDK would refuse.
 */

export const Num = Type.Number();
export const Str = Type.String();
export const NumList = Type.Array(Num);
export const opt = Type.Optional;

/** An object that allows unnamed fields. */
export const obj = (properties: TProperties, title?: string) => Type.Object(properties, title ? { title } : {});

/** A bit: the number 0 or 1 (never a boolean), or absent. */
export const bit = opt(Type.Union([Type.Literal(0), Type.Literal(1)]));
/** A field that must not be there at all. */
export const absent = opt(Type.Never());

/** `rank`: exactly one of four forms, or absent. `{hidden: 0}` is none of them. */
export const Rank = Type.Union([
  obj({ hidden: Type.Literal(1) }, 'hidden'),
  obj({ qual: Num }, 'qual'),
  obj({ expired: Type.Literal(1) }, 'expired'),
  obj({ id: Num, pts: Num }, 'id and pts'),
]);

const activeShortFields = {
  user_id: Num,
  domain: opt(Str),
  inactive: absent,
  approved: bit,
  nick: Str,
  gender: Type.Union([Type.Literal(0), Type.Literal(1)]),
  avatar: Str,
  online: bit,
  current_game: opt(obj({ gs_id: Str, gs_game_id: Str })),
  rank: opt(Rank),
  vip: bit,
  bot: bit,
  bot_owner: opt(Num),
  moderator: bit,
};

/** A user the service cannot show (unknown, or globally blocked): the flags are absent, avatar_key is there. */
export const InactiveUser = obj(
  {
    user_id: opt(Num),
    domain: opt(Type.Union([Str, Type.Null()])),
    inactive: Type.Union([Type.Literal('not_exists'), Type.Literal('global_ban')]),
    approved: absent,
    nick: Str,
    gender: absent,
    avatar: Str,
    avatar_key: Str,
    online: absent,
    vip: absent,
    moderator: absent,
    muted: absent,
  },
  'inactive user',
);

const variantFields = {
  id: Num,
  is_default: bit,
  is_selected: bit,
  is_unlocked: bit,
  image: opt(Str),
  description: opt(Str),
  unlock: opt(obj({ moneybox: opt(Num), buy_tokens_sp: opt(Num), buy_tokens_cmpt: opt(Num) })),
};
const Variants = opt(Type.Array(obj(variantFields)));

/** A prototype under its older Thing names. */
const thingPrototypeFields = {
  thing_prototype_id: Num,
  thing_prototype_status: Num,
  thing_type: Num,
  image: Str,
  title: Str,
  description: Str,
  group: opt(Type.Union([Num, Type.Null()])),
  quality: Num,
  collection: opt(Num),
  twin_thing_prototype_id: opt(NumList),
  delete_price: opt(Type.Union([Num, Type.Null()])),
  can_be_upgraded: bit,
  buy_cost: opt(Num),
  key: opt(Num),
  cases: opt(NumList),
  drop: opt(
    Type.Array(
      obj({
        thing_prototype_id: opt(Num),
        hidden: opt(Type.Boolean()),
        is_primary: opt(Type.Boolean()),
        is_rare: opt(Num),
        is_secondary: opt(Num),
      }),
    ),
  ),
  variants: Variants,
};

const thingFields = {
  ...thingPrototypeFields,
  thing_id: Num,
  user_id: Num,
  owned_time: Num,
  can_give: opt(Num),
  can_sell: opt(Num),
  souvenir: opt(Str),
  autograph: opt(obj({ user_id: Num, text: opt(Str) })),
  moneybox: opt(Type.Union([obj({ transactions: Num, money_inside: Num }), obj({ numbers: NumList }), obj({ count: Num })])),
  uses_left: opt(Num),
  uses_origin: opt(Num),
};
/** An owned item under its older Thing names (legacy lists, trades). */
export const Thing = obj(thingFields, 'thing');

const itemProtoFields = {
  item_proto_id: Num,
  item_proto_status: opt(Type.Union([Type.Literal(0), Type.Literal(1), Type.Literal(2)])),
  type: Num,
  image: Str,
  title: Str,
  description: Str,
  quality_id: Num,
  moneybox: bit,
  variants: Variants,
  monopoly_id: opt(Num),
  sticker_group_id: opt(Num),
  collection_id: opt(Num),
  twin_item_proto_ids: opt(NumList),
  prices: opt(obj({ buy: opt(Type.Union([Num, Type.Array(obj({ use_count: Num, price: Num }))])), quick_sell: opt(Num) })),
  key_item_proto_id: opt(Num),
  case_item_proto_ids: opt(NumList),
  drop: opt(Type.Array(obj({ item_proto_id: opt(Num), is_primary: opt(Type.Boolean()), is_rare: opt(Num), is_secondary: opt(Num) }))),
  can_craft: bit,
};
export const ItemProto = obj(itemProtoFields, 'item prototype');
/** A prototype with the Thing names too; where both name a field, the prototype's rule holds. */
export const ItemProtoLegacy = obj({ ...thingPrototypeFields, ...itemProtoFields }, 'item prototype with legacy fields');

/** An owned item: its prototype's fields plus its own. */
export const Item = obj(
  {
    ...itemProtoFields,
    item_id: Num,
    item_ids: opt(NumList),
    ts_owned: Num,
    ts_can_trade: opt(Num),
    ts_can_sell: opt(Num),
    souvenir: opt(Str),
    autograph: opt(obj({ user_id: Num, text: opt(Str) })),
    moneybox: opt(Type.Record(Str, Type.Unknown())),
    seed: opt(Type.Union([Str, Num])),
    variants: Variants,
    xp_boost: opt(Num),
    can_delete: bit,
    previous_owners_user_ids: opt(NumList),
    uses: opt(obj({ left: Num, origin: opt(Num) })),
  },
  'item',
);

export const ActiveUserShort = obj(activeShortFields, 'user, short form');
export const ActiveUser = obj(
  {
    ...activeShortFields,
    nicks_old: Type.Array(Str),
    profile_cover: opt(Str),
    social_vk: opt(Num),
    social_discord: opt(Str),
    social_twitch: opt(Str),
    games: opt(Num),
    games_wins: opt(Num),
    xp: opt(Num),
    xp_level: opt(Num),
    badge: opt(Thing),
    friendship: opt(Num),
    muted: bit,
    mfp_ban_history: opt(
      Type.Union([
        obj({ type: Type.Literal(0), count: Num, ts_last_ban: Num, ts_end: opt(Num) }),
        obj({ type: Type.Literal(1), ts_end: Num }),
      ]),
    ),
  },
  'user, full form',
);

/** A user in the short form, or a placeholder (told apart by `inactive`). */
export const UserShort = Type.Union([ActiveUserShort, InactiveUser]);
/** A user in the full form, or a placeholder. */
export const User = Type.Union([ActiveUser, InactiveUser]);

/** What a sign-in gives. */
export const Session = obj({ user_id: Num, access_token: Str, expires_in: Num, refresh_token: opt(Str) }, 'session');

export type Params = Record<string, unknown>;

/** A bit parameter as the server reads it (1, "1", true, "true"), or its default. */
export function flag(params: Params, name: string, fallback: 0 | 1): boolean {
  const value = params[name];
  if (value === undefined || value === null || value === '') return fallback === 1;
  return value === 1 || value === '1' || value === true || value === 'true';
}

/**
 * A method's rule: for the given parameters, the schema its `data` must match; 'void' when
 * the answer has no `data` at all; `{ voidOr }` when either is allowed.
 */
export type SdkAnswer = TSchema | 'void' | { voidOr: TSchema };
export type SdkRule = (params: Params) => SdkAnswer;
export type SdkRules = Record<string, SdkRule>;

export const always =
  (schema: TSchema): SdkRule =>
  () =>
    schema;
export const isVoid: SdkRule = () => 'void';
