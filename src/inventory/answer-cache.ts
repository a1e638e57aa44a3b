import type { Core, Services } from '../services.js';
import type { Catalog } from '../catalog/index.js';
import { SerializedData } from '../api/method.js';
import { INVENTORY_CHANGED } from '../infra/channels.js';
import { countOwnedItems, type OwnedCounts } from './queries.js';
import {
  ChangeCache,
  announceChange,
  attachCache,
  forgetUsersOn,
  type AttachedCache,
  type CacheConditions,
} from '../infra/change-cache.js';

/** Item parts up to this long are kept as text (the transport keeps its encoding of the longer ones)... */
const MAX_TEXT_CHARS = 256 * 1024;
/** ...long lists as their bytes only, up to this many (a larger inventory is written each time). */
const MAX_ENCODED_BYTES = 8 * 1024 * 1024;
/** Bytes of every owner's parts together: room for a dozen whole inventories of 10,000 items. */
const MAX_TOTAL_BYTES = 64 * 1024 * 1024;
const MAX_OWNERS = 20_000;
/** Seconds an entry is used at most: bounds the harm of an announcement that never arrived. */
const ENTRY_LIFETIME = 60;

/** A long list's item part as UTF-8 bytes, in the pieces it was written in: sent as they are. */
export class EncodedPart {
  constructor(
    readonly chunks: readonly Buffer[],
    readonly length: number,
  ) {}
}

/**
 * The item part of an inventory.get answer (`{"count":N,"things":[...],` + metadata), as the
 * whole answer when nothing else is asked for: the same object is given to every such call.
 */
export type ItemsPart = SerializedData | EncodedPart;

/** One owner's item parts, per set of options, as built from one catalogue; and the owner's item counts. */
interface OwnerAnswers {
  catalog?: Catalog;
  parts: ReadonlyMap<string, ItemsPart>;
  counts?: OwnedCounts;
}

/** Bytes of the parts: text and the transport's encoding of it, or the encoded part alone. */
function bytesOf(entry: OwnerAnswers): number {
  let bytes = 0;
  for (const part of entry.parts.values()) bytes += part instanceof SerializedData ? 2 * part.json.length : part.length;
  return bytes;
}

/** JSON text pieces encoded one at a time (the text of each is garbage as soon as it is encoded), `close` after the last. */
export function encodedPart(pieces: Iterable<string>, close: string): EncodedPart {
  const chunks: Buffer[] = [];
  let length = 0;
  for (const piece of pieces) {
    const chunk = Buffer.from(piece);
    chunks.push(chunk);
    length += chunk.length;
  }
  const last = Buffer.from(close);
  chunks.push(last);
  return new EncodedPart(chunks, length + last.length);
}

/**
 * The item part of inventory.get answers (items, count and metadata: everything but the owner's
 * profile and equipped items), kept per owner and per set of options, with the owner's item
 * counts (what the answer's cost is estimated from; triggers on items keep them): inventories
 * are read far more often than they change. Whoever changes items (crafts, grants, revocations) announces
 * the owners on `inventory.changed` after committing; a world import announces `world.changed`;
 * an answer built from an earlier catalogue is not used. As with profiles, a read that raced a
 * change is not kept, and the cache is used only where every announcement reaches this process.
 */
export class InventoryAnswerCache extends ChangeCache<number, OwnerAnswers> {
  constructor(conditions: CacheConditions) {
    super(conditions, { lifetime: ENTRY_LIFETIME, maxEntries: MAX_OWNERS, weigh: bytesOf, maxWeight: MAX_TOTAL_BYTES });
  }

  part(ownerId: number, catalog: Catalog, options: string): ItemsPart | undefined {
    const entry = this.get(ownerId);
    return entry?.catalog === catalog ? entry.parts.get(options) : undefined;
  }

  /** Keeps a part built from reads that began at `fill`, unless something was invalidated meanwhile. */
  keep(fill: number, ownerId: number, catalog: Catalog, options: string, part: ItemsPart): void {
    if (part instanceof SerializedData ? part.json.length > MAX_TEXT_CHARS : part.length > MAX_ENCODED_BYTES) return;
    this.update(fill, ownerId, (cached) => {
      if (cached?.catalog !== catalog) return { catalog, parts: new Map([[options, part]]), counts: cached?.counts };
      return { ...cached, parts: new Map([...cached.parts, [options, part]]) };
    });
  }

  /** The owner's item counts (see countOwnedItems). */
  counts(ownerId: number): OwnedCounts | undefined {
    return this.get(ownerId)?.counts;
  }

  /** Keeps counts read since `fill` began, unless something was invalidated meanwhile. */
  keepCounts(fill: number, ownerId: number, counts: OwnedCounts): void {
    this.update(fill, ownerId, (cached) => ({ ...(cached ?? { parts: new Map() }), counts }));
  }
}

/** How many items a user owns, and of them stock class: from the answer cache, else read and kept there. */
export async function ownedCounts(services: Services, ownerId: number): Promise<OwnedCounts> {
  const cache = services.inventory.answers;
  const cached = cache?.counts(ownerId);
  if (cached !== undefined) return cached;
  const fill = cache?.startFill();
  const counts = await countOwnedItems(services, ownerId);
  if (fill !== undefined) cache!.keepCounts(fill, ownerId, counts);
  return counts;
}

/** Answers kept where every announcement reaches this process. */
export function attachInventoryAnswerCache(core: Core): Promise<AttachedCache<InventoryAnswerCache>> {
  return attachCache(core, {
    name: 'inventory.answers',
    create: (conditions) => new InventoryAnswerCache(conditions),
    listeners: (cache) => [forgetUsersOn(INVENTORY_CHANGED, cache)],
  });
}

/** After committing a change to users' items: this process forgets the owners at once, then every process is told. */
export function announceInventoriesChanged(services: Services, ownerIds: number[]): Promise<void> {
  const cache = services.inventory.answers;
  return announceChange(services, INVENTORY_CHANGED, { user_ids: ownerIds }, () => cache?.invalidate(ownerIds));
}
