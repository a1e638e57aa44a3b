/**
 * What a finished game gives its players: places by finishing order, experience, and rank points
 * in the season the game ends in. Pure rules here; queries.ts writes them with the game's end.
 */
import type { Rank } from '../users/index.js';
import type { GameEvent, Packet } from './engine/index.js';

/** Experience a finished game gives: every player who is a person or a bot 10, the winner 20 more. */
export const xpForGame = { played: 10, won: 20 };

/** Rank points a player has when their first rated game of a season starts. */
export const seasonStartPoints = 1000;
/** Rank points the winner gains; the last place loses as many (see rankPointsFor). */
export const rankStake = 30;
/** Rank points a rank id spans: id 1 from 0 points, id 2 from 200, and so on. */
export const pointsPerRankId = 200;

/** One seat's result, as games.my shows it. */
export interface SeatResult {
  user_id: number;
  /** 1 for the winner, then by finishing order: the last one out is 2, the first one out last. */
  place: number;
  /** Experience the game gave (0 for computer players). */
  xp: number;
  /** Rank points the game gave or took (0 in an unrated game and for computer players). */
  rank_pts: number;
}

export interface SeasonSettings {
  /** Unix seconds. */
  seasonStart: number;
  /** 0: one season without end. */
  seasonDays: number;
}

/** The season `nowMs` falls in, from 1 (times before the first season's start count as season 1). */
export function seasonAt(settings: SeasonSettings, nowMs: number): number {
  if (settings.seasonDays <= 0) return 1;
  const elapsed = Math.floor(nowMs / 1000) - settings.seasonStart;
  return Math.max(1, Math.floor(elapsed / (settings.seasonDays * 86400)) + 1);
}

/** When season `season` begins and ends (Unix seconds); no end when seasons are endless. */
export function seasonSpan(settings: SeasonSettings, season: number): { tsStart: number; tsEnd?: number } {
  if (settings.seasonDays <= 0) return { tsStart: settings.seasonStart };
  const length = settings.seasonDays * 86400;
  const tsStart = settings.seasonStart + (season - 1) * length;
  return { tsStart, tsEnd: tsStart + length };
}

/**
 * Rank points for place `place` of `seats` players: the winner +rankStake, the last place
 * −rankStake, the places between evenly in between (rounded half away from zero); a player who
 * left the game or was put out by timeouts takes the last place's loss whatever their place.
 */
export function rankPointsFor(place: number, seats: number, left: boolean): number {
  if (seats < 2) return 0;
  const p = left ? seats : place;
  const exact = (rankStake * (seats + 1 - 2 * p)) / (seats - 1);
  return Math.sign(exact) * Math.round(Math.abs(exact));
}

/** The rank id of a number of points. */
export function rankIdOf(pts: number): number {
  return 1 + Math.floor(Math.max(0, pts) / pointsPerRankId);
}

/** The rank users.get shows after `games` rated games of the season with `pts` points. */
export function rankShown(standing: { pts: number; games: number }, qualifyingGames: number): Rank {
  if (standing.games < qualifyingGames) return { qual: qualifyingGames - standing.games };
  return { id: rankIdOf(standing.pts), pts: standing.pts };
}

/**
 * Every seat's result from the game's packets (all of them, from the first): the winner first,
 * then the others in the reverse order they went out (their `bankrupt` events); `left` are the
 * players who left or were put out by timeouts (`leave` events). A game is rated when at least
 * two of its seats are accounts (people or bots): only then do rank points move.
 */
export function resultsOf(
  packets: readonly Packet[],
  seats: readonly number[],
  winner: number,
  computers: ReadonlySet<number>,
): { results: SeatResult[]; left: Set<number>; rated: boolean } {
  const out: number[] = [];
  const left = new Set<number>();
  for (const packet of packets)
    for (const event of packet.events as GameEvent[]) {
      const userId = (event as { user_id?: unknown }).user_id;
      if (typeof userId !== 'number') continue;
      if (event.type === 'bankrupt' && !out.includes(userId)) out.push(userId);
      if (event.type === 'leave') left.add(userId);
    }
  // Seats that never went out other than the winner cannot occur in a finished game; they would come last.
  const order = [winner, ...out.filter((id) => id !== winner).reverse()];
  for (const id of seats) if (!order.includes(id)) order.push(id);
  const rated = seats.filter((id) => !computers.has(id)).length >= 2;
  const results = seats.map((user_id) => {
    const place = order.indexOf(user_id) + 1;
    const person = !computers.has(user_id);
    return {
      user_id,
      place,
      xp: person ? xpForGame.played + (user_id === winner ? xpForGame.won : 0) : 0,
      rank_pts: person && rated ? rankPointsFor(place, seats.length, left.has(user_id)) : 0,
    };
  });
  return { results, left, rated };
}
