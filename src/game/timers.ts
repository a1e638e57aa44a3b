/**
 * The turn timers: every process looks for live games whose next timeout has fallen due
 * (games.deadline) and plays it, without anyone calling. Each game is played in the
 * transaction that holds its row (play), which rebuilds it and applies only what is due then:
 * when two processes find the same game, the second finds its timeout already played.
 */
import type { Services } from '../services.js';
import { ownTransaction } from '../db/connection.js';
import { announceUsersChanged } from '../users/index.js';
import { play } from './play.js';
import { expireRanksBefore, selectDueGames } from './queries.js';
import { seasonAt } from './results.js';

/** How often each process looks for due timeouts, ms. */
export const timerTickMs = 500;
/** Games played in one look; the rest wait for the next. */
const gamesPerTick = 50;

/**
 * When a season begins (and once when the process starts), the ranks of the players who have
 * played no rated game in it yet turn `{expired: 1}`. Every process may do it; it changes each
 * profile once.
 */
export async function expireRanks(services: Services, season: number): Promise<void> {
  for (;;) {
    const { changed, more } = await ownTransaction(services.db)((trx) => expireRanksBefore(trx, season, services.db.dialect));
    if (changed.length > 0) await announceUsersChanged(services, changed);
    if (!more) return;
  }
}

/** One look: plays what is due in each live game whose timeout has fallen due; how many were played and how many failed. */
export async function playDueGames(services: Services): Promise<{ played: number; failed: number }> {
  let played = 0;
  let failed = 0;
  for (const gameId of await selectDueGames(services.db.kysely, services.clock.now(), gamesPerTick)) {
    try {
      await play(services, gameId, null);
      played += 1;
    } catch (err) {
      failed += 1;
      services.log.error({ err, gameId }, 'a game timeout could not be played');
    }
  }
  return { played, failed };
}

export function startTimers(services: Services): () => void {
  let running = false;
  let seasonSeen = 0;
  const tick = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      const season = seasonAt(services.config.games, services.clock.now());
      if (season !== seasonSeen)
        await expireRanks(services, season).then(
          () => (seasonSeen = season),
          (err: unknown) => services.log.error({ err, season }, 'expiring the ranks of an earlier season failed'),
        );
      await playDueGames(services);
    } catch (err) {
      services.log.error({ err }, 'looking for due game timeouts failed');
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), timerTickMs);
  timer.unref();
  return () => clearInterval(timer);
}
