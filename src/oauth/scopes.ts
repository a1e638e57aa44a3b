import { SCOPE_BITS } from '../api/oauth-scopes.js';

/** The OAuth scopes of the reference service, as bits of the `scope` mask, and what each lets an app do. */
export const SCOPES = [
  {
    name: 'offline',
    bit: SCOPE_BITS.offline,
    words: 'Stay signed in to it while you are away (it may keep its access until you revoke it)',
  },
  { name: 'games', bit: SCOPE_BITS.games, words: 'See the history of your games and replay them move by move' },
  {
    name: 'stat',
    bit: SCOPE_BITS.stat,
    words: 'See your season pass progress (token balance included), your missions and your place in the weekly top',
  },
] as const;

export const OFFLINE = SCOPE_BITS.offline;
/** Every scope bit there is. */
export const ALL_SCOPES = SCOPES.reduce((mask, scope) => mask | scope.bit, 0);

/** What every grant allows, whatever its scopes. */
export const BASE_ACCESS_WORDS = 'See your profile, your friends and your inventory as you see them yourself';

/** Whether `mask` holds only known scope bits. */
export function isScopeMask(mask: number): boolean {
  return Number.isInteger(mask) && mask >= 0 && (mask & ~ALL_SCOPES) === 0;
}

/** The names of the scopes in a mask, in the order of SCOPES. */
export function scopeNames(mask: number): string[] {
  return SCOPES.filter((scope) => (mask & scope.bit) !== 0).map((scope) => scope.name);
}

/** What a grant of `mask` lets an app do, in plain words, the base access first. */
export function scopeWords(mask: number): string[] {
  return [BASE_ACCESS_WORDS, ...SCOPES.filter((scope) => (mask & scope.bit) !== 0).map((scope) => scope.words)];
}
