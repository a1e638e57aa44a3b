import type { Services } from '../services.js';
import { getCatalog } from './cache.js';
import type { ItemObject } from './serialize.js';

export type { ItemObject } from './serialize.js';

/**
 * Prototypes in the short form (as gchat.get shows them):
 * `item_proto_id, item_proto_status?, type, image, title, description, quality_id`.
 * Unknown ids are absent from the map.
 */
export async function loadProtoShorts(services: Services, ids: number[]): Promise<Map<number, ItemObject>> {
  const out = new Map<number, ItemObject>();
  if (ids.length === 0) return out;
  const catalog = await getCatalog(services);
  for (const id of ids) {
    const entry = catalog.protos.get(id);
    if (entry && !out.has(id)) out.set(id, { ...entry.short });
  }
  return out;
}
