import { SerializedData, defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { ApiError, Code, badParam } from '../api/errors.js';
import { getCatalog, ownedItemJson } from '../catalog/index.js';
import { mayReadInventory } from '../inventory/index.js';
import { MAX_LIST_COUNT, requireUser } from '../users/index.js';
import { nowSeconds, type Services } from '../services.js';
import { admissionOf } from './admission.js';
import { MAX_SIDE_ITEMS, acceptTrade, closeTrade, createTrade, tradeOfParty } from './actions.js';
import { tradableItemsOf } from './queries.js';
import { listTrades, tradeListJson } from './lists.js';
import { PreparedTrade, TradeId, TradeList } from './schemas.js';

const tradeIdParam = P.object({ trade_id: P.uint({ minimum: 1, description: 'the trade' }) });
const paging = {
  offset: P.uint({ default: 0, description: 'trades to skip' }),
  count: P.uint({ default: 20, tooMany: MAX_LIST_COUNT, description: `trades to return; at most ${MAX_LIST_COUNT}` }),
};
const side = (description: string) => P.optional(P.uintSet({ tooMany: MAX_SIDE_ITEMS, description }));

/**
 * One side's items, given as `things` (its name) or `items` (its alias) or both, and the name
 * errors about them use: the one the client sent. Both naming different items answer 2.
 */
function sideOf(
  things: number[] | undefined,
  items: number[] | undefined,
  names: { name: string; alias: string },
): { ids: number[]; name: string } {
  if (things !== undefined && items !== undefined) {
    const named = new Set(things);
    const aliased = new Set(items);
    if (aliased.size !== named.size || items.some((id) => !named.has(id)))
      throw badParam(names.alias, `names other items than ${names.name}: give the side under one name`);
  }
  if (things === undefined && items !== undefined) return { ids: items, name: names.alias };
  return { ids: things ?? [], name: names.name };
}

const party = { 801: 'no such trade, or you take no part in it', 802: 'the trade is no longer open' };
const itemErrors = { 603: 'an item of the trade is no longer available: the trade is now invalid (4)' };
const listDescription =
  'Newest first. Each trade shows its items in the legacy form as they were when it was made; `users_data` and `user_data` both list the partners in the full form; ' +
  '`collections`, `qualities` and `thing_types` list the ids the items name. Status: 0 open, 1 accepted, 2 declined, 3 revoked, 4 invalid, 5 expired.';

/** A method that takes one of the caller's open trades out of open by its id; the answer has no data. */
function transition(method: {
  name: string;
  summary: string;
  bots: boolean;
  errors: Record<number, string>;
  act: (services: Services, userId: number, tradeId: number) => Promise<void>;
}): AnyMethod {
  return defineMethod({
    name: method.name,
    summary: method.summary,
    auth: 'required',
    bots: method.bots,
    params: tradeIdParam,
    errors: { ...method.errors, ...itemErrors, ...party },
    handler: async ({ services, caller }, params) => {
      await method.act(services, caller.userId, params.trade_id);
      return undefined;
    },
  });
}

const closingAs = (as: Parameters<typeof closeTrade>[3]) => (services: Services, userId: number, tradeId: number) =>
  closeTrade(services, userId, tradeId, as);

/** A list of the caller's trades, paged. */
function tradeList(name: string, summary: string, kind: 'income' | 'outbound' | 'history'): AnyMethod {
  return defineMethod({
    name,
    summary,
    description: listDescription,
    auth: 'required',
    bots: true,
    params: P.object(paging),
    result: TradeList,
    handler: ({ services, caller }, params) => listTrades(services, caller.userId, kind, params),
  });
}

export const tradeMethods: AnyMethod[] = [
  defineMethod({
    name: 'trades.create',
    summary: "Offers a trade: your items for the partner's",
    description:
      "thing_ids_from: your items offered; thing_ids_to: the partner's items asked for (item_ids_from / item_ids_to are accepted too). At least one side; at most 50 items a side. " +
      'With nothing asked it is a gift; to a user who accepts gifts at once it completes at once. Every item must be owned by its side, tradable now and not equipped. ' +
      'An item may be in several open trades: once it moves, every other open trade holding it becomes invalid.',
    auth: 'required',
    bots: true,
    params: P.object({
      user_id: P.idOrDomain({ description: 'id or domain of the partner' }),
      thing_ids_from: side('your items offered'),
      thing_ids_to: side("the partner's items asked for"),
      item_ids_from: side('thing_ids_from under its newer name (given with it, the same items, else code 2)'),
      item_ids_to: side('thing_ids_to under its newer name (given with it, the same items, else code 2)'),
    }),
    result: TradeId,
    errors: {
      101: 'the partner does not exist',
      107: 'one of you has blocked the other',
      412: 'your account was globally blocked while the offer was made',
      603: "an item is not its side's, no longer owned, not tradable (yet or ever) or equipped, or one asked for is of the stock class (the partner's items are not named)",
      701: "the partner's privacy settings refuse this trade (or gift) from you, or hide their inventory from you and items are asked for",
    },
    handler: async ({ services, caller }, params) => {
      const toId = await requireUser(services, params.user_id, { active: true });
      const from = sideOf(params.thing_ids_from, params.item_ids_from, { name: 'thing_ids_from', alias: 'item_ids_from' });
      const to = sideOf(params.thing_ids_to, params.item_ids_to, { name: 'thing_ids_to', alias: 'item_ids_to' });
      const { tradeId } = await createTrade(services, {
        fromId: caller.userId,
        toId,
        thingsFrom: from.ids,
        thingsTo: to.ids,
        names: { from: from.name, to: to.name },
      });
      return { trade_id: tradeId };
    },
  }),

  transition({
    name: 'trades.accept',
    summary: 'Accepts a trade offered to you: every item of both sides moves, or none',
    bots: true,
    errors: { 4: 'only the receiver may accept' },
    act: acceptTrade,
  }),
  transition({
    name: 'trades.decline',
    summary: 'Declines a trade offered to you',
    bots: true,
    errors: { 4: 'only the receiver may decline (the sender revokes)' },
    act: closingAs('receiver'),
  }),
  transition({
    name: 'trades.revoke',
    summary: 'Withdraws a trade you offered',
    bots: false,
    errors: { 4: 'only the sender may revoke (the receiver declines); bots may not call this method' },
    act: closingAs('sender'),
  }),
  transition({
    name: 'trades.cancel',
    summary: 'Ends an open trade of yours: the receiver declines it, the sender revokes it',
    bots: true,
    errors: {},
    act: closingAs('either'),
  }),

  tradeList('trades.getIncome', 'Open trades offered to you', 'income'),
  tradeList('trades.getOutbound', 'Open trades you offered', 'outbound'),
  tradeList('trades.history', 'Your trades that are no longer open', 'history'),

  defineMethod({
    name: 'trades.historyWith',
    summary: 'Your trades with one user that are no longer open',
    description: listDescription,
    auth: 'required',
    params: P.object({ user_id: P.idOrDomain({ description: 'id or domain of the partner' }), ...paging }),
    result: TradeList,
    errors: { 101: 'the partner does not exist' },
    handler: async ({ services, caller }, params) => {
      const partnerId = await requireUser(services, params.user_id, { active: false });
      return listTrades(services, caller.userId, 'history', { offset: params.offset, count: params.count, partnerId });
    },
  }),

  defineMethod({
    name: 'trades.getById',
    summary: 'One trade you take part in, in the shape of the lists',
    description: listDescription,
    auth: 'required',
    params: tradeIdParam,
    result: TradeList,
    errors: { 801: party[801] },
    handler: async ({ services, caller }, params) => {
      const trade = await tradeOfParty(services, params.trade_id, caller.userId);
      return tradeListJson(services, caller.userId, [trade], 1);
    },
  }),

  defineMethod({
    name: 'execute.prepareTrade',
    summary: 'The items you and a partner could trade now',
    description:
      'Answers `{ "code": 0, "result": { "items": [ { "list": [yours] }, { "list": [theirs] } ] } }` (under `result`, as the execute.* methods answer): ' +
      "owned items, not equipped, tradable now, newest first, in the legacy form. The partner's list is empty when they accept only gifts from you, " +
      'and when their inventory privacy hides their inventory from you (inventory.get would answer 701); it never shows their stock-class items.',
    auth: 'required',
    resultKey: 'result',
    params: P.object({ user_id: P.idOrDomain({ description: 'id or domain of the partner' }) }),
    result: PreparedTrade,
    errors: {
      101: 'the partner does not exist',
      107: 'one of you has blocked the other',
      701: "the partner's privacy settings refuse trades and gifts from you",
    },
    handler: async ({ services, caller }, params) => {
      const partnerId = await requireUser(services, params.user_id, { active: true });
      if (partnerId === caller.userId) throw badParam('user_id', 'you cannot trade with yourself');
      const admission = await admissionOf(services, caller.userId, partnerId);
      if (!admission.gifts) throw new ApiError(Code.PRIVACY, 'the privacy settings of the user refuse trades and gifts from you');
      const catalog = await getCatalog(services);
      const now = nowSeconds(services);
      const listOf = async (userId: number) => {
        const rows = await tradableItemsOf(services.db.kysely, userId, now, { stock: userId === caller.userId });
        const texts: string[] = [];
        for (const row of rows) {
          const proto = catalog.protos.get(row.item_proto_id);
          if (proto && proto.item.item_proto_status !== 1) texts.push(ownedItemJson(proto, row, true));
        }
        return `{"list":[${texts.join(',')}]}`;
      };
      const theirs = async () =>
        admission.trades && (await mayReadInventory(services, partnerId, caller.userId)) ? listOf(partnerId) : '{"list":[]}';
      const [mineList, theirList] = await Promise.all([listOf(caller.userId), theirs()]);
      return new SerializedData(`{"items":[${mineList},${theirList}]}`);
    },
  }),
];
