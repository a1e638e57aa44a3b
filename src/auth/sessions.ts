import { randomUUID } from 'node:crypto';
import { ApiError, Code, authError } from '../api/errors.js';
import type { Caller } from '../api/method.js';
import { ownTransaction, type Executor } from '../db/connection.js';
import { dialectAdapter } from '../db/dialect.js';
import { newToken, sha256 } from '../infra/secrets.js';
import { nowSeconds, type Services } from '../services.js';
import { requestAddress } from '../infra/ip.js';
import { announceSessionsRevoked } from './tokens.js';
import {
  deleteDeadSessions,
  deleteTotpChallengesBefore,
  endAllSessionsIn,
  insertSession,
  latestFamilyAddress,
  revokeFamilySessions,
  revokeUserSessions,
  rotateSession,
  sessionByRefreshHash,
  sessionGate,
  sessionRefreshedAt,
} from './queries.js';

/** What auth.signin, auth.totpVerify, auth.refresh and bots.getToken answer. */
export interface SessionData {
  user_id: number;
  access_token: string;
  /** seconds; 0 for bot tokens, which do not expire */
  expires_in: number;
  /** the same value as expires_in (the reference service sends both) */
  expires: number;
  refresh_token?: string;
  /** sign-in only: the device token to send with later sign-ins of this account */
  device_token?: string;
}

/** Characters of a client's User-Agent kept for the sessions list. */
const USER_AGENT_MAX = 256;

const REUSED_REFRESH_TOKEN = 'the refresh token was already used: every session of this sign-in is revoked, sign in again';
/** A rotated refresh token presented again by the client that rotated it, within the grace period. */
const REFRESHED_MOMENTS_AGO =
  'the refresh token was already used moments ago from this address: the sign-in is kept, use the session that refresh answered';
const INVALID_REFRESH_TOKEN = 'the refresh token is unknown, expired or revoked';

/**
 * Creates a user session (access and refresh token) inside the caller's transaction, after
 * locking the user's row, so a ban committed meanwhile cannot be missed: either the ban
 * waits for this session and then revokes it, or this sees the ban and refuses.
 */
export async function issueUserSessionIn(
  services: Services,
  trx: Executor,
  userId: number,
  ip: string,
  familyId: string = randomUUID(),
  userAgent?: string,
): Promise<SessionData> {
  await dialectAdapter.lockUsers(trx, services.db.dialect, [userId]);
  const user = await sessionGate(trx, userId);
  // Bots get their tokens from bots.getToken only (those are bound to the bot's allow-list).
  if (!user || user.bot_owner_id !== null) throw authError('the account cannot sign in');
  if (user.global_ban === 1) throw new ApiError(Code.GLOBAL_BAN, 'the account is globally blocked');
  const now = nowSeconds(services);
  const ttl = services.config.sessionTtl;
  const accessToken = newToken();
  const refreshToken = newToken();
  await insertSession(trx, {
    user_id: userId,
    family_id: familyId,
    access_hash: sha256(accessToken),
    refresh_hash: sha256(refreshToken),
    ip: requestAddress(ip),
    is_bot: 0,
    expires_at: now + ttl,
    created_at: now,
    user_agent: userAgent === undefined ? null : userAgent.slice(0, USER_AGENT_MAX),
    last_used: now,
  });
  return { user_id: userId, access_token: accessToken, expires_in: ttl, expires: ttl, refresh_token: refreshToken };
}

/** Starts a new sign-in (a new session family) for a user whose credentials were checked. */
export async function issueUserSession(services: Services, userId: number, ip: string, userAgent?: string): Promise<SessionData> {
  return services.db.kysely.transaction().execute((trx) => issueUserSessionIn(services, trx, userId, ip, undefined, userAgent));
}

/**
 * A new token for a bot, bound to `ip` and never expiring. Every earlier token of the bot is
 * revoked in the same transaction (the bot's row is locked, so concurrent reissues leave
 * exactly one token alive), then every process is told to forget them.
 */
export async function issueBotSession(services: Services, botId: number, ip: string): Promise<SessionData> {
  const accessToken = newToken();
  await services.db.kysely.transaction().execute(async (trx) => {
    await dialectAdapter.lockUsers(trx, services.db.dialect, [botId]);
    const bot = await sessionGate(trx, botId);
    if (bot?.global_ban === 1) throw new ApiError(Code.GLOBAL_BAN, 'the bot account is globally blocked');
    const now = nowSeconds(services);
    await revokeUserSessions(trx, botId, now);
    await insertSession(trx, {
      user_id: botId,
      family_id: randomUUID(),
      access_hash: sha256(accessToken),
      refresh_hash: null,
      ip,
      is_bot: 1,
      expires_at: 0,
      created_at: now,
    });
  });
  await announceSessionsRevoked(services, { userId: botId });
  return { user_id: botId, access_token: accessToken, expires_in: 0, expires: 0 };
}

