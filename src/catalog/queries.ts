import type { Selectable } from 'kysely';
import type { Executor } from '../db/connection.js';
import type { CollectionsTable, ItemProtosTable, ItemTypesTable, QualitiesTable } from '../db/tables.js';

export type ProtoRow = Selectable<ItemProtosTable>;

/** Every prototype, in ascending item_proto_id. */
export function selectProtos(k: Executor): Promise<ProtoRow[]> {
  return k.selectFrom('item_protos').selectAll().orderBy('item_proto_id').execute();
}

export function selectCollections(k: Executor): Promise<Selectable<CollectionsTable>[]> {
  return k.selectFrom('collections').selectAll().execute();
}

export function selectQualities(k: Executor): Promise<Selectable<QualitiesTable>[]> {
  return k.selectFrom('qualities').selectAll().execute();
}

export function selectItemTypes(k: Executor): Promise<Selectable<ItemTypesTable>[]> {
  return k.selectFrom('item_types').selectAll().execute();
}

/** Of these ids, those of stored prototypes. */
export async function storedProtoIds(k: Executor, ids: number[]): Promise<number[]> {
  return (await k.selectFrom('item_protos').select('item_proto_id').where('item_proto_id', 'in', ids).execute()).map(
    (row) => row.item_proto_id,
  );
}
