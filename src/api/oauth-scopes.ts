/**
 * The OAuth scopes of the reference service, as bits of the mask a session an app obtained
 * carries: `offline` brings a refresh token, `games` and `stat` open the methods that declare
 * them as their `scope`.
 */
export const SCOPE_BITS = { offline: 1, games: 2, stat: 8 } as const;

export type ScopeName = keyof typeof SCOPE_BITS;

/** A scope that opens signed-in methods to a session an app obtained. */
export type MethodScope = Exclude<ScopeName, 'offline'>;
