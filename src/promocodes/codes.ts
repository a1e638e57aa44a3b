import { ApiError, Code, rateLimited } from '../api/errors.js';
import { nowSeconds, type Services } from '../services.js';
import { getCatalog, ownedItemJson, type OwnedRow } from '../catalog/index.js';
import { postSystemMessage } from '../chat/index.js';
import { announceInventoriesChanged } from '../inventory/index.js';
import { countUse, insertGrantedItems, insertUse, setUseItems } from './queries.js';

/** Codes are kept in upper case; users may type them in any case. */
export const PROMOCODE_PATTERN = /^[A-Z0-9_-]{4,64}$/;
export const MAX_PROMOCODE_LENGTH = 64;
export const MAX_PROMOCODE_ITEMS = 50;
/** Failed activations a user may make per window before answering 7. */
export const MAX_FAILED_ACTIVATIONS = 10;
export const FAILED_ACTIVATIONS_WINDOW = 600;

/**
 * One answer for every refusal (unknown, expired, disabled, used up, already used by the
 * caller): codes cannot be probed one property at a time.
 */
export const PROMOCODE_REFUSED_DESCRIPTION = 'the promo code is unknown, expired, used up or already used';
const refused = () => new ApiError(Code.PROMOCODE_REFUSED, PROMOCODE_REFUSED_DESCRIPTION);

/**
 * A code as kept: ASCII letters in upper case. Other letters are left as they are (and the
 * pattern refuses them): full upper-casing would turn "ﬀ" into "FF" or "ı" into "I", so a
 * code typed one way would be kept or found as another.
 */
export const normalisePromocode = (code: string) => code.trim().replace(/[a-z]+/g, (letters) => letters.toUpperCase());

export interface Redeemed {
  /** JSON text of the granted items, `[Item, ...]` in the add_legacy = 0 form. */
  itemsJson: string;
  itemProtoIds: number[];
  /** Kopecks paid, and the balance after them (when the code paid any). */
  money: number;
  balance?: number;
}

/**
 * Grants a code's items and money, in one transaction: the user's use is a new row of promocode_uses
 * (its key, code and user, allows one), and the code's count of uses goes up by a
 * conditional update that only matches an enabled, unexpired code with uses left, so neither
 * limit can be passed by concurrent activations, on either database or across processes.
 */
async function redeem(services: Services, userId: number, code: string): Promise<Redeemed> {
  if (!PROMOCODE_PATTERN.test(code)) throw refused();
  const catalog = await getCatalog(services);
  const now = nowSeconds(services);
  return services.db.kysely.transaction().execute(async (trx) => {
    if (!(await insertUse(trx, code, userId, now))) throw refused();
    const counted = await countUse(trx, code, now);
    // Throwing rolls the use back with everything else.
    if (!counted) throw refused();
    const protos = (JSON.parse(counted.item_proto_ids) as number[]).flatMap((id) => catalog.protos.get(id) ?? []);
    let rows: OwnedRow[] = [];
    if (protos.length > 0) {
      rows = await insertGrantedItems(trx, userId, protos, now);
      rows.sort((a, b) => a.item_id - b.item_id);
    }
    const itemIds = rows.map((r) => r.item_id);
    await setUseItems(trx, code, userId, itemIds);
    const money = Number(counted.money);
    const balance = money > 0 ? await services.hooks.promocodes.payMoney(trx, userId, money, code, now) : undefined;
    const protoOf = new Map(protos.map((p) => [p.id, p]));
    return {
      itemsJson: `[${rows.map((row) => ownedItemJson(protoOf.get(row.item_proto_id)!, row, false)).join(',')}]`,
      itemProtoIds: rows.map((r) => r.item_proto_id),
      money,
      ...(balance !== undefined ? { balance } : {}),
    };
  });
}

/**
 * wallet.promocodeActivate: redeems a code for the caller. Every attempt counts against the
 * caller's failed attempts while it runs, and a success takes its count back, so concurrent
 * guesses cannot slip past the limit; past it the answer is 7.
 */
export async function activatePromocode(services: Services, userId: number, typed: string): Promise<Redeemed> {
  const { counters } = services;
  const key = `promocode:failures:${userId}`;
  const hit = await counters.hit(key, FAILED_ACTIVATIONS_WINDOW);
  if (hit.count > MAX_FAILED_ACTIVATIONS) {
    await counters.hit(key, FAILED_ACTIVATIONS_WINDOW, -1);
    throw rateLimited(hit.resetIn);
  }
  let redeemed: Redeemed;
  try {
    redeemed = await redeem(services, userId, normalisePromocode(typed));
  } catch (error) {
    // Only refusals count as failed attempts.
    if (!(error instanceof ApiError && error.code === Code.PROMOCODE_REFUSED)) await counters.hit(key, FAILED_ACTIVATIONS_WINDOW, -1);
    throw error;
  }
  await counters.hit(key, FAILED_ACTIVATIONS_WINDOW, -1);
  services.metrics.count('opening', 'promocode');
  if (redeemed.itemProtoIds.length > 0) await announceInventoriesChanged(services, [userId]);
  if (redeemed.balance !== undefined) await services.hooks.promocodes.announceBalance(services, userId, redeemed.balance);
  if (redeemed.itemProtoIds.length > 0) {
    // The activation stands whatever happens to its announcement.
    await postSystemMessage(services, { type: 4, user_id: userId, item_proto_ids: redeemed.itemProtoIds }).catch((error: unknown) =>
      services.log.error({ err: error }, 'could not announce a promo code in the chat'),
    );
  }
  return redeemed;
}
