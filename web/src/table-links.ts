/** Where the game table is: a live game by its game server and game, and a finished game's replay. */
export const tablePath = (gsId: string, gameId: number) => `/table/#/${encodeURIComponent(gsId)}/${gameId}`;
export const replayPath = (gameId: number) => `/table/#/replay/${gameId}`;
