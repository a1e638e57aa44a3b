import { Type, type Static } from '@sinclair/typebox';
import { ApiError, Code } from '../api/errors.js';
import { defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Strict } from '../api/schema-types.js';
import { announceSessionsRevoked, revokeAppSessionsIn } from '../auth/index.js';
import { ownTransaction } from '../db/connection.js';
import { nowSeconds, type Services } from '../services.js';
import { consentOf, consentsOf, deleteConsent, saveConsent } from './queries.js';
import { AppGrantSchema } from './schemas.js';
import { scopeNames } from './scopes.js';

/** Whether the player already allowed the app everything it asks for now (the dialog then asks nothing). */
export async function consentCovers(services: Services, userId: number, appId: number, scopes: number): Promise<boolean> {
  const consent = await consentOf(services.db.kysely, userId, appId);
  return consent !== undefined && (consent.scopes & scopes) === scopes;
}

/** Remembers that the player allowed the app these scopes. */
export async function rememberConsent(services: Services, userId: number, appId: number, scopes: number): Promise<void> {
  await saveConsent(services.db.kysely, userId, appId, scopes, nowSeconds(services));
}

async function grantsOf(services: Services, userId: number): Promise<Static<typeof AppGrantSchema>[]> {
  const rows = await consentsOf(services.db.kysely, userId);
  return rows.map((row) => ({ app_id: row.app_id, name: row.name, scope: row.scopes, scopes: scopeNames(row.scopes), ts: row.granted_at }));
}

/** Forgets the player's consent to an app and revokes every session the app obtained from them. */
async function revokeGrant(services: Services, userId: number, appId: number): Promise<void> {
  const { forgot, revoked } = await ownTransaction(services.db)(async (trx) => ({
    forgot: await deleteConsent(trx, userId, appId),
    revoked: await revokeAppSessionsIn(services, trx, appId, userId),
  }));
  if (revoked.length > 0) await announceSessionsRevoked(services, { sessionIds: revoked });
  if (!forgot && revoked.length === 0) throw new ApiError(Code.OAUTH_NO_SUCH_APP, 'the account has not allowed this app anything');
}

export const accountAppsGet = defineMethod({
  name: 'account.appsGet',
  summary: 'The apps the player allowed to act for them',
  description:
    'Each app the player allowed in the OAuth dialog, with the scopes allowed (`scope` as the bit mask, `scopes` by name) ' +
    'and when. Not part of the reference service.',
  auth: 'required',
  extension: true,
  params: P.object({}),
  result: Type.Object({ apps: Type.Array(AppGrantSchema) }, Strict),
  handler: async (ctx) => ({ apps: await grantsOf(ctx.services, ctx.caller.userId) }),
});

export const accountAppsRevoke = defineMethod({
  name: 'account.appsRevoke',
  summary: 'Take back what the player allowed an app',
  description:
    'Forgets the consent (the dialog asks again next time) and revokes every session the app obtained from the player, ' +
    'in every process, before answering. Not part of the reference service.',
  auth: 'required',
  extension: true,
  params: P.object({ app_id: P.uint({ description: 'the app' }) }),
  errors: { 2004: 'the player has not allowed this app anything' },
  handler: async (ctx, params) => {
    await revokeGrant(ctx.services, ctx.caller.userId, params.app_id);
    return undefined;
  },
});
