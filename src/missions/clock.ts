/**
 * The clocks of missions and standings, in UTC: a week starts on Monday at 00:00 (missions'
 * progress and the weekly top start again from nothing then), and a season is a calendar month.
 */
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
  /** `YYYY-MM`. */
  id: string;
  /** Unix time (seconds) of its first day, 00:00 UTC. */
  tsStart: number;
  /** Unix time (seconds) of the next month's first day, 00:00 UTC. */
  tsEnd: number;
}

/** The season of an instant (milliseconds): its calendar month in UTC. */
export function seasonOf(ms: number): Season {
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  return {
    id: `${year}-${String(month + 1).padStart(2, '0')}`,
    tsStart: Date.UTC(year, month, 1) / 1000,
    tsEnd: Date.UTC(year, month + 1, 1) / 1000,
  };
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
