import { Type } from '@sinclair/typebox';
import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Strict, Uint } from '../api/schema-types.js';
import { MAX_LIST_COUNT, requireUser } from '../users/index.js';
import type { Services } from '../services.js';
import { ApiError, Code } from '../api/errors.js';
import { endOpenTrade, tradeClosed } from './actions.js';
import { announceClosed } from './announce.js';
import { listTrades, tradeListJson } from './lists.js';
import { TradeList } from './schemas.js';
import { tradeById, type TradeRecord } from './queries.js';
import { TradeStatus } from './status.js';

async function existingTrade(services: Services, tradeId: number): Promise<TradeRecord> {
  const row = await tradeById(services.db.kysely, tradeId);
  if (!row) throw new ApiError(Code.NO_SUCH_TRADE, 'parameter trade_id: no such trade');
  return row;
}

/** Operators' view of trades: a user's, one by id, and ending an open one. */
export const tradeAdminMethods: AnyMethod[] = [
  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.listTrades',
    summary: "A user's trades, open and not, newest first",
    description: 'The shape of trades.history; users_data lists the partners.',
    params: P.object({
      user_id: P.idOrDomain({ description: 'id or domain of the user' }),
      offset: P.uint({ default: 0, description: 'trades to skip' }),
      count: P.uint({ default: 20, tooMany: MAX_LIST_COUNT, description: `trades to return; at most ${MAX_LIST_COUNT}` }),
    }),
    result: TradeList,
    errors: { 101: 'user does not exist' },
    handler: async ({ services }, params) => {
      const userId = await requireUser(services, params.user_id, { active: false });
      return listTrades(services, userId, 'all', params);
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.getTrade',
    summary: 'One trade by id, in the list shape, with both parties',
    params: P.object({ trade_id: P.uint({ minimum: 1, description: 'the trade' }) }),
    result: TradeList,
    errors: { 801: 'no such trade' },
    handler: async ({ services }, params) => tradeListJson(services, undefined, [await existingTrade(services, params.trade_id)], 1),
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.cancelTrade',
    summary: 'Ends an open trade as if its sender had revoked it',
    description: 'Nothing moves; the trade reads status 3. The reason is kept in the audit log.',
    params: P.object({
      trade_id: P.uint({ minimum: 1, description: 'the trade' }),
      reason: P.optional(P.string({ maxLength: 500, description: 'kept in the audit log' })),
    }),
    result: Type.Object({ trade_id: Uint }, Strict),
    errors: { 801: 'no such trade', 802: 'the trade is no longer open' },
    handler: async ({ services, inTransaction }, params) => {
      const trade = await existingTrade(services, params.trade_id);
      await inTransaction(async (trx) => {
        if (!(await endOpenTrade(services, params.trade_id, TradeStatus.REVOKED, trx))) throw tradeClosed();
      });
      await announceClosed(services, [trade], TradeStatus.REVOKED, 'cancelled');
      return { trade_id: params.trade_id };
    },
  }),
];
