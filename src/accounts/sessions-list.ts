import { ApiError, Code, badParam } from '../api/errors.js';
import type { Caller } from '../api/method.js';
import { dialectAdapter } from '../db/dialect.js';
import { nowSeconds, type Services } from '../services.js';
import { announceSessionsRevoked } from '../auth/tokens.js';

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
  const live = await kysely
    .selectFrom('sessions')
    .select(['session_id', 'family_id', 'created_at', 'last_used', 'ip', 'user_agent'])
    .where('user_id', '=', caller.userId)
    .where('is_bot', '=', 0)
    .where('revoked_at', 'is', null)
    .where('created_at', '>', now - services.config.refreshTtl)
    .execute();
  if (live.length === 0) return { sessions: [] };
  const started = await kysely
    .selectFrom('sessions')
    .select((eb) => ['family_id', eb.fn.min<number>('created_at').as('began')])
    .where('user_id', '=', caller.userId)
    .where('family_id', 'in', [...new Set(live.map((s) => s.family_id))])
    .groupBy('family_id')
    .execute();
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
 * stops accepting them before this answers.
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
    const row = await kysely
      .selectFrom('sessions')
      .select(['family_id', 'revoked_at'])
      .where('session_id', '=', request.sessionId)
      .where('user_id', '=', caller.userId)
      .where('is_bot', '=', 0)
      .executeTakeFirst();
    if (!row) throw noSuchSession();
    const now = nowSeconds(services);
    await kysely.transaction().execute(async (trx) => {
      await dialectAdapter.lockUsers(trx, services.db.dialect, [caller.userId]);
      await trx
        .updateTable('sessions')
        .set({ revoked_at: now })
        .where('family_id', '=', row.family_id)
        .where('revoked_at', 'is', null)
        .execute();
    });
    await announceSessionsRevoked(services, { familyId: row.family_id });
    return;
  }
  const now = nowSeconds(services);
  const ended = await kysely.transaction().execute(async (trx) => {
    // A refresh of another sign-in locks the user's row too: it either finishes first (its new
    // session is found here) or finds its session revoked.
    await dialectAdapter.lockUsers(trx, services.db.dialect, [caller.userId]);
    const others = await trx
      .selectFrom('sessions')
      .select('session_id')
      .where('user_id', '=', caller.userId)
      .where('is_bot', '=', 0)
      .where('revoked_at', 'is', null)
      .where('family_id', '!=', caller.familyId)
      .execute();
    const ids = others.map((s) => s.session_id);
    if (ids.length > 0)
      await trx.updateTable('sessions').set({ revoked_at: now }).where('session_id', 'in', ids).where('revoked_at', 'is', null).execute();
    // A sign-in waiting for its TOTP code would become another session.
    await trx
      .updateTable('totp_challenges')
      .set({ used_at: now })
      .where('user_id', '=', caller.userId)
      .where('used_at', 'is', null)
      .execute();
    return ids;
  });
  if (ended.length > 0) await announceSessionsRevoked(services, { sessionIds: ended });
}
