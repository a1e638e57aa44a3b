import type { Catalog, EntryTexts, ProtoEntry } from './cache.js';

export type { EntryTexts };

/** Kept with the catalogue itself: a reloaded catalogue starts afresh. */
function textsOf(catalog: Catalog): EntryTexts {
  return (catalog.texts.metadata ??= { collections: new Map(), legacyCollections: new Map(), thingTypes: new Map(), qualities: new Map() });
}

function collectionText(catalog: Catalog, texts: EntryTexts, id: number, legacy: boolean): string | null {
  const cache = legacy ? texts.legacyCollections : texts.collections;
  let text = cache.get(id);
  if (text === undefined) {
    const collection = catalog.collections.get(id);
    text = collection ? JSON.stringify(legacy ? { collection_id: id, id, title: collection.title } : { ...collection }) : null;
    cache.set(id, text);
  }
  return text;
}

function thingTypeText(catalog: Catalog, texts: EntryTexts, id: number): string {
  let text = texts.thingTypes.get(id);
  if (text === undefined) {
    text = JSON.stringify({ id, title: catalog.itemTypes.get(id) ?? `Type ${id}` });
    texts.thingTypes.set(id, text);
  }
  return text;
}

function qualityText(catalog: Catalog, texts: EntryTexts, id: number): string {
  let text = texts.qualities.get(id);
  if (text === undefined) {
    text = JSON.stringify(catalog.qualities.get(id) ?? { id, title: `Class ${id}`, coeff_rent: 1 });
    texts.qualities.set(id, text);
  }
  return text;
}

/** The distinct ids in ascending order; a typed array sorts numbers without calling back for each comparison. */
function distinctAscending(ids: Float64Array): number[] {
  ids.sort();
  const distinct: number[] = [];
  for (let i = 0; i < ids.length; i++) if (i === 0 || ids[i] !== ids[i - 1]) distinct.push(ids[i]!);
  return distinct;
}

/**
 * The collections of the shown prototypes (and in legacy mode their item types and classes),
 * in ascending id, as the JSON members `"collections":[...]` (`,"thing_types":[...],"qualities":[...]`).
 */
export function metadataJson(catalog: Catalog, protos: ProtoEntry[], legacy: boolean): string {
  const texts = textsOf(catalog);
  const collectionIds = new Float64Array(protos.length);
  let withCollection = 0;
  for (const proto of protos) if (proto.collectionId !== null) collectionIds[withCollection++] = proto.collectionId;
  const collections: string[] = [];
  for (const id of distinctAscending(collectionIds.subarray(0, withCollection))) {
    const text = collectionText(catalog, texts, id, legacy);
    if (text !== null) collections.push(text);
  }
  let json = `"collections":[${collections.join(',')}]`;
  if (!legacy) return json;
  const typeIds = distinctAscending(Float64Array.from(protos, (proto) => proto.type));
  const qualityIds = distinctAscending(Float64Array.from(protos, (proto) => proto.qualityId));
  json += `,"thing_types":[${typeIds.map((id) => thingTypeText(catalog, texts, id)).join(',')}]`;
  json += `,"qualities":[${qualityIds.map((id) => qualityText(catalog, texts, id)).join(',')}]`;
  return json;
}
