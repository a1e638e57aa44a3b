import type { Selectable } from 'kysely';
import type { Core, Services } from '../services.js';
import type { Database } from '../db/connection.js';
import { WORLD_CHANGED } from '../infra/bus.js';
import type { ItemProtosTable } from '../db/tables.js';
import { DEFAULT_ITEM_TYPES } from '../world/schema.js';
import { protoForms, type ProtoForms } from './serialize.js';
import type { EntryTexts } from './metadata.js';
import type { KeptAnswers } from './methods.js';

export type ProtoRow = Selectable<ItemProtosTable>;

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

/** Bus channels after which the catalogue is read again. */
export const CATALOG_CHANNELS = ['catalog.changed', WORLD_CHANGED] as const;

export const craftKey = (type: number, qualityId: number) => `${type}:${qualityId}`;

/** This process's catalogue: loaded from the database on first use after a change. */
export class CatalogCache {
  private catalog?: Catalog;
  private loading?: Promise<Catalog>;
  /** Bumped on every invalidation so a load that started earlier is not kept. */
  private generation = 0;
  private readonly unsubscribe: (() => void)[];

  constructor(private readonly core: Pick<Core, 'db' | 'bus'>) {
    this.unsubscribe = CATALOG_CHANNELS.map((channel) => core.bus.subscribe(channel, () => this.invalidate()));
  }

  /** Drops the cached catalogue; the next reader loads it again. */
  invalidate(): void {
    this.generation += 1;
    this.catalog = undefined;
    this.loading = undefined;
  }

  get(): Promise<Catalog> {
    if (this.catalog) return Promise.resolve(this.catalog);
    if (this.loading) return this.loading;
    const generation = this.generation;
    const loading = loadCatalog(this.core.db).then(
      (catalog) => {
        if (this.generation === generation) {
          this.catalog = catalog;
          this.loading = undefined;
        }
        return catalog;
      },
      (error: unknown) => {
        if (this.loading === loading) this.loading = undefined;
        throw error;
      },
    );
    this.loading = loading;
    return loading;
  }

  stop(): void {
    for (const stop of this.unsubscribe.splice(0)) stop();
  }
}

/** The catalogue, loaded from the database on first use after a change. */
export function getCatalog(services: Pick<Services, 'catalog'>): Promise<Catalog> {
  return services.catalog.get();
}

async function loadCatalog(db: Database): Promise<Catalog> {
  const k = db.kysely;
  const [protoRows, collectionRows, qualityRows, typeRows] = await Promise.all([
    k.selectFrom('item_protos').selectAll().orderBy('item_proto_id').execute(),
    k.selectFrom('collections').selectAll().execute(),
    k.selectFrom('qualities').selectAll().execute(),
    k.selectFrom('item_types').selectAll().execute(),
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
