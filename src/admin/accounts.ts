import { announceUsersChanged, checkNewPassword, nickColumns, normaliseEmail, type Rank, rankColumn, storedRank } from '../users/index.js';
import type { Static } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import type { Services } from '../services.js';
import { nowSeconds } from '../services.js';
import { ownTransaction, type InTransaction } from '../db/connection.js';
import type { InventoryPrivacy, UsersTable } from '../db/tables.js';
import type { Flag } from '../db/flags.js';
import { dialectAdapter } from '../db/dialect.js';
import { ApiError, Code, badParam } from '../api/errors.js';
import { announceSessionsRevoked, endAllSessionsIn } from '../auth/index.js';
import { WorldUser } from '../world/index.js';
import type { AdminAccount } from './schemas.js';
import { deleteRecoveryCodes, insertAccount, isTaken, loadAccount, updateAccountColumns, type AccountRow } from './queries.js';
import { retireOutstandingTokens } from '../accounts/index.js';

export type { AccountRow } from './queries.js';

/** Profile fields an operator may set on create and change on update; absent means unchanged. */
export interface ProfileChanges {
  nick?: string;
  /** '' clears it */
  domain?: string;
  gender?: Flag;
  avatar?: string;
  /** '' clears it */
  avatar_key?: string;
  /** '' clears it */
  profile_cover?: string;
  approved?: Flag;
  vip?: Flag;
  moderator?: Flag;
  superadmin?: Flag;
  /** One of the four forms; null clears it. */
  rank?: Rank | null;
  games?: number;
  games_wins?: number;
  xp?: number;
  xp_level?: number;
}

export interface AccountChanges extends ProfileChanges {
  email?: string;
  password?: string;
}

const DOMAIN_PATTERN = new RegExp(WorldUser.properties.domain.pattern!);

/** An account as operators see it: the profile plus e-mail, ban, mute, privacy, TOTP and bot ownership. */
export function accountObject(row: AccountRow): Static<typeof AdminAccount> {
  const rank = storedRank(row.rank);
  return {
    user_id: row.user_id,
    ...(row.email !== null ? { email: row.email } : {}),
    ...(row.domain !== null ? { domain: row.domain } : {}),
    nick: row.nick,
    nicks_old: JSON.parse(row.nicks_old) as string[],
    gender: row.gender,
    avatar: row.avatar,
    ...(row.avatar_key !== null ? { avatar_key: row.avatar_key } : {}),
    ...(row.profile_cover !== null ? { profile_cover: row.profile_cover } : {}),
    approved: row.approved,
    vip: row.vip,
    moderator: row.moderator,
    superadmin: row.superadmin,
    ...(rank !== undefined ? { rank } : {}),
    games: row.games,
    games_wins: row.games_wins,
    xp: row.xp,
    xp_level: row.xp_level,
    global_ban: row.global_ban,
    muted_until: row.muted_until ?? 0,
    inventory_privacy: row.inventory_privacy,
    totp: row.totp_secret !== null ? 1 : 0,
    ...(row.bot_owner_id !== null ? { bot_owner: row.bot_owner_id } : {}),
    created_at: row.created_at,
    last_seen: row.last_seen,
  };
}

export async function requireAccount(services: Services, userId: number): Promise<AccountRow> {
  const row = await loadAccount(services.db.kysely, userId);
  if (!row) throw new ApiError(Code.USER_NOT_FOUND, `user ${userId} does not exist`);
  return row;
}

function checkDomain(domain: string): void {
  if (domain !== '' && !DOMAIN_PATTERN.test(domain))
    throw badParam('domain', 'may hold letters, digits, "_", "." and "-", and must not be all digits');
}

/** The columns a set of profile changes writes. */
function profileColumns(changes: ProfileChanges): Partial<Selectable<UsersTable>> {
  const columns: Record<string, unknown> = {};
  const copy = ['nick', 'gender', 'avatar', 'approved', 'vip', 'moderator', 'superadmin', 'games', 'games_wins', 'xp', 'xp_level'] as const;
  for (const name of copy) if (changes[name] !== undefined) columns[name] = changes[name];
  if (changes.nick !== undefined) Object.assign(columns, nickColumns(changes.nick));
  for (const name of ['domain', 'avatar_key', 'profile_cover'] as const)
    if (changes[name] !== undefined) columns[name] = changes[name] === '' ? null : changes[name];
  if (changes.rank !== undefined) columns.rank = rankColumn(changes.rank ?? undefined);
  return columns as Partial<Selectable<UsersTable>>;
}

