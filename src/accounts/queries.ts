import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../db/connection.js';
import type { AccountTokensTable, UsersTable } from '../db/tables.js';

type UserColumn = keyof UsersTable & string;
type UserRow<C extends UserColumn> = Pick<Selectable<UsersTable>, C>;

// Kysely types a selection of generic columns by an expression TypeScript cannot reduce to
// the Pick it is; the casts name it.
function userById<C extends UserColumn>(db: Executor, userId: number, columns: readonly C[]) {
  return db.selectFrom('users').select(columns).where('user_id', '=', userId);
}

/** These columns of a user's row; undefined when there is no such user. */
export async function findUser<C extends UserColumn>(db: Executor, userId: number, columns: readonly C[]): Promise<UserRow<C> | undefined> {
  return (await userById(db, userId, columns).executeTakeFirst()) as UserRow<C> | undefined;
}

/** These columns of a user's row, which must exist. */
export async function getUser<C extends UserColumn>(db: Executor, userId: number, columns: readonly C[]): Promise<UserRow<C>> {
  return (await userById(db, userId, columns).executeTakeFirstOrThrow()) as unknown as UserRow<C>;
}

/** The account with this (normalised) e-mail address. */
export async function userWithEmail(db: Executor, email: string): Promise<{ user_id: number; bot_owner_id: number | null } | undefined> {
  return db.selectFrom('users').select(['user_id', 'bot_owner_id']).where('email', '=', email).executeTakeFirst();
}

/** Whether an account has this domain, whatever its case (`domain` in lower case). */
/** Those of `emails` that an account has. */
export async function registeredEmails(db: Executor, emails: readonly string[]): Promise<string[]> {
  const rows = await db.selectFrom('users').select('email').where('email', 'in', emails).execute();
  return rows.map((row) => row.email as string);
}

export async function domainIsTaken(db: Executor, domain: string): Promise<boolean> {
  const owner = await db
    .selectFrom('users')
    .select('user_id')
    .where((eb) => eb(eb.fn('lower', ['domain']), '=', domain))
    .executeTakeFirst();
  return owner !== undefined;
}

/** Adds an account; its id. */
export async function insertUser(trx: Executor, values: Insertable<UsersTable>): Promise<number> {
  const row = await trx.insertInto('users').values(values).returning('user_id').executeTakeFirstOrThrow();
  return row.user_id;
}

export async function updateUser(trx: Executor, userId: number, columns: Partial<Selectable<UsersTable>>): Promise<void> {
  await trx.updateTable('users').set(columns).where('user_id', '=', userId).execute();
}

/** Keeps a new TOTP secret (sealed) aside for confirmation, unless two-factor sign-in is on. */
export async function setPendingTotp(db: Executor, userId: number, sealed: string): Promise<void> {
  await db.updateTable('users').set({ totp_pending: sealed }).where('user_id', '=', userId).where('totp_secret', 'is', null).execute();
}

/** Makes the pending secret the TOTP secret if it is still `pending` and none is on; false otherwise. */
export async function enableTotp(trx: Executor, userId: number, pending: string, lastStep: number): Promise<boolean> {
  const enabled = await trx
    .updateTable('users')
    .set({ totp_secret: pending, totp_pending: null, totp_last_step: lastStep })
    .where('user_id', '=', userId)
    .where('totp_pending', '=', pending)
    .where('totp_secret', 'is', null)
    .executeTakeFirst();
  return Number(enabled.numUpdatedRows) > 0;
}

/**
 * Switches two-factor sign-in off, with its recovery codes and any setup in progress: only while
 * its secret is still `secret` when one is given (a disable that proved the code of that secret),
 * whatever it is otherwise.
 */
export async function endTwoFactor(trx: Executor, userId: number, secret?: string): Promise<void> {
  let update = trx.updateTable('users').set({ totp_secret: null, totp_last_step: null, totp_pending: null }).where('user_id', '=', userId);
  if (secret !== undefined) update = update.where('totp_secret', '=', secret);
  await update.execute();
  await deleteRecoveryCodes(trx, userId);
}

export async function deleteRecoveryCodes(trx: Executor, userId: number): Promise<void> {
  await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
}

export async function insertAccountToken(trx: Executor, token: Insertable<AccountTokensTable>): Promise<void> {
  await trx.insertInto('account_tokens').values(token).execute();
}

