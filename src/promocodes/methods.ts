import { Type } from '@sinclair/typebox';
import { SerializedData, defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Strict } from '../api/schema-types.js';
import { Item } from '../catalog/index.js';
import {
  FAILED_ACTIVATIONS_WINDOW,
  MAX_FAILED_ACTIVATIONS,
  MAX_PROMOCODE_LENGTH,
  PROMOCODE_REFUSED_DESCRIPTION,
  activatePromocode,
} from './codes.js';
import { KOPECKS_PER_UNIT } from './store.js';

export const walletPromocodeActivate = defineMethod({
  name: 'wallet.promocodeActivate',
  summary: 'Redeem a promo code for its items and money',
  description:
    "The code's items are received at once and the chat announces it (message type 4); money the code gives is credited to the wallet (ledger kind `promocode`) in the same transaction, and `money` and the new `balance` are answered (units).  Each user may redeem a code once; a code may have a total number of uses and an expiry. " +
    `Codes are matched whatever their case. Every refusal answers 1501 with the same description; after ${MAX_FAILED_ACTIVATIONS} refusals in ${FAILED_ACTIVATIONS_WINDOW / 60} minutes the caller is answered 7 until the window ends.`,
  auth: 'required',
  params: P.object({
    promocode: P.string({ minLength: 1, maxLength: MAX_PROMOCODE_LENGTH, description: 'the code as the user typed it' }),
  }),
  result: Type.Object(
    {
      items: Type.Array(Item, { description: 'the items received, in the add_legacy = 0 form' }),
      money: Type.Optional(Type.Number({ description: 'units of the currency received, when the code gives money' })),
      balance: Type.Optional(Type.Number({ description: 'the balance after it (units), when the code gives money' })),
    },
    Strict,
  ),
  errors: { 1501: PROMOCODE_REFUSED_DESCRIPTION },
  handler: async ({ services, caller }, params) => {
    const redeemed = await activatePromocode(services, caller.userId, params.promocode);
    const money =
      redeemed.balance !== undefined
        ? `,"money":${redeemed.money / KOPECKS_PER_UNIT},"balance":${redeemed.balance / KOPECKS_PER_UNIT}`
        : '';
    return new SerializedData(`{"items":${redeemed.itemsJson}${money}}`);
  },
});
