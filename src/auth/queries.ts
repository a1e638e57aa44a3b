import type { Insertable } from 'kysely';
import type { Executor } from '../db/connection.js';
import type { SessionsTable, SigninSourcesTable, TotpChallengesTable, UsersTable } from '../db/tables.js';

/* Users: what sign-in reads of an account, and bots. */

/** What auth.signin needs of the account with this e-mail address. */
export async function signinAccount(db: Executor, email: string) {
  return db
    .selectFrom('users')
    .select(['user_id', 'password_hash', 'totp_secret', 'global_ban', 'captcha_always', 'bot_owner_id'])
    .where('email', '=', email)
    .executeTakeFirst();
}

export async function credentialsOf(
  trx: Executor,
  userId: number,
): Promise<{ email: string | null; password_hash: string | null } | undefined> {
  return trx.selectFrom('users').select(['email', 'password_hash']).where('user_id', '=', userId).executeTakeFirst();
}

/** Replaces a password hash unless it was changed meanwhile; false when it was. */
export async function replacePasswordHash(db: Executor, userId: number, oldHash: string, newHash: string): Promise<boolean> {
  const upgraded = await db
    .updateTable('users')
    .set({ password_hash: newHash })
    .where('user_id', '=', userId)
    .where('password_hash', '=', oldHash)
    .executeTakeFirst();
  return Number(upgraded.numUpdatedRows) === 1;
}

/** Whether a user may have a session: banned, and a bot (whose owner) or a person. */
export async function sessionGate(trx: Executor, userId: number): Promise<{ global_ban: 0 | 1; bot_owner_id: number | null } | undefined> {
  return trx.selectFrom('users').select(['global_ban', 'bot_owner_id']).where('user_id', '=', userId).executeTakeFirst();
}

export async function botOwner(db: Executor, botId: number): Promise<{ bot_owner_id: number | null } | undefined> {
  return db.selectFrom('users').select(['bot_owner_id']).where('user_id', '=', botId).executeTakeFirst();
}

