import { Type, type Static } from '@sinclair/typebox';
import { Strict, Uint } from '../api/schema-types.js';

/**
 * A user's rank as the reference service shows it: exactly one of four forms, or no `rank`
 * at all (nothing set). Clients accept these forms and nothing else.
 */
export const RankHidden = Type.Object({ hidden: Type.Literal(1) }, { ...Strict, title: 'hidden' });
export const RankQualifying = Type.Object(
  { qual: Uint },
  { ...Strict, title: 'qualifying', description: 'qualifying games still to play' },
);
export const RankExpired = Type.Object({ expired: Type.Literal(1) }, { ...Strict, title: 'expired' });
export const RankVisible = Type.Object({ id: Uint, pts: Uint }, { ...Strict, title: 'visible', description: 'rank id and points' });

const RANK_DESCRIPTION = 'one of {hidden: 1}, {qual: N}, {expired: 1}, {id: N, pts: N}; absent when no rank is set';
/** In answers (published as the component `Rank`). */
export const Rank = Type.Union([RankHidden, RankQualifying, RankExpired, RankVisible], { $id: 'Rank', description: RANK_DESCRIPTION });
/** In world files. */
export const WorldRank = Type.Union([RankHidden, RankQualifying, RankExpired, RankVisible], { description: RANK_DESCRIPTION });
export type Rank = Static<typeof Rank>;

/** The names an operator sets a rank by (admin API), `none` clearing it. */
export const RANK_KINDS = ['none', 'hidden', 'qual', 'expired', 'visible'] as const;
export type RankKind = (typeof RANK_KINDS)[number];

const isUint = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/**
 * The rank a stored value shows: one of the four forms, rebuilt with only its own keys; or
 * undefined for anything else (nothing set, or a value of an older shape such as
 * `{hidden: 0}`, which shows no rank).
 */
export function rankForm(value: unknown): Rank | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const rank = value as Record<string, unknown>;
  if (rank.hidden === 1 || rank.hidden === true) return { hidden: 1 };
  if (isUint(rank.qual)) return { qual: rank.qual };
  if (rank.expired === 1 || rank.expired === true) return { expired: 1 };
  if (isUint(rank.id) && isUint(rank.pts)) return { id: rank.id, pts: rank.pts };
  return undefined;
}

/** The rank of a `users.rank` column (JSON text or null). */
export function storedRank(column: string | null): Rank | undefined {
  if (column === null) return undefined;
  try {
    return rankForm(JSON.parse(column));
  } catch {
    return undefined;
  }
}

/** The column value for a rank: JSON text of the form, or null for none. */
export function rankColumn(rank: Rank | undefined): string | null {
  return rank === undefined ? null : JSON.stringify(rank);
}
