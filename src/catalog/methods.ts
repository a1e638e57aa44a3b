import { Type, type TSchema } from '@sinclair/typebox';
import { SerializedData, SerializedList, defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Strict } from '../api/schema-types.js';
import { getCatalog, type Catalog, type KeptAnswers, type ProtoEntry } from './cache.js';

export type { KeptAnswers };
import { metadataJson } from './metadata.js';
import { protoJson } from './serialize.js';
import { flatText } from '../infra/text.js';
import { CollectionRef, ItemProto, ItemProtoLegacy } from './schemas.js';

export const MAX_PROTO_IDS = 50;
export const MAX_SEARCH_COUNT = 50;

/** `data` of both catalogue methods: legacy and plain prototypes, collections when add_metadata = 1. */
function protoListResult(description: string): TSchema {
  const collections = Type.Optional(Type.Array(CollectionRef, { description: 'add_metadata = 1: the collections the prototypes mention' }));
  return Type.Union(
    [
      Type.Object({ item_protos: Type.Array(ItemProto), collections }, { ...Strict, title: 'add_legacy = 0' }),
      Type.Object({ item_protos: Type.Array(ItemProtoLegacy), collections }, { ...Strict, title: 'add_legacy = 1' }),
    ],
    { description },
  );
}

/** JSON text of each prototype, made on first use and kept with the entry (a reloaded catalogue brings new ones). */
function protoText(entry: ProtoEntry, legacy: boolean): string {
  const { texts } = entry;
  return legacy ? (texts.legacy ??= flatText(protoJson(entry, true))) : (texts.plain ??= flatText(protoJson(entry, false)));
}

/** Answers longer than this are not kept; all kept answers of one snapshot, with the transport's encodings of them, stay under the total. */
const MAX_KEPT_ANSWER_CHARS = 256 * 1024;
const MAX_KEPT_CHARS = 16 * 1024 * 1024;
/** Parameters asked once and not yet again, remembered at most this many (the oldest forgotten first)... */
const MAX_ASKED_ONCE = 4096;
/** ...when they are no longer than this. */
const MAX_KEY_CHARS = 1024;

/**
 * Search answers are a function of the catalogue snapshot and the parameters alone, and the
 * same ones are asked again and again (a shop's pages): they are kept per snapshot (so the
 * transport encodes each once), and go with it when the catalogue changes. Only answers asked
 * for a second time are kept: pages asked once would fill the store with answers never given
 * again, pushing out those that are, and every one kept outlives the young generation of the
 * heap, so the collector copies it before dropping it.
 */
function keptAnswer(catalog: Catalog, key: string, answer: () => SerializedList): SerializedData | SerializedList {
  const kept = (catalog.texts.answers ??= { answers: new Map(), chars: 0, askedOnce: new Set() });
  const found = kept.answers.get(key);
  if (found !== undefined) return found;
  const list = answer();
  if (key.length > MAX_KEY_CHARS) return list;
  if (!kept.askedOnce.delete(key)) {
    kept.askedOnce.add(key);
    if (kept.askedOnce.size > MAX_ASKED_ONCE) kept.askedOnce.delete(kept.askedOnce.values().next().value!);
    // Given once: the transport joins it into the envelope in one go.
    return list;
  }
  const data = new SerializedData(`${list.open}${list.elements.join(',')}${list.close}`);
  if (data.json.length > MAX_KEPT_ANSWER_CHARS) return data;
  kept.answers.set(key, data);
  kept.chars += 2 * data.json.length;
  for (const [oldKey, old] of kept.answers) {
    if (kept.chars <= MAX_KEPT_CHARS) break;
    kept.answers.delete(oldKey);
    kept.chars -= 2 * old.json.length;
  }
  return data;
}

/** `{ item_protos, collections? }`: the prototypes' ready-made JSON texts between the rest. */
function protoList(catalog: Catalog, entries: ProtoEntry[], legacy: boolean, metadata: boolean): SerializedList {
  const texts = entries.map((entry) => protoText(entry, legacy));
  return new SerializedList(texts, '{"item_protos":[', metadata ? `],${metadataJson(catalog, entries, false)}}` : ']}');
}

