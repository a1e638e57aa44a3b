import { Type, type TSchema } from '@sinclair/typebox';
import { Item, Num, NumList, Str, Thing, User, flag, obj, opt, type SdkRules } from './shapes.js';

const Collection = obj({ collection_id: Num, title: Str });
const Board = obj({ cards: Type.Record(Str, NumList), generator: Num, joke: Num }, 'board');
const Equipped = obj({ game: Type.Record(Str, Board) }, 'equipped tree');

const memo = new Map<string, TSchema>();

/** inventory.get's answer for the options asked: items or legacy things, the owner, equipped items. */
function inventoryAnswer(legacy: boolean, withUser: boolean, equipped: unknown): TSchema {
  const key = `${legacy}:${withUser}:${equipped}`;
  let schema = memo.get(key);
  if (!schema) {
    schema = obj({
      count: Num,
      collections: Type.Array(Collection),
      ...(legacy
        ? {
            things: Type.Array(Thing),
            thing_types: opt(Type.Array(obj({ id: Num, title: Str }))),
            qualities: opt(Type.Array(obj({ id: Num, title: Str, coeff_rent: Num }))),
          }
        : { items: Type.Array(Item) }),
      ...(withUser ? { user: User } : {}),
      ...(equipped === 'array' ? { item_ids_equipped: opt(NumList) } : {}),
      ...(equipped === 'tree' ? { equipped: opt(Equipped) } : {}),
    });
    memo.set(key, schema);
  }
  return schema;
}

export const inventoryRules: SdkRules = {
  'inventory.get': (params) => inventoryAnswer(flag(params, 'add_legacy', 1), flag(params, 'add_user', 0), params.add_equipped),
  'inventory.craft': () => obj({ item: Item }),
};
