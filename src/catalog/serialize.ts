import type { Selectable } from 'kysely';
import type { ItemProtosTable } from '../db/tables.js';

export type ItemObject = Record<string, unknown>;

/** The ready-made objects of one prototype; owned items add their own fields to these. */
export interface ProtoForms {
  /** Full form: the spec's Item fields of a prototype. */
  item: ItemObject;
  /** The legacy Thing names of the prototype fields (added when add_legacy = 1). */
  thing: ItemObject;
  /** Short form (gchat.get). */
  short: ItemObject;
  /** `item` as JSON text without its braces. */
  itemJson: string;
  /** `thing` as JSON text without its braces. */
  thingJson: string;
  /** Uses of a subscription prototype, for items that carry none of their own. */
  uses?: Uses;
  /** The drop list as published: what a case draws from (by weight) or a gift set gives. */
  drops?: readonly DropWeight[];
}

export interface DropWeight {
  item_proto_id: number;
  /** A positive integer: the entry's chance is its weight over the sum of the list's weights. */
  weight: number;
}

export const GIFT_SET_TYPE = 1;
export const CASE_TYPE = 2;
/** Weight of a drop entry that names none. */
export const DEFAULT_DROP_WEIGHT = 1;

interface StoredDrop extends DropWeight {
  is_secondary?: 0 | 1;
  is_rare?: 0 | 1;
}

/** The usable entries of a stored drop list; weights default to 1, and a list whose weights cannot be used is none. */
function dropEntries(type: number, value: unknown): StoredDrop[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const entries: StoredDrop[] = [];
  for (const d of value) {
    if (!isObject(d) || !isUint(d.item_proto_id)) continue;
    const weight = d.weight === undefined ? DEFAULT_DROP_WEIGHT : d.weight;
    if (type !== GIFT_SET_TYPE && (!Number.isSafeInteger(weight) || (weight as number) < 1)) return undefined;
    const entry: StoredDrop = { item_proto_id: d.item_proto_id, weight: weight as number };
    if (d.is_secondary === 0 || d.is_secondary === 1) entry.is_secondary = d.is_secondary;
    if (d.is_rare === 0 || d.is_rare === 1) entry.is_rare = d.is_rare;
    entries.push(entry);
  }
  return entries;
}

interface Uses {
  left: number;
  origin?: number;
}

