import type { Core, Services } from '../services.js';
import type { Catalog } from '../catalog/cache.js';
import type { SerializedData } from '../api/method.js';
import { INVENTORY_CHANGED } from '../infra/channels.js';
import {
  ChangeCache,
  announceChange,
  attachCache,
  forgetUsersOn,
  type AttachedCache,
  type CacheConditions,
} from '../infra/change-cache.js';

/** Answers longer than this are built each time (a whole large inventory would crowd out the rest). */
const MAX_ANSWER_CHARS = 256 * 1024;
const MAX_TOTAL_CHARS = 32 * 1024 * 1024;
const MAX_OWNERS = 20_000;
/** Seconds an entry is used at most: bounds the harm of an announcement that never arrived. */
const ENTRY_LIFETIME = 60;

/**
 * The item part of an inventory.get answer (`{"count":N,"things":[...],` + metadata), as the
 * whole answer when nothing else is asked for: the same object is given to every such call.
 */
export type ItemsPart = SerializedData;

/** One owner's item parts, per set of options, as built from one catalogue. */
interface OwnerAnswers {
  catalog: Catalog;
  parts: ReadonlyMap<string, ItemsPart>;
}

/** Characters of the answers, and of the transport's encodings of them. */
function charsOf(entry: OwnerAnswers): number {
  let chars = 0;
  for (const part of entry.parts.values()) chars += 2 * part.json.length;
  return chars;
}

/**
 * The item part of inventory.get answers (items, count and metadata: everything but the owner's
 * profile and equipped items), kept per owner and per set of options: inventories are read far
 * more often than they change. Whoever changes items (crafts, grants, revocations) announces
 * the owners on `inventory.changed` after committing; a world import announces `world.changed`;
 * an answer built from an earlier catalogue is not used. As with profiles, a read that raced a
 * change is not kept, and the cache is used only where every announcement reaches this process.
 */
export class InventoryAnswerCache extends ChangeCache<number, OwnerAnswers> {
  constructor(conditions: CacheConditions) {
    super(conditions, { lifetime: ENTRY_LIFETIME, maxEntries: MAX_OWNERS, weigh: charsOf, maxWeight: MAX_TOTAL_CHARS });
  }

  part(ownerId: number, catalog: Catalog, options: string): ItemsPart | undefined {
    const entry = this.get(ownerId);
    return entry?.catalog === catalog ? entry.parts.get(options) : undefined;
  }

  /** Keeps a part built from reads that began at `fill`, unless something was invalidated meanwhile. */
  keep(fill: number, ownerId: number, catalog: Catalog, options: string, part: ItemsPart): void {
    if (part.json.length > MAX_ANSWER_CHARS) return;
    this.update(fill, ownerId, (cached) => {
      if (cached?.catalog !== catalog) return { catalog, parts: new Map([[options, part]]) };
      return { catalog, parts: new Map([...cached.parts, [options, part]]) };
    });
  }
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
