import type { Caller } from '../api/method.js';
import type { Database } from '../db/connection.js';
import type { Bus } from '../infra/bus.js';
import { SESSIONS_REVOKED, revokes, type Revocation } from '../infra/channels.js';
import { ChangeCache, attachCache, listen, type AttachedCache, type CacheConditions, type CacheCore } from '../infra/change-cache.js';
import type { Clock } from '../infra/clock.js';
import { sha256 } from '../infra/secrets.js';
import { requestAddress } from '../infra/ip.js';
import { sessionByAccessHash, sessionEnds, setSessionLastUsed } from './queries.js';

export interface ResolvedSession {
  caller: Caller;
  /** ms by the server's clock; 0 = never */
  expiresAt: number;
}

/** Why a session no longer works. */
export type SessionEnd = 'revoked' | 'expired';

/** Session ids per query of `endedSessions` (well under every database's limit of bound values). */
const ENDED_QUERY_CHUNK = 500;

interface CachedSession {
  caller: Caller;
  ip: string | null;
  /** ms; 0 = never */
  expiresAt: number;
  /** `last_used` as last written, seconds */
  lastUsed: number;
}

/** `sessions.last_used` is written at most this often per session, seconds. */
export const LAST_USED_EVERY = 60;

/** Seconds a cached session is trusted before it is read again: bounds how long a lost revocation notice can go unnoticed. */
const SESSION_LIFETIME = 60;
const MAX_SESSIONS = 100_000;

/** Resolved sessions by the SHA-256 of their access token. */
export class SessionCache extends ChangeCache<string, CachedSession> {
  constructor(conditions: CacheConditions) {
    super(conditions, { lifetime: SESSION_LIFETIME, maxEntries: MAX_SESSIONS });
  }
}

/**
 * Sessions kept where every revocation reaches this process. Revocations are announced with
 * `publishConfirmed`, so a revoked token stops working in every process before the revoking
 * call answers.
 */
export function attachSessionCache(core: CacheCore): Promise<AttachedCache<SessionCache>> {
  return attachCache(core, {
    name: 'sessions',
    create: (conditions) => new SessionCache(conditions),
    listeners: (cache) => [
      listen(SESSIONS_REVOKED, (revocation) => cache.invalidateWhere((session) => revokes(revocation, session.caller))),
    ],
  });
}

export interface TokenResolverOptions {
  db: Database;
  clock: Clock;
  bindToIp: boolean;
  /** Resolved sessions; undefined where revocations may not reach this process. */
  cache: SessionCache | undefined;
}

/**
 * Resolves access tokens to callers. Tokens are looked up by their SHA-256 hash; resolved
 * sessions are cached in memory, and every revocation (published on the bus by whichever
 * process made it) evicts them in every process before the revoking request answers: the
 * announcement waits until every process has confirmed it or has stopped trusting its cache.
 */
export class TokenResolver {
  constructor(private readonly options: TokenResolverOptions) {}

  /** The caller for a token, or null when it is unknown, expired, revoked or bound to another address. */
  async resolve(token: string, ip: string): Promise<Caller | null> {
    return (await this.resolveSession(token, ip))?.caller ?? null;
  }

  /** As `resolve`, with when the session expires (ms by the server's clock; 0 = never). */
  async resolveSession(token: string, ip: string): Promise<ResolvedSession | null> {
    const cached = this.resolveCached(token, ip);
    return cached !== undefined ? cached : this.resolveStored(token, ip);
  }

  /**
   * As `resolveSession` from this process's cache alone, with no database read: undefined when
   * the token's session is not there (`resolveStored` then reads it).
   */
  resolveCached(token: string, ip: string): ResolvedSession | null | undefined {
    if (token.length < 16 || token.length > 200) return null;
    const hash = sha256(token);
    const session = this.options.cache?.get(hash);
    return session === undefined ? undefined : this.checked(hash, session, ip);
  }

  /** As `resolveSession` for a token `resolveCached` did not find: its session read from the database. */
  async resolveStored(token: string, ip: string): Promise<ResolvedSession | null> {
    if (token.length < 16 || token.length > 200) return null;
    const hash = sha256(token);
    const cache = this.options.cache;
    const fill = cache?.startFill();
    const row = await sessionByAccessHash(this.options.db.kysely, hash);
    if (!row || row.revoked_at !== null) return null;
    const session: CachedSession = {
      caller: { userId: row.user_id, isBot: row.is_bot === 1, sessionId: row.session_id, familyId: row.family_id },
      ip: row.ip,
      expiresAt: row.expires_at * 1000,
      lastUsed: row.last_used ?? row.created_at,
    };
    // Not kept when a revocation arrived while the row was read: it may concern it.
    if (cache && fill !== undefined) cache.store(fill, hash, session);
    return this.checked(hash, session, ip);
  }

  /** The session found for a token, unless it has expired or is bound to another address. */
  private checked(hash: string, session: CachedSession, ip: string): ResolvedSession | null {
    const now = this.options.clock.now();
    const cache = this.options.cache;
    if (session.expiresAt !== 0 && session.expiresAt <= now) {
      cache?.invalidate([hash]);
      return null;
    }
    const bound = session.ip !== null && (session.caller.isBot || this.options.bindToIp);
    // Stored addresses are normalized; the request's needs it only when the spellings differ.
    if (bound && session.ip !== ip && session.ip !== requestAddress(ip)) return null;
    this.noteUse(session, now);
    return { caller: session.caller, expiresAt: session.expiresAt };
  }

  /**
   * Of the sessions `sessionIds`, those that have ended, read from the database (not the cache):
   * revoked (or gone), or expired.
   */
  async endedSessions(sessionIds: readonly number[]): Promise<Map<number, SessionEnd>> {
    const ended = new Map<number, SessionEnd>(sessionIds.map((id) => [id, 'revoked']));
    const now = Math.floor(this.options.clock.now() / 1000);
    for (let start = 0; start < sessionIds.length; start += ENDED_QUERY_CHUNK) {
      const rows = await sessionEnds(this.options.db.kysely, sessionIds.slice(start, start + ENDED_QUERY_CHUNK));
      for (const row of rows) {
        if (row.revoked_at !== null) continue;
        if (row.expires_at !== 0 && row.expires_at <= now) ended.set(row.session_id, 'expired');
        else ended.delete(row.session_id);
      }
    }
    return ended;
  }

  /** Records when a session was last used (for the sessions list), at most once a minute, without waiting. */
  private noteUse(session: CachedSession, nowMs: number): void {
    const now = Math.floor(nowMs / 1000);
    if (now - session.lastUsed < LAST_USED_EVERY) return;
    session.lastUsed = now;
    setSessionLastUsed(this.options.db.kysely, session.caller.sessionId, now).catch(() => undefined);
  }
}

/** After committing a revocation of sessions: no process accepts them once this resolves. */
export function announceSessionsRevoked(services: { bus: Pick<Bus, 'publishConfirmed'> }, revocation: Revocation): Promise<void> {
  return services.bus.publishConfirmed(SESSIONS_REVOKED, revocation);
}
