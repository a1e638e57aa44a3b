import { Type } from '@sinclair/typebox';
import { Strict, Uint } from '../api/schema-types.js';
import { ItemLegacy } from '../catalog/index.js';
import { UserFull, UserInactive } from '../users/index.js';

export const TradeStatusValue = Type.Integer({
  minimum: 0,
  maximum: 5,
  description: '0 open, 1 accepted, 2 declined, 3 revoked, 4 invalid (an item is no longer available), 5 expired',
});

export const Trade = Type.Object(
  {
    trade_id: Uint,
    status: TradeStatusValue,
    create_time: Uint,
    reaction_time: Type.Union([Uint, Type.Null()], { description: 'when the trade stopped being open; null while open' }),
    user_id_from: Uint,
    user_id_to: Uint,
    things_from: Type.Array(ItemLegacy, { description: 'offered by user_id_from, as they were when the trade was made' }),
    things_to: Type.Array(ItemLegacy, { description: 'asked of user_id_to, as they were when the trade was made' }),
  },
  { ...Strict, $id: 'Trade' },
);

const Ids = (description: string) => Type.Array(Uint, { description });

/** A partner in a trade list: the full form, or for a globally blocked partner users.get's placeholder (inactive: global_ban). */
const Partner = Type.Union([UserFull, UserInactive]);

export const TradeList = Type.Object(
  {
    count: Type.Integer({ minimum: 0, description: 'trades the whole list holds' }),
    trades: Type.Array(Trade),
    users_data: Type.Array(Partner, {
      description: "the partners, full form; a globally blocked partner as users.get's placeholder (inactive: global_ban)",
    }),
    user_data: Type.Array(Partner, { description: 'the same list as users_data' }),
    collections: Ids('collection ids of the listed items'),
    qualities: Ids('class ids of the listed items'),
    thing_types: Ids('item types of the listed items'),
  },
  { ...Strict, $id: 'TradeList' },
);

export const TradeId = Type.Object({ trade_id: Uint }, Strict);

export const PreparedTrade = Type.Object(
  {
    items: Type.Array(Type.Object({ list: Type.Array(ItemLegacy) }, Strict), {
      minItems: 2,
      maxItems: 2,
      description: "first the caller's items that may change hands, then the partner's",
    }),
  },
  Strict,
);
