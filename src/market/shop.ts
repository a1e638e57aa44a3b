import { ApiError, Code } from '../api/errors.js';
import { nowSeconds, type Services } from '../services.js';
import { getCatalog, ownedItemJson, type ProtoEntry } from '../catalog/index.js';
import { announceInventoriesChanged } from '../inventory/index.js';
import { heldByOpenTrade } from '../trades/index.js';
import { announceBalances, moveBalances, recordTransfer, type Movement } from './ledger.js';
import { toUnits, unitsToKopecks } from './money.js';
import {
  PlatformAccount,
  claimShopRequest,
  consumeSoldItem,
  insertBoughtItem,
  readListableItem,
  readShopAnswer,
  storeShopAnswer,
} from './queries.js';

const unavailable = (what: string) => new ApiError(Code.SHOP_UNAVAILABLE, what);

/** A catalogue price (units, as prototypes give them) in kopecks; undefined when there is none. */
function priceOf(proto: ProtoEntry, which: 'buy' | 'quick_sell'): number | undefined {
  const prices = proto.item.prices as { buy?: unknown; quick_sell?: unknown } | undefined;
  const units = prices?.[which];
  return typeof units === 'number' && units > 0 ? unitsToKopecks('price', units) : undefined;
}

/**
 * shop.buy: one item of a prototype at its `prices.buy`, in one transaction with the debit and
 * its ledger entry. With a `request_id`, the first purchase under it is the only one: a retry
 * (or a concurrent duplicate, which waits for the first) is answered the first one's answer.
 */
export async function buyFromShop(services: Services, userId: number, protoId: number, requestId: string | undefined): Promise<string> {
  if (requestId !== undefined) {
    const earlier = await readShopAnswer(services.db.kysely, userId, requestId);
    if (earlier) return earlier;
  }
  const catalog = await getCatalog(services);
  const proto = catalog.protos.get(protoId);
  const price = proto && priceOf(proto, 'buy');
  if (!proto || price === undefined) throw unavailable('the shop does not sell this prototype');
  const now = nowSeconds(services);
  const outcome = await services.db.kysely.transaction().execute(async (trx) => {
    if (requestId !== undefined && !(await claimShopRequest(trx, userId, requestId, now))) {
      return { answer: (await readShopAnswer(trx, userId, requestId))!, balances: undefined };
    }
    const movements: Movement[] = [
      { account: userId, amount: -price, kind: 'shop' },
      { account: PlatformAccount.ISSUE, amount: price, kind: 'shop' },
    ];
    const balances = await moveBalances(trx, movements);
    const row = await insertBoughtItem(trx, userId, proto, now);
    await recordTransfer(trx, { ts: now, kind: 'shop', item_id: Number(row.item_id), item_proto_id: proto.id }, movements, balances);
    const answer = `{"item":${ownedItemJson(proto, { ...row, item_id: Number(row.item_id) }, false)},"balance":${toUnits(balances.get(userId)!)}}`;
    if (requestId !== undefined) await storeShopAnswer(trx, userId, requestId, answer);
    return { answer, balances };
  });
  if (!outcome.balances) return outcome.answer;
  services.metrics.count('market', 'shop');
  await announceInventoriesChanged(services, [userId]);
  await announceBalances(services, outcome.balances);
  return outcome.answer;
}

/**
 * market.quickSell: the platform buys an owned item back at its `prices.quick_sell`; the item
 * ends (consumed) and the money is paid, in one transaction. The item must be the caller's,
 * owned, tradable now, not equipped and in no open trade (603).
 */
export async function quickSell(services: Services, userId: number, itemId: number): Promise<number> {
  const catalog = await getCatalog(services);
  const now = nowSeconds(services);
  const balances = await services.db.kysely.transaction().execute(async (trx) => {
    const item = await readListableItem(trx, itemId);
    if (!item || Number(item.user_id) !== userId || item.state !== 'owned')
      throw new ApiError(Code.CRAFT_ITEM_UNUSABLE, 'the item is not in your inventory');
    const proto = catalog.protos.get(item.item_proto_id);
    const price = proto && proto.item.item_proto_status !== 1 ? priceOf(proto, 'quick_sell') : undefined;
    if (price === undefined) throw unavailable('the platform does not buy this prototype back');
    const movements: Movement[] = [
      { account: userId, amount: price, kind: 'quick_sell' },
      { account: PlatformAccount.ISSUE, amount: -price, kind: 'quick_sell' },
    ];
    const balances = await moveBalances(trx, movements);
    if (!(await consumeSoldItem(trx, itemId, userId, now)))
      throw new ApiError(Code.CRAFT_ITEM_UNUSABLE, 'the item cannot be sold yet, or is equipped');
    // After the item's row is locked, as in market.sell: an offer of it made meanwhile is seen now, or finds it gone.
    if (await heldByOpenTrade(services, trx, [itemId], now)) throw new ApiError(Code.CRAFT_ITEM_UNUSABLE, 'the item is in an open trade');
    await recordTransfer(trx, { ts: now, kind: 'quick_sell', item_id: itemId, item_proto_id: item.item_proto_id }, movements, balances);
    return balances;
  });
  services.metrics.count('market', 'quick_sell');
  await announceInventoriesChanged(services, [userId]);
  await announceBalances(services, balances);
  return balances.get(userId)!;
}
