import type { Selectable } from 'kysely';
import { ApiError, Code, badParam } from '../api/errors.js';
import type { PromocodesTable } from '../db/tables.js';
import { ownTransaction } from '../db/connection.js';
import type { Flag } from '../db/flags.js';
import { nowSeconds, type Services } from '../services.js';
import { MAX_PROMOCODE_ITEMS, PROMOCODE_PATTERN, normalisePromocode } from './codes.js';
import { storedProtoIds } from '../catalog/index.js';
import { countPromocodes, disableCode, insertPromocode, selectPromocodes } from './queries.js';

export interface PromocodeObject {
  code: string;
  item_proto_ids: number[];
  max_uses?: number;
  uses: number;
  ts_expires?: number;
  disabled: Flag;
  created_at: number;
}

export function promocodeObject(row: Selectable<PromocodesTable>): PromocodeObject {
  return {
    code: row.code,
    item_proto_ids: JSON.parse(row.item_proto_ids) as number[],
    ...(row.max_uses !== null ? { max_uses: Number(row.max_uses) } : {}),
    uses: Number(row.uses),
    ...(row.ts_expires !== null ? { ts_expires: Number(row.ts_expires) } : {}),
    disabled: row.disabled,
    created_at: Number(row.created_at),
  };
}

export interface NewPromocode {
  code: string;
  itemProtoIds: number[];
  maxUses?: number;
  tsExpires?: number;
}

/** Adds a code; 2 when it is malformed, exists already or names an unknown prototype. */
export async function createPromocode(
  services: Services,
  input: NewPromocode,
  inTransaction = ownTransaction(services.db),
): Promise<PromocodeObject> {
  const code = normalisePromocode(input.code);
  if (!PROMOCODE_PATTERN.test(code)) throw badParam('code', 'must be 4 to 64 letters, digits, - or _ (kept in upper case)');
  const ids = [...new Set(input.itemProtoIds)];
  if (ids.length === 0 || ids.length > MAX_PROMOCODE_ITEMS)
    throw badParam('item_proto_ids', `must name 1 to ${MAX_PROMOCODE_ITEMS} prototypes`);
  return inTransaction(async (trx) => {
    const known = await storedProtoIds(trx, ids);
    const unknown = ids.filter((id) => !known.includes(id));
    if (unknown.length > 0) throw badParam('item_proto_ids', `no prototype ${unknown.join(', ')}`);
    const inserted = await insertPromocode(trx, {
      code,
      itemProtoIds: input.itemProtoIds,
      maxUses: input.maxUses ?? null,
      tsExpires: input.tsExpires ?? null,
      createdAt: nowSeconds(services),
    });
    if (!inserted) throw badParam('code', `promo code ${code} exists already`);
    return promocodeObject(inserted);
  });
}

/** Stops a code from being redeemed; 2 when there is no such code. */
export async function disablePromocode(
  services: Services,
  typed: string,
  inTransaction = ownTransaction(services.db),
): Promise<PromocodeObject> {
  return inTransaction(async (trx) => {
    const row = await disableCode(trx, normalisePromocode(typed));
    if (!row) throw new ApiError(Code.BAD_PARAM, `parameter code: no promo code ${normalisePromocode(typed)}`);
    return promocodeObject(row);
  });
}

/** Codes, newest first. */
export async function listPromocodes(
  services: Services,
  offset: number,
  count: number,
): Promise<{ count: number; promocodes: PromocodeObject[] }> {
  const k = services.db.kysely;
  const [rows, total] = await Promise.all([selectPromocodes(k, offset, count), countPromocodes(k)]);
  return { count: total, promocodes: rows.map(promocodeObject) };
}
