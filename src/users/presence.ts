import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/connection.js';
import type { Clock } from '../infra/clock.js';
import { updateLastSeen } from './queries.js';

interface Activity {
  /** Last authenticated request seen by this process, seconds. */
  active: number;
  /** Last `last_seen` this process wrote, seconds. */
  written: number;
}

const MAX_TRACKED = 200_000;

/** Times of last requests wait this long, ms, to be written together: one statement for everyone touched meanwhile. */
export const WRITE_BATCH_MS = 1000;

/**
 * Tracks who is online: a user is online while they hold a realtime connection, for
 * `onlineWindow` seconds after an authenticated request, or always when the account is
 * marked `always_online`.
 *
 * `last_seen` in the database is what other processes see; it is written at most once per
 * `writeEvery` seconds per user, so busy clients do not turn reads into writes, and the times
 * due are written together within WRITE_BATCH_MS, so many clients do not either. This process
 * also remembers the exact time of each user's last request, so its own answers do not lag
 * behind by up to `writeEvery`. Users holding a realtime connection get `last_seen` refreshed
 * by `touchConnected` (run periodically), so other processes see them online too.
 */
export class Presence {
  private readonly activity = new Map<number, Activity>();
  private readonly connections = new Map<number, number>();
  /** `last_seen` not yet written, by user. */
  private due = new Map<number, number>();
  private batchTimer?: NodeJS.Timeout;
  /** The batch being written, if any: the next one waits for it (so that times land in order). */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    readonly onlineWindow: number,
    private readonly log?: FastifyBaseLogger,
    readonly writeEvery = Math.max(1, Math.min(60, Math.floor(onlineWindow / 5))),
  ) {}

  private now(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  /** Records activity by a user: at once in this process, in the database with the next batch (see write). */
  touch(userId: number): void {
    const now = this.now();
    const known = this.activity.get(userId);
    if (known !== undefined && now - known.written < this.writeEvery) {
      known.active = now;
      return;
    }
    if (known === undefined && this.activity.size >= MAX_TRACKED) this.activity.clear();
    this.activity.set(userId, { active: now, written: now });
    this.due.set(userId, now);
    if (this.batchTimer === undefined) {
      this.batchTimer = setTimeout(() => void this.write(), WRITE_BATCH_MS);
      this.batchTimer.unref();
    }
  }

  /**
   * Writes every `last_seen` due now (before a shutdown, or when another process must see it
   * at once); resolves once written. A batch that fails is logged, and its users are written
   * again on their next request.
   */
  write(): Promise<void> {
    clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    if (this.due.size === 0) return this.writing;
    const batch = this.due;
    this.due = new Map();
    this.writing = this.writing.then(() =>
      updateLastSeen(this.db, batch).catch((err: unknown) => {
        for (const userId of batch.keys()) {
          const known = this.activity.get(userId);
          if (known) known.written = -Infinity;
        }
        this.log?.warn({ err, users: batch.size }, 'writing last_seen failed');
      }),
    );
    return this.writing;
  }

  /** A realtime connection opened (true) or closed (false); resolves once an opening is written. */
  async connection(userId: number, open: boolean): Promise<void> {
    const count = (this.connections.get(userId) ?? 0) + (open ? 1 : -1);
    if (count > 0) this.connections.set(userId, count);
    else this.connections.delete(userId);
    if (!open) return;
    this.touch(userId);
    await this.write();
  }

  /** Refreshes `last_seen` of everyone holding a realtime connection to this process; resolves once written. */
  async touchConnected(): Promise<void> {
    for (const userId of this.connections.keys()) this.touch(userId);
    await this.write();
  }

  /** Whether a user row (last_seen, always_online) counts as online now (or at `nowMs`, read once for many rows). */
  isOnline(user: { user_id: number; last_seen: number; always_online: number }, nowMs = this.clock.now()): boolean {
    if (user.always_online === 1 || this.connections.has(user.user_id)) return true;
    const local = this.activity.get(user.user_id)?.active ?? 0;
    return Math.floor(nowMs / 1000) - Math.max(user.last_seen, local) < this.onlineWindow;
  }

  /** Seconds since the epoch before which `last_seen` means offline (for SQL filters). */
  onlineSince(): number {
    return this.now() - this.onlineWindow;
  }
}
