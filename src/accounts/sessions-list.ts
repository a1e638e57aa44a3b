import { ApiError, Code, badParam } from '../api/errors.js';
import type { Caller } from '../api/method.js';
import { dialectAdapter } from '../db/dialect.js';
import { nowSeconds, type Services } from '../services.js';
import { announceSessionsRevoked, endTotpChallenges } from '../auth/index.js';
import { familiesBegan, findUserSession, liveSessions, otherLiveSessionIds, revokeFamily, revokeSessionIds } from './queries.js';

export interface SessionEntry {
  session_id: number;
  created: number;
  last_used: number;
  ip: string;
  user_agent: string;
  current: 0 | 1;
}

/**
 * account.sessionsGet: the caller's sign-ins that can still be used (their refresh token
 * has not expired), newest first. A sign-in's refreshes keep it one entry: `session_id` is
 * its latest session, `created` when it began.
 */
export async function listSessions(services: Services, caller: Caller): Promise<{ sessions: SessionEntry[] }> {
  const { kysely } = services.db;
  const now = nowSeconds(services);
  const live = await liveSessions(kysely, caller.userId, now - services.config.refreshTtl);
  if (live.length === 0) return { sessions: [] };
  const started = await familiesBegan(kysely, caller.userId, [...new Set(live.map((s) => s.family_id))]);
  const began = new Map(started.map((s) => [s.family_id, Number(s.began)]));
  const sessions = live.map((s) => ({
    session_id: s.session_id,
    created: began.get(s.family_id) ?? s.created_at,
    last_used: Math.max(s.last_used ?? s.created_at, s.created_at),
    ip: s.ip ?? '',
    user_agent: s.user_agent ?? '',
    current: s.family_id === caller.familyId ? (1 as const) : (0 as const),
  }));
  sessions.sort((a, b) => b.created - a.created || b.session_id - a.session_id);
  return { sessions };
}

const noSuchSession = () => new ApiError(Code.NO_SUCH_SESSION, 'the caller has no such session');

/**
 * account.sessionsRevoke: ends one sign-in of the caller (`session_id`, from
 * account.sessionsGet; the current one too) or every other one (`all_others`). Every process
 * stops accepting them before this answers. A session that has ended already answers 1607.
 */
export async function revokeSessions(
  services: Services,
  caller: Caller,
  request: { sessionId?: number; allOthers?: 0 | 1 },
): Promise<void> {
  const { kysely } = services.db;
  if ((request.sessionId === undefined) === (request.allOthers !== 1))
    throw badParam('session_id', 'give either session_id or all_others=1');
  if (request.sessionId !== undefined) {
    const sessionId = request.sessionId;
    const now = nowSeconds(services);
    // Looked up with the user's row locked: of two concurrent revocations of one session, the second answers 1607.
    const familyId = await kysely.transaction().execute(async (trx) => {
      await dialectAdapter.lockUsers(trx, services.db.dialect, [caller.userId]);
      const row = await findUserSession(trx, caller.userId, sessionId);
      if (!row) throw noSuchSession();
      await revokeFamily(trx, row.family_id, now);
      return row.family_id;
    });
    await announceSessionsRevoked(services, { familyId });
    return;
  }
  const now = nowSeconds(services);
  const ended = await kysely.transaction().execute(async (trx) => {
    // A refresh of another sign-in locks the user's row too: it either finishes first (its new
    // session is found here) or finds its session revoked.
    await dialectAdapter.lockUsers(trx, services.db.dialect, [caller.userId]);
    const ids = await otherLiveSessionIds(trx, caller.userId, caller.familyId);
    if (ids.length > 0) await revokeSessionIds(trx, ids, now);
    // A sign-in waiting for its TOTP code would become another session.
    await endTotpChallenges(trx, caller.userId, now);
    return ids;
  });
  if (ended.length > 0) await announceSessionsRevoked(services, { sessionIds: ended });
}
