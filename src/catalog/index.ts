import type { Domain } from '../api/method.js';
import type { Core } from '../services.js';
import { CatalogCache } from './cache.js';
import { getItemProtos, searchItemProtos } from './methods.js';

export const catalogDomain: Domain = {
  name: 'catalog',
  methods: [getItemProtos, searchItemProtos],
};

/** The catalogue of this process, read again after every announced change. */
export type CatalogRuntime = CatalogCache;

export function startCatalog(core: Core): Promise<CatalogRuntime> {
  return CatalogCache.start(core);
}

// What the other folders use of this one.
export { announceCatalogChanged, craftKey, getCatalog } from './cache.js';
export type { Catalog, ProtoEntry } from './cache.js';
export { metadataJson } from './metadata.js';
export { loadProtoShorts } from './protos.js';
export type { ItemObject } from './protos.js';
export { storedProtoIds } from './queries.js';
export {
  CollectionRef,
  CollectionRefLegacy,
  DEFAULT_ITEM_TYPES,
  Item,
  ItemLegacy,
  ItemProtoLegacy,
  ItemProtoShort,
  ItemProtoStatus,
  Price,
} from './schemas.js';
export { CASE_TYPE, GIFT_SET_TYPE, ownedItemJson, shrinkKey } from './serialize.js';
export type { DropWeight, OwnedRow } from './serialize.js';