/** Ends every unused token of a user for `purpose`. */
export async function retireAccountTokens(
  trx: Executor,
  userId: number,
  purpose: AccountTokensTable['purpose'],
  now: number,
): Promise<void> {
  await trx
    .updateTable('account_tokens')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .execute();
}

/** Ends a user's unused e-mail confirmations that name an address other than `current`: the pending changes of address. */
export async function retirePendingEmailChanges(trx: Executor, userId: number, current: string | null, now: number): Promise<void> {
  let pending = trx
    .updateTable('account_tokens')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('purpose', '=', 'verify_email')
    .where('used_at', 'is', null)
    .where('email', 'is not', null);
  if (current !== null) pending = pending.where('email', '!=', current);
  await pending.execute();
}

export async function findAccountTokenRow(
  db: Executor,
  tokenHash: string,
): Promise<Pick<Selectable<AccountTokensTable>, 'user_id' | 'email' | 'used_at' | 'expires_at' | 'purpose'> | undefined> {
  return db
    .selectFrom('account_tokens')
    .select(['user_id', 'email', 'used_at', 'expires_at', 'purpose'])
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Uses a live token up in one conditional update; false when it is unknown, used, expired or of another purpose. */
export async function markAccountTokenUsed(
  trx: Executor,
  tokenHash: string,
  purpose: AccountTokensTable['purpose'],
  now: number,
): Promise<boolean> {
  const used = await trx
    .updateTable('account_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(used.numUpdatedRows) > 0;
}

export async function accountTokenOwner(db: Executor, tokenHash: string): Promise<{ user_id: number; email: string | null }> {
  return db.selectFrom('account_tokens').select(['user_id', 'email']).where('token_hash', '=', tokenHash).executeTakeFirstOrThrow();
}

/** A user's person (not bot) sessions that are not revoked and were made after `since`. */
export async function liveSessions(db: Executor, userId: number, since: number) {
  return db
    .selectFrom('sessions')
    .select(['session_id', 'family_id', 'created_at', 'last_used', 'ip', 'user_agent'])
    .where('user_id', '=', userId)
    .where('is_bot', '=', 0)
    .where('revoked_at', 'is', null)
    .where('created_at', '>', since)
    .execute();
}

/** When each of these sign-ins (session families) of a user began. */
export async function familiesBegan(db: Executor, userId: number, familyIds: string[]): Promise<{ family_id: string; began: number }[]> {
  return db
    .selectFrom('sessions')
    .select((eb) => ['family_id', eb.fn.min<number>('created_at').as('began')])
    .where('user_id', '=', userId)
    .where('family_id', 'in', familyIds)
    .groupBy('family_id')
    .execute();
}

/** A person session of the user, by id, that has not ended (signed out, revoked or refreshed). */
export async function findUserSession(db: Executor, userId: number, sessionId: number): Promise<{ family_id: string } | undefined> {
  return db
    .selectFrom('sessions')
    .select(['family_id'])
    .where('session_id', '=', sessionId)
    .where('user_id', '=', userId)
    .where('is_bot', '=', 0)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/** Revokes every live session of a sign-in. */
export async function revokeFamily(trx: Executor, familyId: string, now: number): Promise<void> {
  await trx.updateTable('sessions').set({ revoked_at: now }).where('family_id', '=', familyId).where('revoked_at', 'is', null).execute();
}

/** The user's live person sessions of every sign-in but `familyId`. */
export async function otherLiveSessionIds(trx: Executor, userId: number, familyId: string): Promise<number[]> {
  const others = await trx
    .selectFrom('sessions')
    .select('session_id')
    .where('user_id', '=', userId)
    .where('is_bot', '=', 0)
    .where('revoked_at', 'is', null)
    .where('family_id', '!=', familyId)
    .execute();
  return others.map((s) => s.session_id);
}

export async function revokeSessionIds(trx: Executor, sessionIds: number[], now: number): Promise<void> {
  await trx
    .updateTable('sessions')
    .set({ revoked_at: now })
    .where('session_id', 'in', sessionIds)
    .where('revoked_at', 'is', null)
    .execute();
}

/** A user's balance in kopecks (the market keeps it; account.info shows it). */
export async function readAccountBalance(db: Executor, userId: number): Promise<number> {
  const row = await db.selectFrom('balances').select('balance').where('user_id', '=', userId).executeTakeFirst();
  return row ? Number(row.balance) : 0;
}
