import type { Catalog, ProtoEntry } from '../catalog/index.js';
import { toUnits } from './money.js';
import type { Listing } from './queries.js';

/** An item on the market as JSON text: its prototype (legacy form) and the given fields. */
export function marketThingJson(proto: ProtoEntry, fields: Record<string, number>): string {
  const extra = Object.entries(fields)
    .map(([key, value]) => `${JSON.stringify(key)}:${value}`)
    .join(',');
  return `{${proto.itemJson},${proto.thingJson},${extra}}`;
}

/** Listings as JSON text, those whose prototype the catalogue no longer has left out. */
export function listingsJson(catalog: Catalog, listings: Listing[], withTimes: boolean): string[] {
  return listings.flatMap((listing) => {
    const proto = catalog.protos.get(listing.item_proto_id);
    if (!proto) return [];
    const fields: Record<string, number> = { thing_id: Number(listing.item_id), price: toUnits(Number(listing.price)) };
    if (withTimes) {
      fields.ts_listed = Number(listing.ts_listed);
      fields.ts_expires = Number(listing.ts_expires);
    }
    return [marketThingJson(proto, fields)];
  });
}
