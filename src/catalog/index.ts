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

export { getCatalog, type Catalog, type ProtoEntry } from './cache.js';
export { ownedItemJson, type OwnedRow } from './serialize.js';
