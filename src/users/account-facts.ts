import type { Core } from '../services.js';
import { selectAccountFacts } from './queries.js';

/** Values of `admin_rights` in the realtime `auth` frame. */
export const AdminRights = { NONE: 0, MODERATOR: 1, SUPERADMIN: 2 } as const;

/**
 * What a signed-in realtime connection's `auth` frame tells the user of their own account, as
 * the reference clients read it: `admin_rights` (0 none, 1 moderator, 2 superadmin) and
 * `penalties` (`{mute: {ts_end}}` while muted, else empty) in `user_data`; the counters
 * `email_verified` (0/1), `vip_expires` (0: no expiring subscriptions are kept) and `invites` (0:
 * there are no game invitations).
 */
export function describeAccount(core: Core): void {
  const facts = (userId: number) => selectAccountFacts(core.db, userId);
  core.realtime.addAuthUserFields(async (userId) => {
    const row = await facts(userId);
    const now = Math.floor(core.clock.now() / 1000);
    const rights = row?.superadmin === 1 ? AdminRights.SUPERADMIN : row?.moderator === 1 ? AdminRights.MODERATOR : AdminRights.NONE;
    const muted = row?.muted_until !== null && row?.muted_until !== undefined && row.muted_until > now;
    return { admin_rights: rights, penalties: muted ? { mute: { ts_end: row.muted_until } } : {} };
  });
  core.realtime.addAuthCounter('email_verified', async (userId) => (await facts(userId))?.email_verified ?? 0);
  core.realtime.addAuthCounter('vip_expires', async () => 0);
  core.realtime.addAuthCounter('invites', async () => 0);
}