function parseJson(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isUint = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isLock = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= -1;
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

function idList(text: string | null): number[] | undefined {
  const value = parseJson(text);
  return Array.isArray(value) ? value.filter(isUint) : undefined;
}

function readUses(value: unknown): Uses | undefined {
  if (isUint(value)) return { left: value, origin: value };
  if (!isObject(value) || !isUint(value.left)) return undefined;
  return isUint(value.origin) ? { left: value.left, origin: value.origin } : { left: value.left };
}

/** Prototype objects are shared by every answer that shows them: nothing may change them. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** Builds every form of a prototype from its row, leaving out fields that have no value. */
export function protoForms(row: Selectable<ItemProtosTable>): ProtoForms {
  const short: ItemObject = { item_proto_id: row.item_proto_id };
  if (row.item_proto_status !== null) short.item_proto_status = row.item_proto_status;
  short.type = row.type;
  short.image = row.image ?? '';
  short.title = row.title;
  short.description = row.description;
  short.quality_id = row.quality_id;

  const item: ItemObject = { item_proto_id: row.item_proto_id };
  if (row.item_proto_status !== null) item.item_proto_status = row.item_proto_status;
  item.type = row.type;
  // Clients require a string: a prototype without a picture has an empty one.
  item.image = row.image ?? '';
  item.title = row.title;
  item.description = row.description;
  item.quality_id = row.quality_id;
  if (row.collection_id !== null) item.collection_id = row.collection_id;
  if (row.monopoly_id !== null) item.monopoly_id = row.monopoly_id;
  if (row.sticker_group_id !== null) item.sticker_group_id = row.sticker_group_id;
  const storedPrices = parseJson(row.prices);
  let prices: { buy?: number; quick_sell?: number } | undefined;
  if (isObject(storedPrices)) {
    prices = {};
    if (isNumber(storedPrices.buy)) prices.buy = storedPrices.buy;
    if (isNumber(storedPrices.quick_sell)) prices.quick_sell = storedPrices.quick_sell;
    item.prices = prices;
  }
  if (row.key_item_proto_id !== null) item.key_item_proto_id = row.key_item_proto_id;
  const cases = idList(row.case_item_proto_ids);
  if (cases) item.case_item_proto_ids = cases;
  const drops = dropEntries(row.type, parseJson(row.drop_list));
  if (drops) {
    const total = drops.reduce((sum, d) => sum + d.weight, 0);
    const gift = row.type === GIFT_SET_TYPE;
    item.drop = drops.map((d) => {
      const entry: ItemObject = { item_proto_id: d.item_proto_id };
      if (d.is_secondary !== undefined) entry.is_secondary = d.is_secondary;
      if (d.is_rare !== undefined) entry.is_rare = d.is_rare;
      // A gift set gives every entry; a case one entry, drawn by weight.
      if (!gift) entry.weight = d.weight;
      entry.chance = gift ? 1 : d.weight / total;
      return entry;
    });
  }
  const twins = idList(row.twin_item_proto_ids);
  if (twins) item.twin_item_proto_ids = twins;
  if (row.can_craft === 1) item.can_craft = 1;

  const extra = parseJson(row.extra);
  const extras = isObject(extra) ? extra : {};
  const thing: ItemObject = {
    thing_prototype_id: row.item_proto_id,
    thing_prototype_status: row.item_proto_status ?? 0,
    thing_type: row.type,
    quality: row.quality_id,
  };
  if (row.monopoly_id !== null) thing.group = row.monopoly_id;
  if (row.sticker_group_id !== null) thing.sticker_group = row.sticker_group_id;
  thing.collection = row.collection_id ?? -1;
  if (twins) thing.twin_thing_prototype_id = twins;
  if (prices?.quick_sell !== undefined) thing.delete_price = prices.quick_sell;
  if (row.can_craft === 1) thing.can_be_upgraded = 1;
  const buyCost = isNumber(extras.buy_cost) ? extras.buy_cost : prices?.buy;
  if (buyCost !== undefined) thing.buy_cost = buyCost;
  if (row.key_item_proto_id !== null) thing.key = row.key_item_proto_id;
  if (cases) thing.cases = cases;

  const forms: ProtoForms = {
    item: deepFreeze(item),
    thing: deepFreeze(thing),
    short: deepFreeze(short),
    itemJson: JSON.stringify(item).slice(1, -1),
    thingJson: JSON.stringify(thing).slice(1, -1),
  };
  const uses = readUses(extras.uses);
  if (uses) forms.uses = uses;
  if (drops) forms.drops = drops.map((d) => ({ item_proto_id: d.item_proto_id, weight: d.weight }));
  return forms;
}

/** A prototype in the full form as JSON text, with the legacy Thing fields when asked. */
export function protoJson(forms: ProtoForms, legacy: boolean): string {
  return legacy ? `{${forms.itemJson},${forms.thingJson}}` : `{${forms.itemJson}}`;
}

/** The columns of an owned item that its answer shows. */
export interface OwnedRow {
  item_id: number;
  user_id: number;
  item_proto_id: number;
  ts_owned: number;
  ts_can_trade: number;
  /** JSON object of per-item data */
  data: string | null;
}

/** Per-item data the answer shows, read from the `data` column. */
interface Personal {
  fields: ItemObject;
  uses?: Uses;
  tsCanSell?: number;
  /** Earlier owners, oldest first (trades append the giver). */
  previousOwners?: number[];
}

/**
 * Keys of an item's `data` that make it unlike any other: such items are never merged
 * (shrink = 1). `previous_owners_user_ids` and `gift` are the provenance trades record.
 */
const PERSONAL_KEYS = ['souvenir', 'autograph', 'moneybox', 'seed', 'uses', 'previous_owners_user_ids', 'gift'] as const;

function personalOf(text: string | null): Personal | undefined {
  const data = parseJson(text);
  if (!isObject(data)) return undefined;
  const fields: ItemObject = {};
  if (typeof data.souvenir === 'string') fields.souvenir = data.souvenir;
  if (isObject(data.autograph) && isUint(data.autograph.user_id)) {
    const autograph: ItemObject = { user_id: data.autograph.user_id };
    if (typeof data.autograph.text === 'string') autograph.text = data.autograph.text;
    fields.autograph = autograph;
  }
  if (isObject(data.moneybox)) fields.moneybox = data.moneybox;
  if (typeof data.seed === 'string') fields.seed = data.seed;
  const personal: Personal = { fields };
  if (Array.isArray(data.previous_owners_user_ids)) {
    const owners = data.previous_owners_user_ids.filter(isUint);
    fields.previous_owners_user_ids = owners;
    personal.previousOwners = owners;
  }
  if (isObject(data.gift) && isUint(data.gift.from_user_id) && isUint(data.gift.to_user_id) && isUint(data.gift.ts))
    fields.gift = { from_user_id: data.gift.from_user_id, to_user_id: data.gift.to_user_id, ts: data.gift.ts };
  const uses = readUses(data.uses);
  if (uses) personal.uses = uses;
  if (isLock(data.ts_can_sell)) personal.tsCanSell = data.ts_can_sell;
  return personal;
}

/**
 * Whether an item may be merged with identical ones under shrink = 1, and the key that
 * identifies its group: same prototype, same trade and sell locks, no per-item data.
 */
export function shrinkKey(row: OwnedRow): string | undefined {
  const data = parseJson(row.data);
  if (isObject(data) && PERSONAL_KEYS.some((key) => data[key] !== undefined)) return undefined;
  const sell = isObject(data) && isLock(data.ts_can_sell) ? data.ts_can_sell : 0;
  return `${row.item_proto_id}:${row.ts_can_trade}:${sell}`;
}

/**
 * An owned item as JSON text: its prototype's fields plus its own, and the legacy Thing
 * names when asked. Answers list many items, so they are assembled from the prototype's
 * ready-made text rather than serialised field by field. `mergedIds`: shrink = 1.
 */
export function ownedItemJson(forms: ProtoForms, row: OwnedRow, legacy: boolean, mergedIds?: number[]): string {
  let json = `{"item_id":${row.item_id},`;
  if (mergedIds) json += `"item_ids":[${mergedIds.join(',')}],`;
  json += `${forms.itemJson},"ts_owned":${row.ts_owned}`;
  if (row.ts_can_trade !== 0) json += `,"ts_can_trade":${row.ts_can_trade}`;
  const personal = row.data === null ? undefined : personalOf(row.data);
  if (personal?.tsCanSell !== undefined) json += `,"ts_can_sell":${personal.tsCanSell}`;
  if (personal) {
    const fields = JSON.stringify(personal.fields);
    if (fields !== '{}') json += `,${fields.slice(1, -1)}`;
  }
  const uses = personal?.uses ?? forms.uses;
  if (uses) json += `,"uses":${JSON.stringify(uses)}`;
  if (legacy) {
    json += `,${forms.thingJson},"thing_id":${row.item_id},"user_id":${row.user_id},"owned_time":${row.ts_owned}`;
    if (row.ts_can_trade !== 0) json += `,"can_give":${row.ts_can_trade}`;
    if (personal?.tsCanSell !== undefined) json += `,"can_sell":${personal.tsCanSell}`;
    if (uses) {
      json += `,"uses_left":${uses.left}`;
      if (uses.origin !== undefined) json += `,"uses_origin":${uses.origin}`;
    }
    if (personal?.previousOwners) json += `,"owners_history":${JSON.stringify(personal.previousOwners)}`;
  }
  return `${json}}`;
}
