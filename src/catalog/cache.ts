import type { SerializedData } from '../api/method.js';
import type { Core, Services } from '../services.js';
import type { Database } from '../db/connection.js';
import { CATALOG_CHANGED } from '../infra/channels.js';
import { ChangeCache, announceChange, attachCache, listen, type CacheConditions } from '../infra/change-cache.js';
import { DEFAULT_ITEM_TYPES } from './schemas.js';
import { protoForms, type ProtoForms } from './serialize.js';
import { selectCollections, selectItemTypes, selectProtos, selectQualities, type ProtoRow } from './queries.js';

/** JSON text of each metadata entry an answer may list, by id: built once per catalogue. */
export interface EntryTexts {
  collections: Map<number, string | null>;
  legacyCollections: Map<number, string | null>;
  thingTypes: Map<number, string>;
  qualities: Map<number, string>;
}

/** The search answers given from one catalogue snapshot, oldest first. */
export interface KeptAnswers {
  answers: Map<string, SerializedData>;
  chars: number;
  /** Keys of answers given once since this snapshot: an answer is kept when its key comes again. */
  askedOnce: Set<string>;
}

/** One prototype as the catalogue keeps it: the columns filters need plus its ready-made objects. */
export interface ProtoEntry extends ProtoForms {
  id: number;
  type: number;
  qualityId: number;
  collectionId: number | null;
  monopolyId: number | null;
  stickerGroupId: number | null;
  canCraft: boolean;
  craftResult: boolean;
  /** The key a case opens with. */
  keyItemProtoId: number | null;
  /** Its JSON texts, made on first use. */
  texts: { plain?: string; legacy?: string };
}

export interface CollectionEntry {
  collection_id: number;
  title: string;
}

export interface QualityEntry {
  id: number;
  title: string;
  coeff_rent: number;
}

/** The whole catalogue in memory: small, read on every item answer, changed rarely. */
export interface Catalog {
  protos: Map<number, ProtoEntry>;
  /** Every prototype in ascending item_proto_id. */
  sorted: ProtoEntry[];
  collections: Map<number, CollectionEntry>;
  qualities: Map<number, QualityEntry>;
  itemTypes: Map<number, string>;
  /** Prototypes a craft may produce, by `${type}:${quality_id}`. */
  craftResults: Map<string, number[]>;
  /** Texts made from this snapshot on first use; they go with it when the catalogue changes. */
  texts: { metadata?: EntryTexts; answers?: KeptAnswers };
}

export const craftKey = (type: number, qualityId: number) => `${type}:${qualityId}`;

/** Seconds the catalogue is used at most: bounds the harm of an announcement that never arrived. */
const CATALOG_LIFETIME = 300;
/** The one key of the catalogue cache. */
const WHOLE = 0;

/** The catalogue snapshot, kept under the one policy of every cache. */
class KeptCatalog extends ChangeCache<typeof WHOLE, Catalog> {
  constructor(conditions: CacheConditions) {
    super(conditions, { lifetime: CATALOG_LIFETIME, maxEntries: 1 });
  }
}

/**
 * This process's catalogue: kept where every announcement reaches this process and loaded
 * again on first use after a change (`catalog.changed`, a world import, a lost bus); read from
 * the database on every use elsewhere. Readers that ask while it loads share the load.
 */
export class CatalogCache {
  private loading?: { fill: number; catalog: Promise<Catalog> };

  private constructor(
    private readonly db: Database,
    private readonly kept: KeptCatalog | undefined,
    readonly stop: () => void,
  ) {}

  static async start(core: Core): Promise<CatalogCache> {
    const attached = await attachCache(core, {
      name: 'catalog',
      create: (conditions) => new KeptCatalog(conditions),
      listeners: (cache) => [listen(CATALOG_CHANGED, () => cache.clear())],
    });
    return new CatalogCache(core.db, attached.cache, attached.detach);
  }

  /** Forgets the kept catalogue in this process; the next reader loads it again. */
  forget(): void {
    this.kept?.clear();
  }

  get(): Promise<Catalog> {
    const kept = this.kept;
    if (!kept) return loadCatalog(this.db);
    const catalog = kept.get(WHOLE);
    if (catalog) return Promise.resolve(catalog);
    const fill = kept.startFill();
    if (this.loading?.fill === fill) return this.loading.catalog;
    const loading = loadCatalog(this.db).then(
      (loaded) => {
        kept.store(fill, WHOLE, loaded);
        if (this.loading?.catalog === loading) this.loading = undefined;
        return loaded;
      },
      (error: unknown) => {
        if (this.loading?.catalog === loading) this.loading = undefined;
        throw error;
      },
    );
    this.loading = { fill, catalog: loading };
    return loading;
  }
}

/** The catalogue, loaded from the database on first use after a change. */
export function getCatalog(services: Pick<Services, 'catalog'>): Promise<Catalog> {
  return services.catalog.get();
}

/**
 * After committing a change to the catalogue tables (item_protos, collections, qualities,
 * item_types): this process forgets its snapshot at once, then every process is told.
 */
export function announceCatalogChanged(services: Pick<Services, 'bus' | 'log' | 'catalog'>): Promise<void> {
  return announceChange(services, CATALOG_CHANGED, {}, () => services.catalog.forget());
}

async function loadCatalog(db: Database): Promise<Catalog> {
  const k = db.kysely;
  const [protoRows, collectionRows, qualityRows, typeRows] = await Promise.all([
    selectProtos(k),
    selectCollections(k),
    selectQualities(k),
    selectItemTypes(k),
  ]);
  const sorted = protoRows.map(protoEntry);
  const craftResults = new Map<string, number[]>();
  for (const entry of sorted) {
    if (!entry.craftResult) continue;
    const key = craftKey(entry.type, entry.qualityId);
    const list = craftResults.get(key);
    if (list) list.push(entry.id);
    else craftResults.set(key, [entry.id]);
  }
  const itemTypes = new Map<number, string>(DEFAULT_ITEM_TYPES.map((t) => [t.type, t.title]));
  for (const row of typeRows) itemTypes.set(row.type, row.title);
  return {
    protos: new Map(sorted.map((entry) => [entry.id, entry])),
    sorted,
    collections: new Map(collectionRows.map((c) => [c.collection_id, { collection_id: c.collection_id, title: c.title }])),
    qualities: new Map(qualityRows.map((q) => [q.quality_id, { id: q.quality_id, title: q.title, coeff_rent: q.coeff_rent }])),
    itemTypes,
    craftResults,
    texts: {},
  };
}

function protoEntry(row: ProtoRow): ProtoEntry {
  return {
    id: row.item_proto_id,
    type: row.type,
    qualityId: row.quality_id,
    collectionId: row.collection_id,
    monopolyId: row.monopoly_id,
    stickerGroupId: row.sticker_group_id,
    canCraft: row.can_craft === 1,
    craftResult: row.craft_result === 1,
    keyItemProtoId: row.key_item_proto_id,
    texts: {},
    ...protoForms(row),
  };
}
