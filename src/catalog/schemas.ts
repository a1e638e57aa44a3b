import { Type } from '@sinclair/typebox';
import { Strict, Uint } from '../api/schema-types.js';

/** The statuses the official SDK accepts (its picklist 0, 1, 2). */
export const ItemProtoStatus = Type.Union([Type.Literal(0), Type.Literal(1), Type.Literal(2)]);
/** A price: never negative, and at most 2^53 − 1, so that sums of prices stay exact. */
export const Price = Type.Number({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

/** A prototype in the short form (gchat.get). */
export const ItemProtoShort = Type.Object(
  {
    item_proto_id: Uint,
    item_proto_status: Type.Optional(ItemProtoStatus),
    type: Uint,
    image: Type.String(),
    title: Type.String(),
    description: Type.String(),
    quality_id: Uint,
  },
  { ...Strict, $id: 'ItemProtoShort' },
);

const IdList = Type.Array(Uint);
const Bit = Type.Union([Type.Literal(0), Type.Literal(1)]);
/** Unix time, or -1 for "never". */
const Lock = Type.Integer({ minimum: -1, description: 'Unix time from which the action is allowed; -1 = never' });

export const DropEntry = Type.Object(
  {
    item_proto_id: Uint,
    is_secondary: Type.Optional(Bit),
    is_rare: Type.Optional(Bit),
    weight: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: "cases: the entry's integer weight; its chance is weight over the sum of the case's weights",
      }),
    ),
    chance: Type.Number({
      minimum: 0,
      maximum: 1,
      description:
        'the probability of receiving this entry when the item is opened: weight over the sum of weights for a case (the chances of a case add up to 1), 1 for every entry of a gift set',
    }),
  },
  Strict,
);

/** Fields every prototype carries (the spec's Item table without the owned-item fields). */
const protoFields = {
  item_proto_id: Uint,
  item_proto_status: Type.Optional(ItemProtoStatus),
  type: Uint,
  image: Type.String({ description: 'empty when the prototype has no picture' }),
  title: Type.String(),
  description: Type.String(),
  quality_id: Uint,
  collection_id: Type.Optional(Uint),
  monopoly_id: Type.Optional(Uint),
  sticker_group_id: Type.Optional(Uint),
  prices: Type.Optional(Type.Object({ buy: Type.Optional(Price), quick_sell: Type.Optional(Price) }, Strict)),
  key_item_proto_id: Type.Optional(Uint),
  case_item_proto_ids: Type.Optional(IdList),
  drop: Type.Optional(Type.Array(DropEntry)),
  twin_item_proto_ids: Type.Optional(IdList),
  can_craft: Type.Optional(Type.Literal(1, { description: 'present as 1 when items of the prototype may be crafted' })),
};

/** Fields of one owned item (inventory.get, inventory.craft). */
const ownedFields = {
  item_id: Uint,
  item_ids: Type.Optional(Type.Array(Uint, { description: 'shrink = 1: every merged item, newest first' })),
  ts_owned: Uint,
  ts_can_trade: Type.Optional(Lock),
  ts_can_sell: Type.Optional(Lock),
  souvenir: Type.Optional(Type.String()),
  autograph: Type.Optional(Type.Object({ user_id: Uint, text: Type.Optional(Type.String()) }, Strict)),
  moneybox: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  seed: Type.Optional(Type.String()),
  uses: Type.Optional(Type.Object({ left: Uint, origin: Type.Optional(Uint) }, Strict)),
  previous_owners_user_ids: Type.Optional(Type.Array(Uint, { description: 'earlier owners, oldest first; each trade adds the giver' })),
  gift: Type.Optional(
    Type.Object(
      { from_user_id: Uint, to_user_id: Uint, ts: Uint },
      { ...Strict, description: 'present when the item last changed hands as a gift' },
    ),
  ),
};

/** The older Thing names of prototype fields (add_legacy = 1). */
const legacyProtoFields = {
  thing_prototype_id: Uint,
  thing_prototype_status: Uint,
  thing_type: Uint,
  quality: Uint,
  group: Type.Optional(Uint),
  sticker_group: Type.Optional(Uint),
  collection: Type.Integer({ minimum: -1, description: 'collection_id, -1 when none' }),
  twin_thing_prototype_id: Type.Optional(IdList),
  delete_price: Type.Optional(Type.Number()),
  can_be_upgraded: Type.Optional(Type.Literal(1)),
  buy_cost: Type.Optional(Type.Number()),
  key: Type.Optional(Uint),
  cases: Type.Optional(IdList),
};

/** The older Thing names of owned-item fields (add_legacy = 1). */
const legacyOwnedFields = {
  thing_id: Uint,
  user_id: Uint,
  owned_time: Uint,
  can_give: Type.Optional(Lock),
  can_sell: Type.Optional(Lock),
  uses_left: Type.Optional(Uint),
  uses_origin: Type.Optional(Uint),
  owners_history: Type.Optional(Type.Array(Uint, { description: 'previous_owners_user_ids' })),
};

/** A prototype in the full form (data.getItemProtos, data.searchItemProtos). */
export const ItemProto = Type.Object(protoFields, { ...Strict, $id: 'ItemProto' });
/** A prototype with the legacy Thing fields (add_legacy = 1). */
export const ItemProtoLegacy = Type.Object({ ...protoFields, ...legacyProtoFields }, { ...Strict, $id: 'ItemProtoLegacy' });
/** An owned item (inventory.get with add_legacy = 0, inventory.craft). */
export const Item = Type.Object({ ...ownedFields, ...protoFields }, { ...Strict, $id: 'Item' });
/** An owned item with the legacy Thing fields (inventory.get `things`). */
export const ItemLegacy = Type.Object(
  { ...ownedFields, ...protoFields, ...legacyProtoFields, ...legacyOwnedFields },
  { ...Strict, $id: 'ItemLegacy' },
);

export const CollectionRef = Type.Object({ collection_id: Uint, title: Type.String() }, { ...Strict, $id: 'Collection' });
/** A collection in legacy mode: `id` repeats collection_id. */
export const CollectionRefLegacy = Type.Object(
  { collection_id: Uint, id: Uint, title: Type.String() },
  { ...Strict, $id: 'CollectionLegacy' },
);

/** The item types a catalogue has when its world file lists none. */
export const DEFAULT_ITEM_TYPES = [
  { type: 0, title: 'Card' },
  { type: 1, title: 'Gift set' },
  { type: 2, title: 'Case' },
  { type: 3, title: 'Key' },
  { type: 4, title: 'Number generator' },
  { type: 5, title: 'Badge' },
  { type: 6, title: 'Pass' },
  { type: 7, title: 'Subscription' },
  { type: 8, title: 'Taunt' },
  { type: 9, title: 'Sticker' },
];
