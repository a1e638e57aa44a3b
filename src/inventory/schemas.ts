import { Type } from '@sinclair/typebox';
import { Strict, Uint } from '../api/schema-types.js';
import { CollectionRef, CollectionRefLegacy, Item, ItemLegacy } from '../catalog/index.js';
import { UserFull } from '../users/index.js';

/** Positions of equipped items: boards by name, then slots; badges on the profile. */
export const EquippedTree = Type.Object(
  {
    game: Type.Record(
      Type.String(),
      Type.Object(
        {
          cards: Type.Record(Type.String({ description: 'monopoly_id' }), Type.Array(Uint), {
            description: 'card ids by monopoly; {} when no card is equipped',
          }),
          generator: Type.Integer({ minimum: 0, description: 'item_id of the number generator; 0 when none is equipped' }),
          joke: Type.Integer({ minimum: 0, description: 'item_id of the taunt; 0 when none is equipped' }),
        },
        { ...Strict, description: 'every board carries all three slots' },
      ),
      { description: 'by board name' },
    ),
    profile: Type.Optional(Type.Object({ badges: Type.Array(Uint) }, Strict)),
  },
  { ...Strict, $id: 'EquippedTree' },
);

const common = {
  count: Type.Integer({
    minimum: 0,
    description: 'items the inventory holds (under the same stock rule), whatever count limited the list to',
  }),
  item_ids_equipped: Type.Optional(Type.Array(Uint, { description: 'add_equipped = array (own inventory only)' })),
  equipped: Type.Optional(EquippedTree),
  user: Type.Optional(UserFull),
  user_info: Type.Optional(UserFull),
};

export const InventoryResult = Type.Union([
  Type.Object({ ...common, items: Type.Array(Item), collections: Type.Array(CollectionRef) }, { ...Strict, title: 'add_legacy = 0' }),
  Type.Object(
    {
      ...common,
      things: Type.Array(ItemLegacy),
      collections: Type.Array(CollectionRefLegacy),
      thing_types: Type.Array(Type.Object({ id: Uint, title: Type.String() }, Strict)),
      qualities: Type.Array(Type.Object({ id: Uint, title: Type.String(), coeff_rent: Type.Number() }, Strict)),
    },
    { ...Strict, title: 'add_legacy = 1' },
  ),
]);

export const CraftResult = Type.Object({ item: Item }, Strict);

export const OpenResult = Type.Object(
  { items: Type.Array(Item, { description: 'the items received, in the add_legacy = 0 form' }) },
  Strict,
);
