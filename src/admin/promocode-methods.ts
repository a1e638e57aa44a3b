import { Type } from '@sinclair/typebox';
import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Bit, Strict, Ts, Uint } from '../api/schema-types.js';
import {
  createPromocode,
  disablePromocode,
  listPromocodes,
  MAX_PROMOCODE_ITEMS,
  MAX_PROMOCODE_LENGTH,
  MAX_PROMOCODE_MONEY,
} from '../promocodes/index.js';
import { unitsToKopecks } from '../market/index.js';

export const MAX_PROMOCODES_PAGE = 100;

export const PromocodeSchema = Type.Object(
  {
    code: Type.String(),
    item_proto_ids: Type.Array(Uint, { description: 'what a redemption gives' }),
    max_uses: Type.Optional(Type.Integer({ minimum: 1, description: 'total redemptions allowed; absent: no limit' })),
    uses: Uint,
    ts_expires: Type.Optional(Ts),
    disabled: Bit,
    created_at: Ts,
    money: Type.Optional(Type.Number({ description: 'units of the currency each redemption pays; absent: none' })),
  },
  { ...Strict, $id: 'Promocode' },
);

const codeParam = P.string({
  minLength: 1,
  maxLength: MAX_PROMOCODE_LENGTH,
  description: '4 to 64 letters, digits, - or _; kept and matched in upper case',
});

export const promocodeMethods: AnyMethod[] = [
  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.createPromocode',
    summary: 'Create a promo code',
    description:
      'Each user may redeem the code once (wallet.promocodeActivate), for one item of each listed prototype and `money` credited to the wallet (ledger kind `promocode`); a code gives items, money or both.',
    params: P.object({
      code: codeParam,
      item_proto_ids: P.optional(
        P.uintSet({ maxItems: MAX_PROMOCODE_ITEMS, description: 'the prototypes a redemption gives (default none)' }),
      ),
      money: P.optional(
        P.double({
          minimum: 0.01,
          maximum: MAX_PROMOCODE_MONEY / 100,
          description: 'units of the currency a redemption pays, at most two decimals (default none)',
        }),
      ),
      max_uses: P.optional(P.uint({ minimum: 1, description: 'total redemptions allowed (default: no limit)' })),
      ts_expires: P.optional(P.uint({ description: 'Unix time from which the code is refused (default: never)' })),
    }),
    result: Type.Object({ promocode: PromocodeSchema }, Strict),
    handler: async ({ services, inTransaction }, params) => {
      const input = {
        code: params.code,
        itemProtoIds: params.item_proto_ids ?? [],
        ...(params.money !== undefined ? { money: unitsToKopecks('money', params.money) } : {}),
        ...(params.max_uses !== undefined ? { maxUses: params.max_uses } : {}),
        ...(params.ts_expires !== undefined ? { tsExpires: params.ts_expires } : {}),
      };
      return { promocode: await createPromocode(services, input, inTransaction) };
    },
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.listPromocodes',
    summary: 'The promo codes, newest first, with their uses',
    params: P.object({
      offset: P.uint({ default: 0, description: 'codes to skip' }),
      count: P.uint({ default: 20, tooMany: MAX_PROMOCODES_PAGE, description: 'codes to return' }),
    }),
    result: Type.Object({ count: Uint, promocodes: Type.Array(PromocodeSchema) }, Strict),
    handler: async ({ services }, params) => listPromocodes(services, params.offset, params.count),
  }),

  defineMethod({
    auth: 'admin',
    extension: true,
    name: 'admin.disablePromocode',
    summary: 'Stop a promo code from being redeemed',
    description: 'Redemptions already made stay; further ones are refused like an unknown code.',
    params: P.object({ code: codeParam }),
    result: Type.Object({ promocode: PromocodeSchema }, Strict),
    handler: async ({ services, inTransaction }, params) => ({ promocode: await disablePromocode(services, params.code, inTransaction) }),
  }),
];
