import type { Caller } from '../api/method.js';
import type { Database } from '../db/connection.js';
import { BUS_LOST, WORLD_CHANGED, type Bus } from '../infra/bus.js';
import type { Clock } from '../infra/clock.js';
import { sha256 } from '../infra/secrets.js';
import { requestAddress } from './ip.js';

export const REVOCATION_CHANNEL = 'auth.revoked';

/** A revocation notice: every cached session matching it is dropped, in every process. */
export type Revocation = { sessionIds: number[] } | { userId: number } | { familyId: string };

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
  /** ms, by the resolver's clock */
  cachedAt: number;
  /** `last_used` as last written, seconds */
  lastUsed: number;
}

/** `sessions.last_used` is written at most this often per session, seconds. */
export const LAST_USED_EVERY = 60;

export interface TokenResolverOptions {
  db: Database;
  bus: Bus;
  clock: Clock;
  bindToIp: boolean;
  /**
   * Cache resolved tokens in memory: only where every revocation reaches this process. The
   * cache is used while the bus is current (`Bus.isCurrent`), and revocations are announced
   * with `publishConfirmed`, so a revoked token stops working in every process before the
   * revoking call answers.
   */
  cache: boolean;
  maxCached?: number;
  /**
   * Seconds a cached session is trusted before it is read again: bounds how long a
   * revocation notice lost on the way (a Redis reconnect) can go unnoticed.
   */
  maxCacheAgeSeconds?: number;
}

/**
 * Resolves access tokens to callers. Tokens are looked up by their SHA-256 hash; resolved
 * sessions are cached in memory, and every revocation (published on the bus by whichever
 * process made it) evicts them in every process before the revoking request answers: the
 * announcement waits until every process has confirmed it or has stopped trusting its cache.
 */
export class TokenResolver {
  private readonly cache = new Map<string, CachedSession>();
  private readonly unsubscribe: (() => void)[];
  /** Counts revocation notices, so a database read that overlapped one is not cached. */
  private generation = 0;
  private hits = 0;
  private misses = 0;

  constructor(private readonly options: TokenResolverOptions) {
    this.unsubscribe = [
      options.bus.subscribe(REVOCATION_CHANNEL, (message) => this.evict(message as Revocation)),
      ...[WORLD_CHANGED, BUS_LOST].map((channel) =>
        options.bus.subscribe(channel, () => {
          this.generation++;
          this.cache.clear();
        }),
      ),
    ];
  }

  /** The caller for a token, or null when it is unknown, expired, revoked or bound to another address. */
  async resolve(token: string, ip: string): Promise<Caller | null> {
    return (await this.resolveSession(token, ip))?.caller ?? null;
  }

  /** As `resolve`, with when the session expires (ms by the server's clock; 0 = never). */
  async resolveSession(token: string, ip: string): Promise<ResolvedSession | null> {
    if (token.length < 16 || token.length > 200) return null;
    const hash = sha256(token);
    const now = this.options.clock.now();
    // Behind on the bus, a cached session may have been revoked without this process knowing.
    const cacheUsable = this.options.cache && this.options.bus.isCurrent();
    let session = cacheUsable ? this.cache.get(hash) : undefined;
    if (session && now - session.cachedAt > (this.options.maxCacheAgeSeconds ?? 60) * 1000) {
      this.cache.delete(hash);
      session = undefined;
    }
    if (session) {
      this.hits++;
    } else {
      this.misses++;
      const generation = this.generation;
      const row = await this.options.db.kysely
        .selectFrom('sessions')
        .select(['session_id', 'user_id', 'family_id', 'ip', 'is_bot', 'expires_at', 'revoked_at', 'created_at', 'last_used'])
        .where('access_hash', '=', hash)
        .executeTakeFirst();
      if (!row || row.revoked_at !== null) return null;
      session = {
        caller: { userId: row.user_id, isBot: row.is_bot === 1, sessionId: row.session_id, familyId: row.family_id },
        ip: row.ip,
        expiresAt: row.expires_at * 1000,
        cachedAt: now,
        lastUsed: row.last_used ?? row.created_at,
      };
      // A revocation that arrived while the row was read may concern it: do not keep it.
      if (cacheUsable && generation === this.generation) {
        if (this.cache.size >= (this.options.maxCached ?? 100_000)) this.cache.delete(this.cache.keys().next().value!);
        this.cache.set(hash, session);
      }
    }
    if (session.expiresAt !== 0 && session.expiresAt <= now) {
      this.cache.delete(hash);
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
      const rows = await this.options.db.kysely
        .selectFrom('sessions')
        .select(['session_id', 'expires_at', 'revoked_at'])
        .where('session_id', 'in', sessionIds.slice(start, start + ENDED_QUERY_CHUNK))
        .execute();
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
    this.options.db.kysely
      .updateTable('sessions')
      .set({ last_used: now })
      .where('session_id', '=', session.caller.sessionId)
      .execute()
      .catch(() => undefined);
  }

  /**
   * Tells every process to forget the matching sessions, and resolves once none of them can
   * accept those sessions any longer. Call after the revocation is committed.
   */
  async announce(revocation: Revocation): Promise<void> {
    await this.options.bus.publishConfirmed(REVOCATION_CHANNEL, revocation);
  }

  private evict(revocation: Revocation): void {
    if (!revocation || typeof revocation !== 'object') return;
    this.generation++;
    for (const [hash, session] of this.cache) {
      const { caller } = session;
      if (
        ('sessionIds' in revocation && revocation.sessionIds.includes(caller.sessionId)) ||
        ('userId' in revocation && revocation.userId === caller.userId) ||
        ('familyId' in revocation && revocation.familyId === caller.familyId)
      )
        this.cache.delete(hash);
    }
  }

  /** Lookups of the session cache answered from memory and not, and sessions held (metrics). */
  cacheCounts(): { hits: number; misses: number; size: number } {
    return { hits: this.hits, misses: this.misses, size: this.cache.size };
  }

  close(): void {
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    this.cache.clear();
  }
}
