import { Type } from '@sinclair/typebox';
import { defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Strict } from '../api/schema-types.js';
import type { Services } from '../services.js';
import { announceUsersChanged } from './profile-cache.js';

export const INVENTORY_PRIVACY = ['everyone', 'friends', 'nobody'] as const;
export type InventoryPrivacy = (typeof INVENTORY_PRIVACY)[number];

/**
 * Sets who may read a user's inventory (inventory.get applies it). Every process is told,
 * so any cache holding the user's row forgets it.
 */
export async function setInventoryPrivacy(services: Services, userId: number, privacy: InventoryPrivacy): Promise<void> {
  await services.db.kysely.updateTable('users').set({ inventory_privacy: privacy }).where('user_id', '=', userId).execute();
  await announceUsersChanged(services, [userId]);
}

const PrivacyValue = Type.Union(INVENTORY_PRIVACY.map((v) => Type.Literal(v)), {
  description: 'everyone: anyone; friends: the owner\'s friends; nobody: only the owner',
});

export const accountSetPrivacy = defineMethod({
  name: 'account.setPrivacy',
  summary: 'Sets who may read the caller\'s inventory',
  description: 'inventory.get answers 701 to anyone the setting excludes; the owner always may read their own inventory.',
  auth: 'required',
  extension: true,
  params: P.object({
    inventory: P.enum(INVENTORY_PRIVACY, { description: 'everyone | friends | nobody' }),
  }),
  handler: async (ctx, params) => {
    await setInventoryPrivacy(ctx.services, ctx.caller.userId, params.inventory);
    return undefined;
  },
});

export const accountGetPrivacy = defineMethod({
  name: 'account.getPrivacy',
  summary: 'Returns the caller\'s privacy settings',
  auth: 'required',
  extension: true,
  params: P.object({}),
  result: Type.Object({ inventory: PrivacyValue }, Strict),
  handler: async (ctx) => {
    const row = await ctx.services.db.kysely
      .selectFrom('users')
      .select('inventory_privacy')
      .where('user_id', '=', ctx.caller.userId)
      .executeTakeFirstOrThrow();
    return { inventory: row.inventory_privacy as InventoryPrivacy };
  },
});
