import type { Bus } from '../infra/bus.js';
import { WORLD_CHANGED } from '../infra/channels.js';
import { announceSessionsRevoked } from '../auth/index.js';
import type { ImportSummary } from './import.js';

/**
 * After a world import is committed: every process stops accepting the sessions it ended, then
 * forgets everything it keeps in memory (any cached row may have changed). The one announcement
 * of a world import, whoever made it.
 */
export async function announceWorldImported(bus: Bus, summary: Pick<ImportSummary, 'endedSessionsOf'>): Promise<void> {
  for (const userId of summary.endedSessionsOf) await announceSessionsRevoked({ bus }, { userId });
  await bus.publish(WORLD_CHANGED, {});
}
