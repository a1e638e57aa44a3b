import type { Static } from '@sinclair/typebox';
import { ApiError, Code, badParam } from '../api/errors.js';
import type { InTransaction } from '../db/connection.js';
import { flag } from '../db/flags.js';
import { newToken, sha256 } from '../infra/secrets.js';
import { announceSessionsRevoked, revokeAppSessionsIn } from '../auth/index.js';
import { nowSeconds, type Services } from '../services.js';
import { parseRedirectUris } from './redirect-uris.js';
import { allApps, appById, insertApp, updateAppRow, type AppRow } from './queries.js';
import type { AppSchema } from './schemas.js';
import { isScopeMask } from './scopes.js';

export type App = Static<typeof AppSchema>;

export const MAX_APP_NAME_LENGTH = 100;

export interface AppInput {
  name?: string;
  redirectUris?: string;
  scopes?: number;
  active?: boolean;
  /** Issue a new secret (a confidential client's earlier one stops working). */
  newSecret?: boolean;
}

/** An app as the admin API shows it: never its secret. */
export function appView(row: AppRow): App {
  return {
    app_id: row.app_id,
    name: row.name,
    redirect_uris: redirectUrisOf(row),
    scopes: row.scopes,
    public_client: flag(row.public_client),
    active: flag(row.active),
    created_at: row.created_at,
  };
}

export function redirectUrisOf(row: Pick<AppRow, 'redirect_uris'>): string[] {
  return JSON.parse(row.redirect_uris) as string[];
}

function checkedName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw badParam('name', 'must not be empty');
  return trimmed;
}

function checkedRedirectUris(text: string): string {
  const uris = parseRedirectUris(text);
  if (typeof uris === 'string') throw badParam('redirect_uris', uris);
  return JSON.stringify(uris);
}

function checkedScopes(scopes: number): number {
  if (!isScopeMask(scopes)) throw badParam('scopes', 'only the bits of offline (1), games (2) and stat (8)');
  return scopes;
}

/**
 * Registers an app. A confidential client gets a secret, answered here once and stored only
 * as its SHA-256; a public client (an app on the player's device) has none and must use PKCE.
 */
export async function createApp(
  services: Services,
  input: Required<Omit<AppInput, 'active' | 'newSecret'>> & { publicClient: boolean },
  inTransaction: InTransaction,
): Promise<{ app: App; app_secret?: string }> {
  const secret = input.publicClient ? undefined : newToken();
  const row = {
    name: checkedName(input.name),
    redirect_uris: checkedRedirectUris(input.redirectUris),
    scopes: checkedScopes(input.scopes),
    public_client: flag(input.publicClient ? 1 : 0),
    secret_hash: secret === undefined ? null : sha256(secret),
    created_at: nowSeconds(services),
  };
  const app = await inTransaction(async (trx) => appById(trx, await insertApp(trx, row)));
  return { app: appView(app!), ...(secret !== undefined ? { app_secret: secret } : {}) };
}

/**
 * Changes an app. Deactivating it revokes every session it obtained; it can be activated again
 * (its players then sign in to it anew).
 */
export async function updateApp(
  services: Services,
  appId: number,
  input: AppInput,
  inTransaction: InTransaction,
): Promise<{ app: App; app_secret?: string }> {
  const secret = input.newSecret ? newToken() : undefined;
  const changes = {
    ...(secret !== undefined ? { secret_hash: sha256(secret) } : {}),
    ...(input.name !== undefined ? { name: checkedName(input.name) } : {}),
    ...(input.redirectUris !== undefined ? { redirect_uris: checkedRedirectUris(input.redirectUris) } : {}),
    ...(input.scopes !== undefined ? { scopes: checkedScopes(input.scopes) } : {}),
    ...(input.active !== undefined ? { active: flag(input.active ? 1 : 0) } : {}),
  };
  const { app, revoked } = await inTransaction(async (trx) => {
    const stored = await appById(trx, appId);
    if (!stored) throw new ApiError(Code.OAUTH_NO_SUCH_APP, 'no such app');
    if (secret !== undefined && stored.public_client === 1) throw badParam('new_secret', 'a public client has no secret');
    if (Object.keys(changes).length > 0) await updateAppRow(trx, appId, changes);
    const revoked = input.active === false ? await revokeAppSessionsIn(services, trx, appId) : [];
    return { app: (await appById(trx, appId))!, revoked };
  });
  if (revoked.length > 0) await announceSessionsRevoked(services, { sessionIds: revoked });
  return { app: appView(app), ...(secret !== undefined ? { app_secret: secret } : {}) };
}

export async function listApps(services: Services): Promise<App[]> {
  return (await allApps(services.db.kysely)).map(appView);
}
