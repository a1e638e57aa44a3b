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
  /** Units of the currency each redemption pays (absent: none). */
  money?: number;
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
    ...(Number(row.money) > 0 ? { money: Number(row.money) / KOPECKS_PER_UNIT } : {}),
  };
}

/** Kopecks in a unit of the currency (the wallet's MINOR_PER_UNIT, which this layer cannot import). */
export const KOPECKS_PER_UNIT = 100;

/** The most one redemption may pay, in kopecks: 1,000,000 units. */
export const MAX_PROMOCODE_MONEY = 100_000_000;

export interface NewPromocode {
  code: string;
  itemProtoIds: number[];
  maxUses?: number;
  tsExpires?: number;
  /** Kopecks each redemption pays (default 0). */
  money?: number;
}

/** Adds a code; 2 when it is malformed, gives nothing, exists already or names an unknown prototype. */
export async function createPromocode(
  services: Services,
  input: NewPromocode,
  inTransaction = ownTransaction(services.db),
): Promise<PromocodeObject> {
  const code = normalisePromocode(input.code);
  if (!PROMOCODE_PATTERN.test(code)) throw badParam('code', 'must be 4 to 64 letters, digits, - or _ (kept in upper case)');
  const ids = [...new Set(input.itemProtoIds)];
  const money = input.money ?? 0;
  if (!Number.isSafeInteger(money) || money < 0 || money > MAX_PROMOCODE_MONEY)
    throw badParam('money', `must be 0.01 to ${MAX_PROMOCODE_MONEY / KOPECKS_PER_UNIT} units, at most two decimals`);
  if (ids.length > MAX_PROMOCODE_ITEMS) throw badParam('item_proto_ids', `must name at most ${MAX_PROMOCODE_ITEMS} prototypes`);
  if (ids.length === 0 && money === 0)
    throw badParam('item_proto_ids', 'a code gives items, money or both: name a prototype or give money');
  return inTransaction(async (trx) => {
    const known = ids.length > 0 ? await storedProtoIds(trx, ids) : [];
    const unknown = ids.filter((id) => !known.includes(id));
    if (unknown.length > 0) throw badParam('item_proto_ids', `no prototype ${unknown.join(', ')}`);
    const inserted = await insertPromocode(trx, {
      code,
      itemProtoIds: input.itemProtoIds,
      maxUses: input.maxUses ?? null,
      tsExpires: input.tsExpires ?? null,
      createdAt: nowSeconds(services),
      money,
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
