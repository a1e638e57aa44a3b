import { SerializedData, StreamedData, defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { authError } from '../api/errors.js';
import { type Catalog, getCatalog, metadataJson, ownedItemJson, type OwnedRow, type ProtoEntry, shrinkKey } from '../catalog/index.js';
import { loadUsers, requireUser } from '../users/index.js';
import { checkInventoryPrivacy } from './privacy.js';
import { equippedTree, listOwnedItems, loadEquipped, type ListOptions } from './queries.js';
import type { Services } from '../services.js';
import { InventoryResult } from './schemas.js';
import { encodedPart, ownedCounts, type ItemsPart } from './answer-cache.js';
import { inventoryAnswerBytes } from './answer-bytes.js';

interface Shown {
  row: OwnedRow;
  proto: ProtoEntry;
  /** shrink = 1: ids of every item merged into this one, newest first */
  mergedIds?: number[];
}

/**
 * shrink = 1: identical items (same prototype, same trade and sell locks, no per-item data)
 * become one, shown as the newest of them, at its place in the order.
 */
function shrink(shown: Shown[]): Shown[] {
  const groups = new Map<string, Shown>();
  const out: Shown[] = [];
  for (const entry of shown) {
    const key = shrinkKey(entry.row);
    const group = key === undefined ? undefined : groups.get(key);
    if (group) {
      (group.mergedIds ??= [group.row.item_id]).push(entry.row.item_id);
      continue;
    }
    const copy = { ...entry };
    if (key !== undefined) groups.set(key, copy);
    out.push(copy);
  }
  return out;
}

/**
 * The listed items and the inventory's total. A limited list reads the counts first: they
 * give the total when the list is cut short, and tell how to walk the inventory.
 */
async function listWithTotal(services: Services, ownerId: number, options: ListOptions): Promise<{ rows: OwnedRow[]; total: number }> {
  if (options.limit === undefined) {
    const rows = await listOwnedItems(services, ownerId, options);
    return { rows, total: rows.length };
  }
  const counts = await ownedCounts(services, ownerId);
  const rows = await listOwnedItems(services, ownerId, { ...options, stockOwned: counts.stock });
  const cut = rows.length >= options.limit;
  return { rows, total: cut ? (options.includeStock ? counts.owned : counts.owned - counts.stock) : rows.length };
}

interface ItemListOptions extends Omit<ListOptions, 'stockOwned'> {
  legacy: boolean;
  shrink: boolean;
}

/** Lists longer than this are written in slices... */
const SLICED_FROM_ITEMS = 1000;
/** ...of this many items (about 125 kB of text each: less in flight per answer, and the same speed). */
const SLICE_ITEMS = 250;

/** Long lists up to this many items are kept (as bytes, about 5 MB per 10,000 items in the legacy form). */
const KEPT_UP_TO_ITEMS = 15_000;

/**
 * A long list's item part as pieces, without the closing brace, when it is not kept: never
 * held whole in memory, where each request for a large inventory would otherwise leave
 * megabytes of text behind it for the collector.
 */
interface StreamedItemsPart {
  pieces: () => Iterable<string>;
}

/** A long list's item part, without the closing brace, written a slice of items at a time. */
function* longListPieces(catalog: Catalog, opening: string, list: Shown[], legacy: boolean): Generator<string> {
  yield opening;
  for (let start = 0; start < list.length; start += SLICE_ITEMS) {
    const slice = list.slice(start, start + SLICE_ITEMS).map(({ row, proto, mergedIds }) => ownedItemJson(proto, row, legacy, mergedIds));
    yield `${start === 0 ? '' : ','}${slice.join(',')}`;
  }
  yield `],${metadataJson(
    catalog,
    list.map((s) => s.proto),
    legacy,
  )}`;
}

/**
 * The answer's item part: `{"count":N,"things":[...],` + metadata, closed as the whole answer
 * when nothing else is asked for. From the answer cache when this list of this inventory is
 * there; kept there once built, a long list as its bytes. A long list not kept comes as pieces.
 */
async function itemsPart(services: Services, ownerId: number, options: ItemListOptions): Promise<ItemsPart | StreamedItemsPart> {
  const catalog = await getCatalog(services);
  const cache = services.inventory.answers;
  const key = `${options.includeStock ? 1 : 0}|${options.order}|${options.limit ?? ''}|${options.legacy ? 1 : 0}|${options.shrink ? 1 : 0}`;
  const cached = cache?.part(ownerId, catalog, key);
  if (cached !== undefined) return cached;

  const fill = cache?.startFill();
  const { rows, total } = await listWithTotal(services, ownerId, options);
  let shown: Shown[] = [];
  for (const row of rows) {
    const proto = catalog.protos.get(row.item_proto_id);
    // An item whose prototype was removed from the catalogue cannot be described.
    if (proto) shown.push({ row, proto });
  }
  if (options.shrink) shown = shrink(shown);
  // Items and metadata are assembled as JSON text (see ownedItemJson, metadataJson).
  const opening = `{"count":${total},"${options.legacy ? 'things' : 'items'}":[`;
  if (shown.length > SLICED_FROM_ITEMS) {
    const list = shown;
    const pieces = () => longListPieces(catalog, opening, list, options.legacy);
    if (fill === undefined || !cache!.mayStore(fill) || list.length > KEPT_UP_TO_ITEMS) return { pieces };
    const part = encodedPart(pieces(), '}');
    cache!.keep(fill, ownerId, catalog, key, part);
    return part;
  }
  const items = shown.map(({ row, proto, mergedIds }) => ownedItemJson(proto, row, options.legacy, mergedIds));
  const metadata = metadataJson(
    catalog,
    shown.map((s) => s.proto),
    options.legacy,
  );
  const part: ItemsPart = new SerializedData(`${opening}${items.join(',')}],${metadata}}`);
  if (fill !== undefined) cache!.keep(fill, ownerId, catalog, key, part);
  return part;
}

export const inventoryGet = defineMethod({
  name: 'inventory.get',
  summary: "A user's inventory",
  description:
    'Items newest first (order = time) or highest class first, then newest (order = quality); equal times fall to the higher item_id. ' +
    '`count` in the answer is the number of items the inventory holds under the same stock rule, whatever `count` limited the list to. ' +
    "include_stock and add_equipped apply to the caller's own inventory only. Without user_id the caller's inventory (a token is needed).",
  auth: 'optional',
  params: P.object({
    user_id: P.optional(P.idOrDomain({ description: 'id or domain of the owner; default: the caller' })),
    include_stock: P.bit({ default: 0, description: 'include stock-class items (own inventory only)' }),
    order: P.enum(['time', 'quality'], { default: 'time', description: 'time: newest first; quality: highest class first, then newest' }),
    count: P.optional(P.uint({ description: 'items to return; default: all' })),
    add_user: P.bit({ default: 0, description: 'also return the owner in the full form under user' }),
    add_user_info: P.bit({ default: 0, description: 'deprecated: as add_user, answered under user_info' }),
    add_equipped: P.optional(P.enum(['array', 'tree'], { description: 'own inventory only' })),
    add_legacy: P.bit({ default: 1, description: '1: `things` with the legacy Thing fields, thing_types and qualities' }),
    shrink: P.bit({ default: 0, description: 'merge identical items into one listing every merged id in item_ids' }),
  }),
  result: InventoryResult,
  errors: { 101: 'user does not exist or is globally blocked', 701: 'the privacy settings of the user forbid the request' },
  answerBytes: inventoryAnswerBytes,
  handler: async ({ services, caller }, params) => {
    const viewerId = caller?.userId;
    let ownerId: number;
    if (params.user_id === undefined) {
      if (viewerId === undefined) throw authError('authorization required: send an access_token or a user_id');
      ownerId = viewerId;
    } else if (params.user_id === viewerId) {
      ownerId = viewerId;
    } else {
      // A globally blocked account is shown to no one, as friends.get and users.get show it.
      ownerId = await requireUser(services, params.user_id, { active: true });
      await checkInventoryPrivacy(services, ownerId, viewerId);
    }
    const own = ownerId === viewerId;
    const list: ItemListOptions = {
      includeStock: own && params.include_stock === 1,
      order: params.order,
      limit: params.count,
      legacy: params.add_legacy === 1,
      shrink: params.shrink === 1,
    };
    const [items, equipped, users] = await Promise.all([
      itemsPart(services, ownerId, list),
      own && params.add_equipped ? loadEquipped(services, ownerId) : undefined,
      params.add_user === 1 || params.add_user_info === 1 ? loadUsers(services, [ownerId], { form: 'full', viewerId }) : undefined,
    ]);

    const rest: Record<string, unknown> = {};
    if (equipped && params.add_equipped === 'array') rest.item_ids_equipped = equipped.map((e) => e.item_id);
    if (equipped && params.add_equipped === 'tree') rest.equipped = equippedTree(equipped);
    const user = users?.get(ownerId);
    if (user && params.add_user === 1) rest.user = user;
    if (user && params.add_user_info === 1) rest.user_info = user;
    const restJson = JSON.stringify(rest);
    const restPart = restJson === '{}' ? '' : `,${restJson.slice(1, -1)}`;
    if (items instanceof SerializedData) return restPart === '' ? items : new SerializedData(`${items.json.slice(0, -1)}${restPart}}`);
    if ('pieces' in items)
      return new StreamedData(function* () {
        yield* items.pieces();
        yield `${restPart}}`;
      });
    // The last chunk is the closing brace.
    const { chunks } = items;
    return new StreamedData(() => (restPart === '' ? chunks : [...chunks.slice(0, -1), `${restPart}}`]));
  },
});
