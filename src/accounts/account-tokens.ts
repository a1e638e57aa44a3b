import { ApiError, Code } from '../api/errors.js';
import type { Executor } from '../db/connection.js';
import type { AccountTokensTable } from '../db/tables.js';
import { newToken, sha256 } from '../infra/secrets.js';
import {
  accountTokenOwner,
  findAccountTokenRow,
  getUser,
  insertAccountToken,
  markAccountTokenUsed,
  retireAccountTokens,
  retirePendingEmailChanges,
} from './queries.js';

/** One-time tokens sent by e-mail live this long, seconds. */
export const ACCOUNT_TOKEN_TTL = 24 * 60 * 60;

export type TokenPurpose = AccountTokensTable['purpose'];

/**
 * A new one-time token (256 random bits) for `purpose`; only its SHA-256 is stored. Earlier
 * unused tokens of the same user and purpose stop working: the latest message is the one
 * that counts.
 */
export async function issueAccountToken(
  trx: Executor,
  request: { userId: number; purpose: TokenPurpose; email?: string; now: number },
): Promise<string> {
  const token = newToken();
  await retireAccountTokens(trx, request.userId, request.purpose, request.now);
  await insertAccountToken(trx, {
    token_hash: sha256(token),
    user_id: request.userId,
    purpose: request.purpose,
    email: request.email ?? null,
    expires_at: request.now + ACCOUNT_TOKEN_TTL,
    used_at: null,
    created_at: request.now,
  });
  return token;
}

export const badAccountToken = () => new ApiError(Code.BAD_ACCOUNT_TOKEN, 'the token is unknown, used or expired');

export interface AccountToken {
  user_id: number;
  email: string | null;
}

/** The live token for `purpose`, or 1604. Does not use it up. */
export async function findAccountToken(executor: Executor, token: string, purpose: TokenPurpose, now: number): Promise<AccountToken> {
  const row = await findAccountTokenRow(executor, sha256(token));
  if (!row || row.purpose !== purpose || row.used_at !== null || row.expires_at <= now) throw badAccountToken();
  return { user_id: row.user_id, email: row.email };
}

/**
 * Uses a token up: a conditional update, so of concurrent uses exactly one succeeds; the
 * others (and any later one) answer 1604.
 */
export async function useAccountToken(trx: Executor, token: string, purpose: TokenPurpose, now: number): Promise<AccountToken> {
  const hash = sha256(token);
  if (!(await markAccountTokenUsed(trx, hash, purpose, now))) throw badAccountToken();
  return accountTokenOwner(trx, hash);
}

/**
 * Inside the transaction that sets a new password (or, by an operator, a new address): the
 * account's reset tokens and its pending changes of address stop working, as whoever asked for
 * them may be the one the change is meant to shut out. A confirmation of the current address
 * stays.
 */
export async function retireOutstandingTokens(trx: Executor, userId: number, now: number): Promise<void> {
  const { email } = await getUser(trx, userId, ['email']);
  await retireAccountTokens(trx, userId, 'reset_password', now);
  await retirePendingEmailChanges(trx, userId, email, now);
}