export async function countBots(trx: Executor, ownerId: number): Promise<number> {
  const { n } = await trx
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('bot_owner_id', '=', ownerId)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** Adds an account; its id. */
export async function insertUser(trx: Executor, values: Insertable<UsersTable>): Promise<number> {
  const row = await trx.insertInto('users').values(values).returning('user_id').executeTakeFirstOrThrow();
  return row.user_id;
}

/** What a TOTP sign-in needs of the account. */
export async function totpAccount(db: Executor, userId: number) {
  return db.selectFrom('users').select(['totp_secret', 'totp_last_step', 'global_ban']).where('user_id', '=', userId).executeTakeFirst();
}

/* Second factors. */

/** Records an authenticator's time step as used, if it is later than the last one; false when it is not. */
export async function recordTotpStep(trx: Executor, userId: number, step: number): Promise<boolean> {
  const recorded = await trx
    .updateTable('users')
    .set({ totp_last_step: step })
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .executeTakeFirst();
  return Number(recorded.numUpdatedRows) > 0;
}

/** Uses an unused recovery code up; false when there is none with this hash. */
export async function useRecoveryCode(trx: Executor, userId: number, codeHash: string, now: number): Promise<boolean> {
  const used = await trx
    .updateTable('recovery_codes')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(used.numUpdatedRows) > 0;
}

/** The user's recovery codes become these. */
export async function replaceRecoveryCodeHashes(trx: Executor, userId: number, codeHashes: string[]): Promise<void> {
  await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  await trx
    .insertInto('recovery_codes')
    .values(codeHashes.map((codeHash) => ({ user_id: userId, code_hash: codeHash, used_at: null })))
    .execute();
}

export async function insertTotpChallenge(executor: Executor, challenge: Insertable<TotpChallengesTable>): Promise<void> {
  await executor.insertInto('totp_challenges').values(challenge).execute();
}

export async function findTotpChallenge(db: Executor, challengeHash: string) {
  return db
    .selectFrom('totp_challenges')
    .select(['user_id', 'ip', 'expires_at', 'failures', 'used_at'])
    .where('challenge_hash', '=', challengeHash)
    .executeTakeFirst();
}

/** Counts an attempt of an unused challenge with fewer than `maxFailures`; false when there is none such. */
export async function countTotpAttempt(db: Executor, challengeHash: string, maxFailures: number): Promise<boolean> {
  const counted = await db
    .updateTable('totp_challenges')
    .set((eb) => ({ failures: eb('failures', '+', 1) }))
    .where('challenge_hash', '=', challengeHash)
    .where('used_at', 'is', null)
    .where('failures', '<', maxFailures)
    .executeTakeFirst();
  return Number(counted.numUpdatedRows) > 0;
}

export async function totpChallengeUse(db: Executor, challengeHash: string): Promise<{ used_at: number | null } | undefined> {
  return db.selectFrom('totp_challenges').select(['used_at']).where('challenge_hash', '=', challengeHash).executeTakeFirst();
}

/** Uses an unused challenge up; false when it was used already. */
export async function useTotpChallenge(trx: Executor, challengeHash: string, now: number): Promise<boolean> {
  const used = await trx
    .updateTable('totp_challenges')
    .set({ used_at: now })
    .where('challenge_hash', '=', challengeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(used.numUpdatedRows) > 0;
}

/* Sessions. */

export async function insertSession(trx: Executor, session: Insertable<SessionsTable>): Promise<void> {
  await trx.insertInto('sessions').values(session).execute();
}

/** Revokes the live sessions of an app (of one user's, or of every user's); answers their ids. */
export async function revokeAppSessions(trx: Executor, appId: number, userId: number | undefined, now: number): Promise<number[]> {
  let query = trx.updateTable('sessions').set({ revoked_at: now }).where('app_id', '=', appId).where('revoked_at', 'is', null);
  if (userId !== undefined) query = query.where('user_id', '=', userId);
  const rows = await query.returning('session_id').execute();
  return rows.map((row) => row.session_id);
}

/** Revokes every live session of a user. */
export async function revokeUserSessions(trx: Executor, userId: number, now: number): Promise<void> {
  await trx.updateTable('sessions').set({ revoked_at: now }).where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
}

/** Revokes every session of a user (bot tokens included) and any sign-in waiting for its TOTP code. */
export async function endAllSessionsIn(trx: Executor, userId: number, now: number): Promise<void> {
  await revokeUserSessions(trx, userId, now);
  await endTotpChallenges(trx, userId, now);
}

/** Ends every sign-in of a user waiting for its TOTP code. */
export async function endTotpChallenges(trx: Executor, userId: number, now: number): Promise<void> {
  await trx.updateTable('totp_challenges').set({ used_at: now }).where('user_id', '=', userId).where('used_at', 'is', null).execute();
}

export async function sessionByRefreshHash(db: Executor, refreshHash: string) {
  return db
    .selectFrom('sessions')
    .select(['session_id', 'user_id', 'family_id', 'created_at', 'revoked_at', 'refreshed_at', 'scopes', 'app_id'])
    .where('refresh_hash', '=', refreshHash)
    .executeTakeFirst();
}

/** Ends a session by rotation, if neither rotated nor revoked yet; false otherwise. */
export async function rotateSession(trx: Executor, sessionId: number, now: number): Promise<boolean> {
  const used = await trx
    .updateTable('sessions')
    .set({ refreshed_at: now, revoked_at: now })
    .where('session_id', '=', sessionId)
    .where('refreshed_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(used.numUpdatedRows) > 0;
}

export async function sessionRefreshedAt(db: Executor, sessionId: number): Promise<{ refreshed_at: number | null } | undefined> {
  return db.selectFrom('sessions').select(['refreshed_at']).where('session_id', '=', sessionId).executeTakeFirst();
}

/** The address of a sign-in's latest session. */
export async function latestFamilyAddress(db: Executor, familyId: string): Promise<{ ip: string | null } | undefined> {
  return db.selectFrom('sessions').select('ip').where('family_id', '=', familyId).orderBy('session_id', 'desc').limit(1).executeTakeFirst();
}

/** Revokes every live session of one sign-in. */
export async function revokeFamilySessions(db: Executor, familyId: string, now: number): Promise<void> {
  await db.updateTable('sessions').set({ revoked_at: now }).where('family_id', '=', familyId).where('revoked_at', 'is', null).execute();
}

/** Deletes user sessions older than `lifetime` and sessions revoked longer ago than that; how many. */
export async function deleteDeadSessions(db: Executor, now: number, lifetime: number): Promise<number> {
  const sessions = await db
    .deleteFrom('sessions')
    .where((eb) =>
      eb.or([
        eb.and([eb('is_bot', '=', 0), eb('created_at', '<', now - lifetime)]),
        eb.and([eb('revoked_at', 'is not', null), eb('revoked_at', '<', now - lifetime)]),
      ]),
    )
    .executeTakeFirst();
  return Number(sessions.numDeletedRows);
}

/** Deletes TOTP sign-ins that ended before `before`; how many. */
export async function deleteTotpChallengesBefore(db: Executor, before: number): Promise<number> {
  const challenges = await db.deleteFrom('totp_challenges').where('expires_at', '<', before).executeTakeFirst();
  return Number(challenges.numDeletedRows);
}

export async function sessionByAccessHash(db: Executor, accessHash: string) {
  return db
    .selectFrom('sessions')
    .select(['session_id', 'user_id', 'family_id', 'ip', 'is_bot', 'expires_at', 'revoked_at', 'created_at', 'last_used', 'scopes'])
    .where('access_hash', '=', accessHash)
    .executeTakeFirst();
}

/** Whether these sessions are revoked, and when they expire (sessions that are gone are absent). */
export async function sessionEnds(db: Executor, sessionIds: readonly number[]) {
  return db.selectFrom('sessions').select(['session_id', 'expires_at', 'revoked_at']).where('session_id', 'in', sessionIds).execute();
}

export async function setSessionLastUsed(db: Executor, sessionId: number, now: number): Promise<void> {
  await db.updateTable('sessions').set({ last_used: now }).where('session_id', '=', sessionId).execute();
}

/* Known sign-in sources (addresses and devices). */

/** The user's sources seen after `since` that are this address or this device. */
export async function matchingSources(
  db: Executor,
  userId: number,
  since: number,
  source: { ip: string; deviceHash?: string },
): Promise<{ kind: SigninSourcesTable['kind']; value: string }[]> {
  const { ip, deviceHash } = source;
  return db
    .selectFrom('signin_sources')
    .select(['kind', 'value'])
    .where('user_id', '=', userId)
    .where('last_seen', '>', since)
    .where((eb) =>
      eb.or([
        eb.and([eb('kind', '=', 'ip'), eb('value', '=', ip)]),
        ...(deviceHash ? [eb.and([eb('kind', '=', 'device'), eb('value', '=', deviceHash)])] : []),
      ]),
    )
    .execute();
}

/** Whether the user has this device, seen after `since`. */
export async function deviceIsKnown(db: Executor, userId: number, deviceHash: string, since: number): Promise<boolean> {
  const row = await db
    .selectFrom('signin_sources')
    .select('value')
    .where('user_id', '=', userId)
    .where('kind', '=', 'device')
    .where('value', '=', deviceHash)
    .where('last_seen', '>', since)
    .executeTakeFirst();
  return row !== undefined;
}

/** Records a source as seen now, and keeps only the user's `keep` most recent of its kind. */
export async function touchSource(
  trx: Executor,
  userId: number,
  source: { kind: SigninSourcesTable['kind']; value: string },
  now: number,
  keep: number,
): Promise<void> {
  const { kind, value } = source;
  await trx
    .insertInto('signin_sources')
    .values({ user_id: userId, kind, value, last_seen: now })
    .onConflict((oc) => oc.columns(['user_id', 'kind', 'value']).doUpdateSet({ last_seen: now }))
    .execute();
  const kept = await trx
    .selectFrom('signin_sources')
    .select('last_seen')
    .where('user_id', '=', userId)
    .where('kind', '=', kind)
    .orderBy('last_seen', 'desc')
    .offset(keep - 1)
    .limit(1)
    .executeTakeFirst();
  if (kept)
    await trx
      .deleteFrom('signin_sources')
      .where('user_id', '=', userId)
      .where('kind', '=', kind)
      .where('last_seen', '<', kept.last_seen)
      .execute();
}

/** Forgets sources last seen before `before`; how many. */
export async function deleteSourcesSeenBefore(db: Executor, before: number): Promise<number> {
  const result = await db.deleteFrom('signin_sources').where('last_seen', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
