/**
 * The clocks of missions and standings, in UTC: a week starts on Monday at 00:00 (missions'
 * progress and the weekly top start again from nothing then); a season is the game ranks' season.
 */
import { seasonAt, seasonSpan, type SeasonSettings } from '../game/index.js';

const DAY = 86_400;

/** The week of an instant (milliseconds): the Unix time (seconds) of its Monday, 00:00 UTC. */
export function weekOf(ms: number): number {
  const day = Math.floor(ms / 1000 / DAY);
  // 1 January 1970, day 0, was a Thursday: three days after a Monday.
  return (day - ((((day + 3) % 7) + 7) % 7)) * DAY;
}

/** When the week starting at `week` ends (the next Monday, 00:00 UTC), in seconds. */
export const weekEnd = (week: number): number => week + 7 * DAY;

export interface Season {
  /** The season's number, as the game's ranks count them (from 1). */
  id: number;
  /** Unix time (seconds) it begins. */
  tsStart: number;
  /** Unix time (seconds) it ends; none when seasons are endless. */
  tsEnd?: number;
}

/** The season of an instant (milliseconds): the game ranks' season (`--game-season-start`, `--game-season-days`). */
export function seasonOf(settings: SeasonSettings, ms: number): Season {
  const id = seasonAt(settings, ms);
  return { id, ...seasonSpan(settings, id) };
}

/** The keys of game_stats' periods. */
export const weekPeriod = (week: number): string => `w${week}`;
export const seasonPeriod = (season: Season): string => `s${season.id}`;

/** Experience of a season that makes one level of its pass. */
export const SEASON_LEVEL_XP = 100;
/** The pass's last level. */
export const SEASON_LEVELS = 30;

/** The level of the season's pass that `xp` earned in the season reaches. */
export const seasonLevel = (xp: number): number => Math.min(SEASON_LEVELS, Math.floor(xp / SEASON_LEVEL_XP));