/**
 * Rotates a refresh token: the presented session ends (its access token too) and a new one
 * of the same family begins, bound to the caller's current address.
 *
 * A refresh token presented after it was rotated was in two hands (RFC 9700, 4.14.2): the
 * whole family is revoked. Of concurrent refreshes with one token exactly one gets a Session;
 * the others are reuses. Within `refreshReuseGrace` seconds of the rotation (10 by default) and
 * from the same address, a reuse is taken for such a race by one client: it answers 1 and the
 * winner's Session stays.
 */
export async function refreshSession(services: Services, refreshToken: string, ip: string, userAgent?: string): Promise<SessionData> {
  const { kysely } = services.db;
  const refreshHash = sha256(refreshToken);
  const row = await sessionByRefreshHash(kysely, refreshHash);
  if (!row) throw authError(INVALID_REFRESH_TOKEN);
  if (row.refreshed_at !== null) return reused(services, row.family_id, row.refreshed_at, ip);
  const now = nowSeconds(services);
  if (row.revoked_at !== null || row.created_at + services.config.refreshTtl <= now) throw authError(INVALID_REFRESH_TOKEN);

  const session = await kysely.transaction().execute(async (trx) => {
    // The user's row first, as every writer of a user's sessions locks it: a password change
    // ending all sessions meanwhile either comes before (this finds the session revoked) or after.
    await dialectAdapter.lockUsers(trx, services.db.dialect, [row.user_id]);
    // Another request rotated (or revoked) this token between our read and this update.
    if (!(await rotateSession(trx, row.session_id, now))) return null;
    try {
      return await issueUserSessionIn(services, trx, row.user_id, ip, row.family_id, userAgent);
    } catch (error) {
      if (error instanceof ApiError && error.code === Code.GLOBAL_BAN) throw authError(INVALID_REFRESH_TOKEN);
      throw error;
    }
  });
  if (session === null) {
    const after = await sessionRefreshedAt(kysely, row.session_id);
    if (after?.refreshed_at != null) return reused(services, row.family_id, after.refreshed_at, ip);
    throw authError(INVALID_REFRESH_TOKEN);
  }
  await announceSessionsRevoked(services, { sessionIds: [row.session_id] });
  return session;
}

/**
 * A rotated refresh token presented again. Within the grace period and from the address the
 * rotation was made for, it is the same client racing itself (two refreshes at once): it
 * answers 1 and the winner's session stays. Anything else is theft: the sign-in ends.
 */
async function reused(services: Services, familyId: string, refreshedAt: number, ip: string): Promise<never> {
  const grace = services.config.refreshReuseGrace;
  let racingItself = false;
  if (grace > 0 && nowSeconds(services) - refreshedAt < grace) {
    const latest = await latestFamilyAddress(services.db.kysely, familyId);
    racingItself = latest?.ip === requestAddress(ip);
  }
  if (racingItself) throw authError(REFRESHED_MOMENTS_AGO);
  await revokeFamily(services, familyId);
  throw authError(REUSED_REFRESH_TOKEN);
}

/** Revokes every session of one sign-in (its rotations included) in every process. */
export async function revokeFamily(services: Services, familyId: string): Promise<void> {
  await revokeFamilySessions(services.db.kysely, familyId, nowSeconds(services));
  await announceSessionsRevoked(services, { familyId });
}

/** Ends the caller's session: its access and refresh tokens stop working everywhere. */
export async function signOut(services: Services, caller: Caller): Promise<void> {
  await revokeFamily(services, caller.familyId);
}

/**
 * Revokes every session of a user (bot tokens included) and any sign-in waiting for its TOTP
 * code, then tells every process to stop accepting them. Used for bans, password changes and
 * the admin's "end all sessions".
 */
export async function revokeAllSessions(services: Services, userId: number, inTransaction = ownTransaction(services.db)): Promise<void> {
  const now = nowSeconds(services);
  await inTransaction((trx) => endAllSessionsIn(trx, userId, now));
  await announceSessionsRevoked(services, { userId });
}

/**
 * Deletes what can never be used again: user sessions past their refresh lifetime, revoked
 * sessions revoked longer ago than that, and TOTP sign-ins an hour past their end.
 */
export async function sweepSessions(
  services: Pick<Services, 'db' | 'clock' | 'config'>,
): Promise<{ sessions: number; challenges: number }> {
  const { kysely } = services.db;
  const now = nowSeconds(services);
  const lifetime = Math.max(services.config.refreshTtl, services.config.sessionTtl);
  const sessions = await deleteDeadSessions(kysely, now, lifetime);
  const challenges = await deleteTotpChallengesBefore(kysely, now - 3600);
  return { sessions, challenges };
}