function isUniqueViolation(error: unknown): error is Error {
  const code = (error as { code?: unknown }).code;
  return code === '23505' || (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT_UNIQUE'));
}

/** Turns a unique-index violation on users into the parameter that caused it. */
function explainUniqueViolation(error: unknown): never {
  if (isUniqueViolation(error)) {
    if (/email/.test(error.message)) throw badParam('email', 'is already used by another account');
    if (/domain/.test(error.message)) throw badParam('domain', 'is already used by another account');
  }
  throw error;
}

async function checkFree(services: Services, column: 'email' | 'domain', value: string | undefined, exceptUserId?: number): Promise<void> {
  if (value === undefined || value === '') return;
  if (await isTaken(services.db.kysely, column, value, exceptUserId)) throw badParam(column, 'is already used by another account');
}

export interface NewAccount extends ProfileChanges {
  nick: string;
  email?: string;
  password?: string;
  botOwnerId?: number;
}

/** Creates an account (a person with e-mail and password, or a bot of an owner) and returns its id. */
export async function createAccount(
  services: Services,
  account: NewAccount,
  inTransaction: InTransaction = ownTransaction(services.db),
): Promise<number> {
  const email = account.email === undefined ? undefined : normaliseEmail(account.email);
  if (account.password !== undefined) checkNewPassword(account.password);
  if (account.domain !== undefined) checkDomain(account.domain);
  await checkFree(services, 'email', email);
  await checkFree(services, 'domain', account.domain);
  const passwordHash = account.password === undefined ? null : await services.auth.passwords.hash(account.password);
  let userId: number;
  try {
    userId = await inTransaction((trx) =>
      insertAccount(trx, {
        email: email ?? null,
        password_hash: passwordHash,
        totp_secret: null,
        totp_last_step: null,
        bot_owner_id: account.botOwnerId ?? null,
        created_at: nowSeconds(services),
        ...profileColumns(account),
        ...nickColumns(account.nick),
      }),
    );
  } catch (error) {
    explainUniqueViolation(error);
  }
  // Caches may hold the id or domain as "no such user".
  await announceUsersChanged(services, [userId]);
  return userId;
}

/**
 * Applies profile and account changes in one transaction with the user's row locked, so
 * concurrent nick changes each keep their predecessor in `nicks_old`. A new password ends
 * every session of the account. Returns the account as it is afterwards.
 */
export async function updateAccount(
  services: Services,
  userId: number,
  changes: AccountChanges,
  inTransaction: InTransaction = ownTransaction(services.db),
): Promise<AccountRow> {
  const email = changes.email === undefined ? undefined : normaliseEmail(changes.email);
  if (changes.password !== undefined) checkNewPassword(changes.password);
  if (changes.domain !== undefined) checkDomain(changes.domain);
  if (changes.nick !== undefined && changes.nick.trim() === '') throw badParam('nick', 'must not be empty');
  await checkFree(services, 'email', email, userId);
  await checkFree(services, 'domain', changes.domain, userId);
  const passwordHash = changes.password === undefined ? undefined : await services.auth.passwords.hash(changes.password);
  let updated: AccountRow;
  try {
    updated = await inTransaction(async (trx) => {
      await dialectAdapter.lockUsers(trx, services.db.dialect, [userId]);
      const current = await loadAccount(trx, userId);
      if (!current) throw new ApiError(Code.USER_NOT_FOUND, `user ${userId} does not exist`);
      const columns: Record<string, unknown> = profileColumns(changes);
      if (changes.nick !== undefined && changes.nick !== current.nick) {
        const old = JSON.parse(current.nicks_old) as string[];
        columns.nicks_old = JSON.stringify([...old, current.nick]);
      }
      if (email !== undefined) columns.email = email;
      if (passwordHash !== undefined) columns.password_hash = passwordHash;
      if (Object.keys(columns).length > 0) await updateAccountColumns(trx, userId, columns);
      if (passwordHash !== undefined) await endAllSessionsIn(trx, userId, nowSeconds(services));
      if (passwordHash !== undefined || (email !== undefined && email !== current.email))
        await retireOutstandingTokens(trx, userId, nowSeconds(services));
      return (await loadAccount(trx, userId))!;
    });
  } catch (error) {
    explainUniqueViolation(error);
  }
  if (passwordHash !== undefined) await announceSessionsRevoked(services, { userId });
  await announceUsersChanged(services, [userId]);
  return updated;
}

/** Sets one or more account state columns of an existing user and announces the change; a ban ends every session. */
export async function setAccountState(
  services: Services,
  userId: number,
  state: { global_ban?: Flag; muted_until?: number | null; inventory_privacy?: InventoryPrivacy; totp_secret?: string | null },
  inTransaction: InTransaction = ownTransaction(services.db),
): Promise<AccountRow> {
  const columns: Record<string, unknown> = { ...state };
  // A new secret starts with no code used yet.
  if ('totp_secret' in state) columns.totp_last_step = null;
  // A new secret (or none) also ends a setup in progress and the recovery codes of the old one.
  if ('totp_secret' in state) columns.totp_pending = null;
  const row = await inTransaction(async (trx) => {
    if (!(await updateAccountColumns(trx, userId, columns))) throw new ApiError(Code.USER_NOT_FOUND, `user ${userId} does not exist`);
    if ('totp_secret' in state) await deleteRecoveryCodes(trx, userId);
    if (state.global_ban === 1) await endAllSessionsIn(trx, userId, nowSeconds(services));
    return (await loadAccount(trx, userId))!;
  });
  if (state.global_ban === 1) await announceSessionsRevoked(services, { userId });
  await announceUsersChanged(services, [userId]);
  return row;
}
