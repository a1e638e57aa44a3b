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

/**
 * Tracks who is online: a user is online while they hold a realtime connection, for
 * `onlineWindow` seconds after an authenticated request, or always when the account is
 * marked `always_online`.
 *
 * `last_seen` in the database is what other processes see; it is written at most once per
 * `writeEvery` seconds per user, so busy clients do not turn reads into writes. This process
 * also remembers the exact time of each user's last request, so its own answers do not lag
 * behind by up to `writeEvery`. Users holding a realtime connection get `last_seen` refreshed
 * by `touchConnected` (run periodically), so other processes see them online too.
 */
export class Presence {
  private readonly activity = new Map<number, Activity>();
  private readonly connections = new Map<number, number>();

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    readonly onlineWindow: number,
    readonly writeEvery = Math.max(1, Math.min(60, Math.floor(onlineWindow / 5))),
  ) {}

  private now(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  /** Records activity by a user; resolves once recorded (or when no write was needed). */
  async touch(userId: number): Promise<void> {
    const now = this.now();
    const known = this.activity.get(userId);
    if (known !== undefined && now - known.written < this.writeEvery) {
      known.active = now;
      return;
    }
    if (known === undefined && this.activity.size >= MAX_TRACKED) this.activity.clear();
    this.activity.set(userId, { active: now, written: now });
    await updateLastSeen(this.db, userId, now);
  }

  /** A realtime connection opened (true) or closed (false); resolves once an opening is recorded. */
  async connection(userId: number, open: boolean): Promise<void> {
    const count = (this.connections.get(userId) ?? 0) + (open ? 1 : -1);
    if (count > 0) this.connections.set(userId, count);
    else this.connections.delete(userId);
    if (open) await this.touch(userId).catch(() => undefined);
  }

  /** Refreshes `last_seen` of everyone holding a realtime connection to this process. */
  async touchConnected(): Promise<void> {
    for (const userId of [...this.connections.keys()]) await this.touch(userId);
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
