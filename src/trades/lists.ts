import { SerializedData } from '../api/method.js';
import { getCatalog, ownedItemJson } from '../catalog/index.js';
import { loadProfilesByKey, profileTexts, shownProfile } from '../users/index.js';
import { nowSeconds, type Services } from '../services.js';
import { Side, TradeStatus, expiryCutoff, shownStatus } from './status.js';
import { countTradeList, itemsOfTrades, tradeListPage, type TradeListKind, type TradeRecord } from './queries.js';

export type { TradeListKind };

/**
 * Trades as the lists answer them, JSON text: `{count, trades, users_data, user_data,
 * collections, qualities, thing_types}`. Each trade shows its items in the legacy form as
 * they were when it was made; the partners (the other party of each trade; without a viewer
 * both parties) come in the full form (the reference client reads it so), under both names; the metadata lists are the ids the items' prototypes name.
 */
export async function tradeListJson(
  services: Services,
  viewerId: number | undefined,
  trades: TradeRecord[],
  count: number,
): Promise<SerializedData> {
  const catalog = await getCatalog(services);
  const cutoff = expiryCutoff(services, nowSeconds(services));
  const ids = trades.map((t) => t.trade_id);
  const items = ids.length === 0 ? [] : await itemsOfTrades(services.db.kysely, ids);
  const byTrade = new Map<number, { from: string[]; to: string[] }>();
  const collections = new Set<number>();
  const qualities = new Set<number>();
  const types = new Set<number>();
  for (const item of items) {
    const proto = catalog.protos.get(item.item_proto_id);
    // An item whose prototype was removed from the catalogue cannot be described.
    if (!proto) continue;
    if (proto.collectionId !== null) collections.add(proto.collectionId);
    qualities.add(proto.qualityId);
    types.add(proto.type);
    let sides = byTrade.get(item.trade_id);
    if (!sides) byTrade.set(item.trade_id, (sides = { from: [], to: [] }));
    (item.side === Side.FROM ? sides.from : sides.to).push(ownedItemJson(proto, item, true));
  }
  // Without a viewer (the admin API), both parties of every trade.
  const partners: number[] = [];
  for (const trade of trades) {
    const shown =
      viewerId === undefined
        ? [trade.user_id_from, trade.user_id_to]
        : [trade.user_id_from === viewerId ? trade.user_id_to : trade.user_id_from];
    for (const id of shown) if (!partners.includes(id)) partners.push(id);
  }
  // Players see a globally blocked partner as users.get shows them; the admin API (no viewer) sees the profile.
  const { ofIds } = await loadProfilesByKey(services, partners);
  const shown = ofIds
    .filter((profile) => profile !== undefined)
    .map((profile) => (viewerId === undefined ? profile : shownProfile(profile)));
  const users = `[${(await profileTexts(services, shown, 'full', viewerId)).join(',')}]`;
  const ttl = services.config.trades.ttl;
  const tradeTexts = trades.map((trade) => {
    const status = shownStatus(trade, cutoff);
    const reaction = status === TradeStatus.EXPIRED && trade.status === TradeStatus.OPEN ? trade.create_time + ttl : trade.reaction_time;
    const sides = byTrade.get(trade.trade_id);
    return (
      `{"trade_id":${trade.trade_id},"status":${status},"create_time":${trade.create_time},"reaction_time":${reaction ?? 'null'},` +
      `"user_id_from":${trade.user_id_from},"user_id_to":${trade.user_id_to},` +
      `"things_from":[${sides?.from.join(',') ?? ''}],"things_to":[${sides?.to.join(',') ?? ''}]}`
    );
  });
  const ascending = (set: Set<number>) => `[${[...set].sort((a, b) => a - b).join(',')}]`;
  return new SerializedData(
    `{"count":${count},"trades":[${tradeTexts.join(',')}],"users_data":${users},"user_data":${users},` +
      `"collections":${ascending(collections)},"qualities":${ascending(qualities)},"thing_types":${ascending(types)}}`,
  );
}

/** One page of a list, newest first, and how many trades the whole list holds. */
export async function listTrades(
  services: Services,
  userId: number,
  kind: TradeListKind,
  page: { offset: number; count: number; partnerId?: number },
): Promise<SerializedData> {
  const cutoff = expiryCutoff(services, nowSeconds(services));
  const list = { kind, userId, cutoff, partnerId: page.partnerId };
  const [rows, total] = await Promise.all([
    page.count === 0 ? Promise.resolve([]) : tradeListPage(services.db.kysely, list, page),
    countTradeList(services.db.kysely, list),
  ]);
  return tradeListJson(services, userId, rows, total);
}

/** How many open trades are offered to the user: the `count` of trades.getIncome. */
export function countIncoming(services: Pick<Services, 'db' | 'clock' | 'config'>, userId: number): Promise<number> {
  return countTradeList(services.db.kysely, { kind: 'income', userId, cutoff: expiryCutoff(services, nowSeconds(services)) });
}
