import type { Selectable } from 'kysely';
import type { Services } from '../services.js';
import { WORLD_CHANGED } from '../infra/bus.js';
import type { ItemProtosTable } from '../db/tables.js';
import { DEFAULT_ITEM_TYPES } from '../world/schema.js';
import { protoForms, type ProtoForms } from './serialize.js';

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
}

interface Holder {
  catalog?: Catalog;
  loading?: Promise<Catalog>;
  /** Bumped on every invalidation so a load that started earlier is not kept. */
  generation: number;
  unsubscribe: (() => void)[];
}

const STATE_KEY = 'catalog';
/** Bus channels after which the catalogue is read again. */
export const CATALOG_CHANNELS = ['catalog.changed', WORLD_CHANGED] as const;

export const craftKey = (type: number, qualityId: number) => `${type}:${qualityId}`;

function holderOf(services: Services): Holder {
  let holder = services.state.get(STATE_KEY) as Holder | undefined;
  if (!holder) {
    const created: Holder = { generation: 0, unsubscribe: [] };
    for (const channel of CATALOG_CHANNELS) created.unsubscribe.push(services.bus.subscribe(channel, () => invalidateCatalog(services)));
    services.state.set(STATE_KEY, created);
    holder = created;
  }
  return holder;
}

/** Starts listening for catalogue changes (the domain's start hook). */
export function watchCatalog(services: Services): void {
  holderOf(services);
}

export function unwatchCatalog(services: Services): void {
  const holder = services.state.get(STATE_KEY) as Holder | undefined;
  if (!holder) return;
  for (const stop of holder.unsubscribe) stop();
  services.state.delete(STATE_KEY);
}

/** Drops the cached catalogue; the next reader loads it again. */
export function invalidateCatalog(services: Services): void {
  const holder = holderOf(services);
  holder.generation += 1;
  holder.catalog = undefined;
  holder.loading = undefined;
}

/** The catalogue, loaded from the database on first use after a change. */
export function getCatalog(services: Services): Promise<Catalog> {
  const holder = holderOf(services);
  if (holder.catalog) return Promise.resolve(holder.catalog);
  if (holder.loading) return holder.loading;
  const generation = holder.generation;
  const loading = loadCatalog(services).then(
    (catalog) => {
      if (holder.generation === generation) {
        holder.catalog = catalog;
        holder.loading = undefined;
      }
      return catalog;
    },
    (error: unknown) => {
      if (holder.loading === loading) holder.loading = undefined;
      throw error;
    },
  );
  holder.loading = loading;
  return loading;
}

async function loadCatalog(services: Services): Promise<Catalog> {
  const k = services.db.kysely;
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
    ...protoForms(row),
  };
}