const addMetadata = P.bit({ default: 1, description: 'also return the collections the prototypes mention' });
const addLegacy = P.bit({ default: 0, description: 'add the legacy Thing fields to every prototype' });

export const getItemProtos = defineMethod({
  name: 'data.getItemProtos',
  summary: 'Item prototypes by id',
  description: `The prototypes that exist, in the order requested (unknown ids are left out, repeated ids answered once). At most ${MAX_PROTO_IDS} ids (more: code 6).`,
  auth: 'none',
  params: P.object({
    item_proto_ids: P.uintSet({ tooMany: MAX_PROTO_IDS, description: 'prototype ids' }),
    add_metadata: addMetadata,
    add_legacy: addLegacy,
  }),
  result: protoListResult('item_protos in request order'),
  // Not kept like search pages: lists of any 50 of thousands of prototypes are rarely asked
  // twice, and made from the prototypes' kept texts they cost little more than a kept answer.
  handler: async ({ services }, params) => {
    const catalog = await getCatalog(services);
    const seen = new Set<number>();
    const entries: ProtoEntry[] = [];
    for (const id of params.item_proto_ids) {
      const entry = catalog.protos.get(id);
      if (entry !== undefined && !seen.has(id)) {
        seen.add(id);
        entries.push(entry);
      }
    }
    return protoList(catalog, entries, params.add_legacy === 1, params.add_metadata === 1);
  },
});

const filterSet = (description: string) => P.optional(P.uintSet({ description }));

export const searchItemProtos = defineMethod({
  name: 'data.searchItemProtos',
  summary: 'Search item prototypes',
  description:
    'Filters combine with AND across parameters and OR within one set; group_id matches monopoly_id or sticker_group_id. ' +
    `No filter returns the whole catalogue. Results in ascending item_proto_id, then offset and count (at most ${MAX_SEARCH_COUNT}, else code 6). ` +
    'collections lists the collections of the returned page.',
  auth: 'none',
  params: P.object({
    type: filterSet('item types'),
    quality_id: filterSet('classes'),
    collection_id: filterSet('collections'),
    group_id: filterSet('monopoly ids or sticker group ids'),
    add_metadata: addMetadata,
    add_legacy: addLegacy,
    offset: P.uint({ default: 0, description: 'matching prototypes to skip' }),
    count: P.uint({ default: 20, tooMany: MAX_SEARCH_COUNT, description: 'prototypes to return' }),
  }),
  result: protoListResult('item_protos in ascending item_proto_id'),
  handler: async ({ services }, params) => {
    const catalog = await getCatalog(services);
    const set = (ids: number[] | undefined) => (ids === undefined ? '-' : ids.join(','));
    const key = [
      'search',
      params.add_legacy,
      params.add_metadata,
      params.offset,
      params.count,
      set(params.type),
      set(params.quality_id),
      set(params.collection_id),
      set(params.group_id),
    ].join('|');
    return keptAnswer(catalog, key, () => {
      const types = params.type && new Set(params.type);
      const qualities = params.quality_id && new Set(params.quality_id);
      const collections = params.collection_id && new Set(params.collection_id);
      const groups = params.group_id && new Set(params.group_id);
      const page: ProtoEntry[] = [];
      let skip = params.offset;
      if (params.count > 0) {
        for (const entry of catalog.sorted) {
          if (types && !types.has(entry.type)) continue;
          if (qualities && !qualities.has(entry.qualityId)) continue;
          if (collections && (entry.collectionId === null || !collections.has(entry.collectionId))) continue;
          if (
            groups &&
            !(entry.monopolyId !== null && groups.has(entry.monopolyId)) &&
            !(entry.stickerGroupId !== null && groups.has(entry.stickerGroupId))
          )
            continue;
          if (skip > 0) {
            skip -= 1;
            continue;
          }
          page.push(entry);
          if (page.length === params.count) break;
        }
      }
      return protoList(catalog, page, params.add_legacy === 1, params.add_metadata === 1);
    });
  },
});
