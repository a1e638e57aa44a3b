import { Type } from '@sinclair/typebox';
import { ApiError, Code } from '../api/errors.js';
import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Strict, Ts, Uint } from '../api/schema-types.js';
import { announceInventoriesChanged } from '../inventory/index.js';
import { nowSeconds } from '../services.js';
import { requireUser } from '../users/index.js';
import { announceBalances, transfer } from './ledger.js';
import { Money } from './schemas.js';
import { toUnits, unitsToKopecks } from './money.js';
import { PlatformAccount, selectAllListings, setFrozen } from './queries.js';
import { cancelListingIn } from './trading.js';
import { MAX_LISTING_PAGE } from './methods.js';

/** The largest single grant or revocation, in units. */
const MAX_GRANT_UNITS = 10_000_000;

const reasonParam = P.string({ minLength: 1, maxLength: 500, description: 'why (kept in the ledger and the audit log)' });

const AdminListing = Type.Object(
  {
    listing_id: Uint,
    thing_id: Uint,
    user_id: Uint,
    thing_prototype_id: Uint,
    price: Money,
    ts_listed: Ts,
    ts_expires: Ts,
  },
  { ...Strict, $id: 'AdminListing' },
);

const moneyChange = (sign: 1 | -1) =>
  defineMethod({
    auth: 'admin',
    extension: true,
    name: sign > 0 ? 'admin.grantMoney' : 'admin.revokeMoney',
    summary: sign > 0 ? "Add money to a user's wallet" : "Take money from a user's wallet",
    description:
      (sign > 0
        ? 'Recorded in the ledger as `admin_grant`'
        : 'Recorded in the ledger as `admin_revoke`; 2103 when the balance is smaller') +
      ', with the reason, against the platform account; the user sees the new balance live.',
    params: P.object({
      user_id: P.idOrDomain({ description: 'id or domain of the user' }),
      amount: P.double({ minimum: 0.01, maximum: MAX_GRANT_UNITS, description: 'units of the currency, at most two decimals' }),
      reason: reasonParam,
    }),
    result: Type.Object({ balance: Money }, Strict),
    errors: sign > 0 ? { 101: 'user does not exist' } : { 101: 'user does not exist', 2103: 'the balance is smaller than the amount' },
    handler: async ({ services, inTransaction }, params) => {
      const userId = await requireUser(services, params.user_id);
      const amount = unitsToKopecks('amount', params.amount);
      const kind = sign > 0 ? 'admin_grant' : 'admin_revoke';
      const balances = await inTransaction((trx) =>
        transfer(trx, { ts: nowSeconds(services), kind, reason: params.reason }, [
          { account: userId, amount: sign * amount, kind },
          { account: PlatformAccount.ISSUE, amount: -sign * amount, kind },
        ]),
      );
      await announceBalances(services, balances);
      return { balance: toUnits(balances.get(userId)!) };
    },
  });

export const marketAdminMethods: AnyMethod[] = [
  moneyChange(1),
  moneyChange(-1),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.listListings',
    summary: 'Items on the market, newest first, of everyone or one seller',
    params: P.object({
      user_id: P.optional(P.idOrDomain({ description: 'id or domain of the seller' })),
      offset: P.uint({ default: 0, maximum: 1_000_000, description: 'listings to skip' }),
      count: P.uint({ default: 20, minimum: 1, maximum: MAX_LISTING_PAGE, description: `listings to return; at most ${MAX_LISTING_PAGE}` }),
    }),
    result: Type.Object({ count: Uint, listings: Type.Array(AdminListing) }, Strict),
    errors: { 101: 'user does not exist' },
    handler: async ({ services }, params) => {
      const sellerId = params.user_id === undefined ? undefined : await requireUser(services, params.user_id);
      const { rows, total } = await selectAllListings(services.db.kysely, sellerId, params.offset, params.count);
      return {
        count: total,
        listings: rows.map((row) => ({
          listing_id: Number(row.listing_id),
          thing_id: Number(row.item_id),
          user_id: Number(row.seller_id),
          thing_prototype_id: Number(row.item_proto_id),
          price: toUnits(Number(row.price)),
          ts_listed: Number(row.ts_listed),
          ts_expires: Number(row.ts_expires),
        })),
      };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.cancelListing',
    summary: 'Take an item off the market',
    description: 'The item returns to its seller.',
    params: P.object({ thing_id: P.uint({ minimum: 1, description: 'the item' }), reason: reasonParam }),
    result: Type.Object({ thing_id: Uint, user_id: Type.Integer({ description: 'the seller, who has the item back' }) }, Strict),
    errors: { 2101: 'the item is not on sale' },
    handler: async ({ services, inTransaction }, params) => {
      const listing = await inTransaction(async (trx) => {
        const ended = await cancelListingIn(trx, params.thing_id);
        if (!ended) throw new ApiError(Code.MARKET_NOT_LISTED, 'the item is not on sale');
        return ended;
      });
      await announceInventoriesChanged(services, [Number(listing.seller_id)]);
      return { thing_id: params.thing_id, user_id: Number(listing.seller_id) };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.freezeMarket',
    summary: "Freeze or unfreeze a user's use of the market",
    description: 'A frozen user can neither sell nor buy (2105); their listings stay until cancelled.',
    params: P.object({
      user_id: P.idOrDomain({ description: 'id or domain of the user' }),
      frozen: P.bit({ description: '1 to freeze, 0 to unfreeze' }),
      reason: reasonParam,
    }),
    result: Type.Object({ user_id: Type.Integer(), frozen: Type.Integer({ description: '1 frozen, 0 not' }) }, Strict),
    errors: { 101: 'user does not exist' },
    handler: async ({ services, inTransaction }, params) => {
      const userId = await requireUser(services, params.user_id);
      await inTransaction((trx) => setFrozen(trx, userId, params.frozen === 1, nowSeconds(services), params.reason));
      return { user_id: userId, frozen: params.frozen };
    },
  }),
];
