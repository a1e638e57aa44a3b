import { sql, type Selectable } from 'kysely';
import type { Executor } from '../db/connection.js';
import type { PromocodesTable } from '../db/tables.js';
import type { OwnedRow } from '../catalog/index.js';

/** Records a user's use of a code; false when that user has used it already. */
export async function insertUse(trx: Executor, code: string, userId: number, now: number): Promise<boolean> {
  const use = await trx
    .insertInto('promocode_uses')
    .values({ code, user_id: userId, ts: now, item_ids: '[]' })
    .onConflict((oc) => oc.columns(['code', 'user_id']).doNothing())
    .executeTakeFirst();
  return Number(use.numInsertedOrUpdatedRows ?? 0) === 1;
}

/**
 * Counts one more use of an enabled, unexpired code with uses left, in one conditional
 * update; its prototypes, or undefined when the code is none of these.
 */
export async function countUse(trx: Executor, code: string, now: number): Promise<{ item_proto_ids: string; money: number } | undefined> {
  return trx
    .updateTable('promocodes')
    .set({ uses: sql`uses + 1` })
    .where('code', '=', code)
    .where('disabled', '=', 0)
    .where((eb) => eb.or([eb('max_uses', 'is', null), eb('uses', '<', eb.ref('max_uses'))]))
    .where((eb) => eb.or([eb('ts_expires', 'is', null), eb('ts_expires', '>', now)]))
    .returning(['item_proto_ids', 'money'])
    .executeTakeFirst();
}

export interface GrantedProto {
  id: number;
  type: number;
  qualityId: number;
}

/** New owned items of these prototypes for the user, tradable at once; their rows, in insertion order of the database. */
export async function insertGrantedItems(trx: Executor, userId: number, protos: GrantedProto[], now: number): Promise<OwnedRow[]> {
  return trx
    .insertInto('items')
    .values(
      protos.map((p) => ({
        user_id: userId,
        item_proto_id: p.id,
        type: p.type,
        quality_id: p.qualityId,
        ts_owned: now,
        ts_can_trade: 0,
        state: 'owned' as const,
      })),
    )
    .returning(['item_id', 'user_id', 'item_proto_id', 'ts_owned', 'ts_can_trade', 'data'])
    .execute();
}

/** Keeps the items a use granted with the use. */
export async function setUseItems(trx: Executor, code: string, userId: number, itemIds: number[]): Promise<void> {
  await trx
    .updateTable('promocode_uses')
    .set({ item_ids: JSON.stringify(itemIds) })
    .where('code', '=', code)
    .where('user_id', '=', userId)
    .execute();
}

export interface PromocodeInsert {
  code: string;
  itemProtoIds: number[];
  maxUses: number | null;
  tsExpires: number | null;
  createdAt: number;
  /** kopecks */
  money: number;
}

/** Adds a code; undefined when one with its text exists. */
export async function insertPromocode(trx: Executor, input: PromocodeInsert): Promise<Selectable<PromocodesTable> | undefined> {
  return trx
    .insertInto('promocodes')
    .values({
      code: input.code,
      item_proto_ids: JSON.stringify(input.itemProtoIds),
      max_uses: input.maxUses,
      ts_expires: input.tsExpires,
      created_at: input.createdAt,
      money: input.money,
    })
    .onConflict((oc) => oc.column('code').doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Disables a code; undefined when there is none. */
export async function disableCode(trx: Executor, code: string): Promise<Selectable<PromocodesTable> | undefined> {
  return trx.updateTable('promocodes').set({ disabled: 1 }).where('code', '=', code).returningAll().executeTakeFirst();
}

/** A page of codes, newest first. */
export async function selectPromocodes(db: Executor, offset: number, count: number): Promise<Selectable<PromocodesTable>[]> {
  return db.selectFrom('promocodes').selectAll().orderBy('created_at', 'desc').orderBy('code').offset(offset).limit(count).execute();
}

export async function countPromocodes(db: Executor): Promise<number> {
  const total = await db
    .selectFrom('promocodes')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(total.n);
}
