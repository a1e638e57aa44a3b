import { Type } from '@sinclair/typebox';
import { defineMethod, type AnyMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Bit, Strict } from '../api/schema-types.js';
import type { Services } from '../services.js';
import type { InventoryPrivacy } from '../db/tables.js';
import { announceUsersChanged } from './profile-cache.js';
import { selectPrivacy, updatePrivacyColumns, type PrivacyColumns } from './queries.js';

export const INVENTORY_PRIVACY = ['everyone', 'friends', 'nobody'] as const satisfies readonly InventoryPrivacy[];

/**
 * Sets who may read a user's inventory (inventory.get applies it). Every process is told,
 * so any cache holding the user's row forgets it.
 */
export async function setInventoryPrivacy(services: Services, userId: number, privacy: InventoryPrivacy): Promise<void> {
  await updatePrivacy(services, userId, { inventory_privacy: privacy });
}

async function updatePrivacy(services: Services, userId: number, changes: Partial<PrivacyColumns>): Promise<void> {
  if (Object.keys(changes).length === 0) return;
  await updatePrivacyColumns(services.db, userId, changes);
  await announceUsersChanged(services, [userId]);
}

const PrivacyValue = Type.Union(
  INVENTORY_PRIVACY.map((v) => Type.Literal(v)),
  {
    description: "everyone: anyone; friends: the owner's friends; nobody: only the owner",
  },
);

const TRADE_SETTINGS = {
  trades_income: '1 (default): anyone may offer you trades; 0: nobody',
  trades_income_from_friends: '1: only friends may offer you trades (when trades_income is 1)',
  trades_income_gifts: '1 (default): gifts (trades asking nothing of you) are accepted even when trades are not',
  trades_income_gifts_autoaccept: '1: a gift completes at once, as if you had accepted it',
} as const;
type TradeSetting = keyof typeof TRADE_SETTINGS;
const TRADE_SETTING_NAMES = Object.keys(TRADE_SETTINGS) as TradeSetting[];

const PrivacySettings = Type.Object(
  {
    inventory: PrivacyValue,
    messages: Type.Union(
      INVENTORY_PRIVACY.map((v) => Type.Literal(v)),
      { description: "who may send you private messages: everyone (default), friends (the owner's friends), nobody" },
    ),
    ...(Object.fromEntries(
      TRADE_SETTING_NAMES.map((name) => [name, Type.Union(Bit.anyOf, { description: TRADE_SETTINGS[name] })]),
    ) as Record<TradeSetting, typeof Bit>),
  },
  { ...Strict, $id: 'PrivacySettings' },
);

const updateParams = P.object({
  inventory: P.optional(P.enum(INVENTORY_PRIVACY, { description: 'who may read your inventory: everyone | friends | nobody' })),
  messages: P.optional(P.enum(INVENTORY_PRIVACY, { description: 'who may send you private messages: everyone | friends | nobody' })),
  trades_income: P.optional(P.bit({ description: TRADE_SETTINGS.trades_income })),
  trades_income_from_friends: P.optional(P.bit({ description: TRADE_SETTINGS.trades_income_from_friends })),
  trades_income_gifts: P.optional(P.bit({ description: TRADE_SETTINGS.trades_income_gifts })),
  trades_income_gifts_autoaccept: P.optional(P.bit({ description: TRADE_SETTINGS.trades_income_gifts_autoaccept })),
});

const updateDescription =
  'Only the settings given change. inventory.get answers 701 to anyone `inventory` excludes (the owner may always read their own); ' +
  'trades.create answers 701 to offers the trade settings refuse; im.send answers 701 to messages `messages` excludes.';

async function readPrivacy(services: Services, userId: number) {
  const row = await selectPrivacy(services.db, userId);
  return {
    inventory: row.inventory_privacy,
    messages: row.im_privacy,
    trades_income: row.trades_income,
    trades_income_from_friends: row.trades_income_from_friends,
    trades_income_gifts: row.trades_income_gifts,
    trades_income_gifts_autoaccept: row.trades_income_gifts_autoaccept,
  };
}

function privacyGet(name: string, extension: boolean, summary: string) {
  return defineMethod({
    name,
    summary,
    auth: 'required',
    ...(extension ? { extension } : {}),
    params: P.object({}),
    result: PrivacySettings,
    handler: (ctx) => readPrivacy(ctx.services, ctx.caller.userId),
  });
}

function privacyUpdate(name: string, extension: boolean, summary: string) {
  return defineMethod({
    name,
    summary,
    description: updateDescription,
    auth: 'required',
    ...(extension ? { extension } : {}),
    params: updateParams,
    handler: async (ctx, params) => {
      const changes: Partial<PrivacyColumns> = {};
      if (params.inventory !== undefined) changes.inventory_privacy = params.inventory;
      if (params.messages !== undefined) changes.im_privacy = params.messages;
      for (const name of TRADE_SETTING_NAMES) if (params[name] !== undefined) changes[name] = params[name];
      await updatePrivacy(ctx.services, ctx.caller.userId, changes);
      return undefined;
    },
  });
}

/** privacy.get / privacy.update, and their earlier names account.getPrivacy / account.setPrivacy. */
export const privacyMethods: AnyMethod[] = [
  privacyGet('privacy.get', false, "The caller's privacy settings: who may read their inventory and offer them trades"),
  privacyUpdate('privacy.update', false, "Changes the caller's privacy settings"),
  privacyGet('account.getPrivacy', true, 'privacy.get under its earlier name'),
  privacyUpdate('account.setPrivacy', true, 'privacy.update under its earlier name'),
];
