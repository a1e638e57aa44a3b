/**
 * Where the game table is, as links: the one module that builds (and reads) the table page's
 * paths, for the pages that link to it and for the table page itself. The reference service puts
 * a game at `/table/#/{gs_id}/{gs_game_id}`; a replay is at `/table/#/replay/{game_id}` (the id
 * `games.getReplay` takes, which is also the live game's `gs_game_id`).
 */

/** The table of a live game: its players play it there, anyone else watches it. */
export function tablePath(gsId: string, gsGameId: string | number): string {
  return `/table/#/${encodeURIComponent(gsId)}/${encodeURIComponent(String(gsGameId))}`;
}

/** The replay of a game, from its first packet (`games.getReplay`). */
export function replayPath(gameId: string | number): string {
  return `/table/#/replay/${encodeURIComponent(String(gameId))}`;
}

/** What a table path's fragment (`location.hash`) names: a live game, a replay, or nothing known. */
export type TableTarget = { kind: 'live'; gsId: string; gsGameId: string } | { kind: 'replay'; gameId: string };

export function readTableHash(hash: string): TableTarget | undefined {
  let parts: string[];
  try {
    parts = hash
      .replace(/^#?\/?/, '')
      .split('/')
      .map(decodeURIComponent);
  } catch {
    return undefined;
  }
  if (parts.length !== 2 || !/^\d+$/.test(parts[1]!)) return undefined;
  if (parts[0] === 'replay') return { kind: 'replay', gameId: parts[1]! };
  return parts[0] ? { kind: 'live', gsId: parts[0], gsGameId: parts[1]! } : undefined;
}
