import { sql, type Insertable, type Updateable } from 'kysely';
import type { Executor } from '../db/connection.js';
import type { OauthAppsTable, OauthCodesTable } from '../db/tables.js';

const APP_COLUMNS = ['app_id', 'name', 'secret_hash', 'redirect_uris', 'scopes', 'public_client', 'active', 'created_at'] as const;

export type AppRow = Awaited<ReturnType<typeof appById>> & object;

export async function insertApp(trx: Executor, app: Insertable<OauthAppsTable>): Promise<number> {
  const row = await trx.insertInto('oauth_apps').values(app).returning('app_id').executeTakeFirstOrThrow();
  return row.app_id;
}

export async function appById(db: Executor, appId: number) {
  return db.selectFrom('oauth_apps').select(APP_COLUMNS).where('app_id', '=', appId).executeTakeFirst();
}

export async function allApps(db: Executor) {
  return db.selectFrom('oauth_apps').select(APP_COLUMNS).orderBy('app_id').execute();
}

export async function updateAppRow(trx: Executor, appId: number, changes: Updateable<OauthAppsTable>): Promise<void> {
  await trx.updateTable('oauth_apps').set(changes).where('app_id', '=', appId).execute();
}

export async function insertCode(db: Executor, code: Insertable<OauthCodesTable>): Promise<void> {
  await db.insertInto('oauth_codes').values(code).execute();
}

/** A code by its hash, locked until the transaction ends (on SQLite the transaction holds the database). */
export async function codeForUpdate(trx: Executor, codeHash: string, lockRows: boolean) {
  const query = trx
    .selectFrom('oauth_codes')
    .select(['app_id', 'user_id', 'redirect_uri', 'scopes', 'code_challenge', 'expires_at', 'used_at', 'family_id'])
    .where('code_hash', '=', codeHash);
  return (lockRows ? query.forUpdate() : query).executeTakeFirst();
}

/** Marks a code used by the exchange that issued the session family `familyId`. */
export async function markCodeUsed(trx: Executor, codeHash: string, now: number, familyId: string): Promise<void> {
  await trx.updateTable('oauth_codes').set({ used_at: now, family_id: familyId }).where('code_hash', '=', codeHash).execute();
}

/** Deletes codes that expired before `before` (used or not: a used one is kept until then to catch its reuse). */
export async function deleteCodesBefore(db: Executor, before: number): Promise<void> {
  await db.deleteFrom('oauth_codes').where('expires_at', '<', before).execute();
}

export async function consentOf(db: Executor, userId: number, appId: number) {
  return db.selectFrom('oauth_consents').select(['scopes']).where('user_id', '=', userId).where('app_id', '=', appId).executeTakeFirst();
}

/** Records a consent, or widens the one recorded to `scopes` as well (one statement: concurrent consents both count). */
export async function saveConsent(db: Executor, userId: number, appId: number, scopes: number, now: number): Promise<void> {
  await db
    .insertInto('oauth_consents')
    .values({ user_id: userId, app_id: appId, scopes, granted_at: now })
    .onConflict((conflict) =>
      conflict
        .columns(['user_id', 'app_id'])
        .doUpdateSet({ scopes: sql<number>`oauth_consents.scopes | excluded.scopes`, granted_at: now }),
    )
    .execute();
}

/** The apps a user consented to, with their names, newest consent first. */
export async function consentsOf(db: Executor, userId: number) {
  return db
    .selectFrom('oauth_consents')
    .innerJoin('oauth_apps', 'oauth_apps.app_id', 'oauth_consents.app_id')
    .select(['oauth_consents.app_id', 'oauth_apps.name', 'oauth_consents.scopes', 'oauth_consents.granted_at'])
    .where('oauth_consents.user_id', '=', userId)
    .orderBy('oauth_consents.granted_at', 'desc')
    .orderBy('oauth_consents.app_id')
    .execute();
}

/** Forgets a consent; false when there was none. */
export async function deleteConsent(trx: Executor, userId: number, appId: number): Promise<boolean> {
  const result = await trx.deleteFrom('oauth_consents').where('user_id', '=', userId).where('app_id', '=', appId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
