import { Type } from '@sinclair/typebox';
import { Num, NumList, Thing, User, always, isVoid, obj, opt, type SdkRules } from './shapes.js';

/** A trade: both sides' items as Things; `reaction_time` null until the receiver reacts. */
const Trade = obj(
  {
    create_time: Num,
    reaction_time: Type.Union([Num, Type.Null()]),
    status: Num,
    trade_id: Num,
    things_from: Type.Array(Thing),
    things_to: Type.Array(Thing),
    user_id_from: Num,
    user_id_to: Num,
  },
  'trade',
);

/** A list of trades with the ids of the collections, classes and types they hold, and the users in them. */
const TradeList = obj({
  collections: NumList,
  qualities: NumList,
  item_ids_equipped: opt(NumList),
  thing_types: NumList,
  trades: Type.Array(Trade),
  user_data: Type.Array(User),
});

export const tradeRules: SdkRules = {
  'trades.create': always(obj({ trade_id: Num })),
  'trades.accept': isVoid,
  'trades.decline': isVoid,
  'trades.cancel': isVoid,
  'trades.revoke': isVoid,
  'trades.getIncome': always(TradeList),
  'trades.getOutbound': always(TradeList),
  'trades.history': always(TradeList),
  'trades.historyWith': always(TradeList),
};
