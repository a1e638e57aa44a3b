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
  if (!isObject(value)) return undefined;
  // `{origin}` alone (a prototype's uses, as world files give them): every use is left.
  if (!isUint(value.left)) return isUint(value.origin) ? { left: value.origin, origin: value.origin } : undefined;
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
  /** `fields` as JSON text without its braces. */
  fieldsJson: string;
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
  let previousOwners: number[] | undefined;
  if (Array.isArray(data.previous_owners_user_ids)) {
    previousOwners = data.previous_owners_user_ids.filter(isUint);
    fields.previous_owners_user_ids = previousOwners;
  }
  if (isObject(data.gift) && isUint(data.gift.from_user_id) && isUint(data.gift.to_user_id) && isUint(data.gift.ts))
    fields.gift = { from_user_id: data.gift.from_user_id, to_user_id: data.gift.to_user_id, ts: data.gift.ts };
  const personal: Personal = { fields, fieldsJson: JSON.stringify(fields).slice(1, -1) };
  if (previousOwners) personal.previousOwners = previousOwners;
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

/** What an owned item's answer is made of. */
interface OwnedView {
  forms: ProtoForms;
  row: OwnedRow;
  personal: Personal | undefined;
  /** Its own uses, else its prototype's. */
  uses: Uses | undefined;
  /** shrink = 1: ids of every item merged into this one. */
  mergedIds: number[] | undefined;
}

/**
 * One member of an owned item's answer, left out where its getter gives undefined: any JSON
 * value, or an integer (written as it is); or a group of members that comes ready-made both
 * as an object and as its JSON text without the braces.
 */
type OwnedField =
  | { key: string; value: (item: OwnedView) => unknown }
  | { key: string; integer: (item: OwnedView) => number | undefined }
  | { object: (item: OwnedView) => ItemObject | undefined; json: (item: OwnedView) => string | undefined };

const tsCanTrade = ({ row }: OwnedView) => (row.ts_can_trade === 0 ? undefined : row.ts_can_trade);
const hasPersonalFields = (personal: Personal | undefined): personal is Personal => personal !== undefined && personal.fieldsJson !== '';

/** The members of an owned item in the full form, in their order in the answer. */
const OWNED_ITEM_FIELDS: readonly OwnedField[] = [
  { key: 'item_id', integer: ({ row }) => row.item_id },
  { key: 'item_ids', value: ({ mergedIds }) => mergedIds },
  { object: ({ forms }) => forms.item, json: ({ forms }) => forms.itemJson },
  { key: 'ts_owned', integer: ({ row }) => row.ts_owned },
  { key: 'ts_can_trade', integer: tsCanTrade },
  { key: 'ts_can_sell', integer: ({ personal }) => personal?.tsCanSell },
  {
    object: ({ personal }) => (hasPersonalFields(personal) ? personal.fields : undefined),
    json: ({ personal }) => (hasPersonalFields(personal) ? personal.fieldsJson : undefined),
  },
  { key: 'uses', value: ({ uses }) => uses },
];

/** The same followed by the legacy Thing names (add_legacy = 1). */
const LEGACY_OWNED_ITEM_FIELDS: readonly OwnedField[] = [
  ...OWNED_ITEM_FIELDS,
  { object: ({ forms }) => forms.thing, json: ({ forms }) => forms.thingJson },
  { key: 'thing_id', integer: ({ row }) => row.item_id },
  { key: 'user_id', integer: ({ row }) => row.user_id },
  { key: 'owned_time', integer: ({ row }) => row.ts_owned },
  { key: 'can_give', integer: tsCanTrade },
  { key: 'can_sell', integer: ({ personal }) => personal?.tsCanSell },
  { key: 'uses_left', integer: ({ uses }) => uses?.left },
  { key: 'uses_origin', integer: ({ uses }) => uses?.origin },
  { key: 'owners_history', value: ({ personal }) => personal?.previousOwners },
];

type OwnedWriter = (item: OwnedView) => string;

/**
 * A writer of the fields' JSON text, compiled once: one statement per field, so that each
 * getter is called from a site of its own (a loop over the table, calling every getter from one
 * site, measured several times slower over a large inventory).
 */
function compileWriter(fields: readonly OwnedField[]): OwnedWriter {
  const getters: ((item: OwnedView) => unknown)[] = [];
  const statements = fields.map((field, i) => {
    // Each member comes with its separator, '{' before the first one: one concatenation a member.
    const [first, next] =
      'json' in field
        ? ["'{'", "','"]
        : [JSON.stringify(`{${JSON.stringify(field.key)}:`), JSON.stringify(`,${JSON.stringify(field.key)}:`)];
    getters.push('json' in field ? field.json : 'integer' in field ? field.integer : field.value);
    const text = 'value' in field ? 'JSON.stringify(v)' : 'v';
    return `v = f[${i}](item); if (v !== undefined) json += (json.length === 0 ? ${first} : ${next}) + ${text};`;
  });
  const source = `return (item) => { let json = ''; let v; ${statements.join(' ')} return json.length === 0 ? '{}' : json + '}'; };`;
  return new Function('f', source)(getters) as OwnedWriter;
}

const writeOwnedItem = compileWriter(OWNED_ITEM_FIELDS);
const writeLegacyOwnedItem = compileWriter(LEGACY_OWNED_ITEM_FIELDS);

function ownedView(forms: ProtoForms, row: OwnedRow, mergedIds: number[] | undefined): OwnedView {
  const personal = row.data === null ? undefined : personalOf(row.data);
  return { forms, row, personal, uses: personal?.uses ?? forms.uses, mergedIds };
}

/** An owned item in the answer's form: its prototype's fields plus its own, and the legacy Thing names when asked. `mergedIds`: shrink = 1. */
export function ownedItemObject(forms: ProtoForms, row: OwnedRow, legacy: boolean, mergedIds?: number[]): ItemObject {
  const item = ownedView(forms, row, mergedIds);
  const object: ItemObject = {};
  for (const field of legacy ? LEGACY_OWNED_ITEM_FIELDS : OWNED_ITEM_FIELDS) {
    if ('object' in field) {
      const members = field.object(item);
      if (members !== undefined) Object.assign(object, members);
    } else {
      const value = 'integer' in field ? field.integer(item) : field.value(item);
      if (value !== undefined) object[field.key] = value;
    }
  }
  return object;
}

/**
 * `ownedItemObject(...)` as JSON text, written from the same fields. Answers list many items,
 * so the prototype's part is its ready-made text rather than serialised field by field.
 */
export function ownedItemJson(forms: ProtoForms, row: OwnedRow, legacy: boolean, mergedIds?: number[]): string {
  return (legacy ? writeLegacyOwnedItem : writeOwnedItem)(ownedView(forms, row, mergedIds));
}
