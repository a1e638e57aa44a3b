/** Numeric result codes of the API. */
export const Code = {
  OK: 0,
  AUTH: 1,
  BAD_PARAM: 2,
  INTERNAL: 3,
  FORBIDDEN: 4,
  UNKNOWN_METHOD: 5,
  TOO_MANY_OBJECTS: 6,
  RATE_LIMIT: 7,
  CAPTCHA: 8,
  UNAVAILABLE: 10,
  TOTP_REQUIRED: 12,
  DISABLED: 98,
  UNKNOWN: 99,
  USER_NOT_FOUND: 101,
  MUTED: 104,
  BLOCKED_BY_USER: 107,
  GLOBAL_BAN: 412,
  BAD_TOTP_SESSION: 413,
  TOTP_TOO_OFTEN: 414,
  CRAFT_ITEM_UNUSABLE: 603,
  CRAFT_MIXED: 605,
  ITEM_NOT_APPLICABLE: 624,
  PRIVACY: 701,
  /** No such trade, or the caller takes no part in it. */
  NO_SUCH_TRADE: 801,
  /** The trade is no longer open. */
  TRADE_CLOSED: 802,
  CHAT_RESTRICTED: 1203,
  PROMOCODE_REFUSED: 1501,
  EMAIL_TAKEN: 1601,
  DOMAIN_TAKEN: 1602,
  SIGNUP_CLOSED: 1603,
  BAD_ACCOUNT_TOKEN: 1604,
  WRONG_PASSWORD: 1605,
  TOTP_STATE: 1606,
  NO_SUCH_SESSION: 1607,
  BOT_NOT_FOUND: 1801,
  /** The caller already owns as many bots as bots.create allows (`--bots-per-owner`). */
  BOT_LIMIT: 1802,
  /** The item is not on sale: sold, taken off, expired or never listed. */
  MARKET_NOT_LISTED: 2101,
  /** The price sent is not the listing's. */
  MARKET_PRICE_CHANGED: 2102,
  /** The balance does not cover the price. */
  NOT_ENOUGH_MONEY: 2103,
  /** The listing is the caller's own. */
  MARKET_OWN_LISTING: 2104,
  /** An administrator froze the caller's market use. */
  MARKET_FROZEN: 2105,
  /** The catalogue does not sell (or buy back) this prototype. */
  SHOP_UNAVAILABLE: 2106,
  /** No game of that id, or none the caller plays in. */
  NO_SUCH_GAME: 1901,
  /** The game refused the action: not expected now, not the caller's to send, or against its rules. */
  GAME_ACTION_REFUSED: 1902,
  /** A player is already in a live game (data: user_id, gs_id, gs_game_id). */
  ALREADY_IN_GAME: 1903,
  /** No such room, or not one the caller may see. */
  NO_SUCH_ROOM: 2201,
  /** The room has as many players as its maxplayers. */
  ROOM_FULL: 2202,
  /** The caller (or the user named) is in a room already. */
  IN_A_ROOM: 2203,
  /** Only the room's creator (its admin) may do that. */
  NOT_ROOM_ADMIN: 2204,
  /** The room's game has started. */
  ROOM_STARTED: 2205,
  /** A private room is joined by invitation only. */
  ROOM_PRIVATE: 2206,
  /** The user was kicked from the room. */
  KICKED_FROM_ROOM: 2207,
  /** The option or setting is not one this server plays; the description names it. */
  ROOM_OPTION_UNSUPPORTED: 2208,
  /** A game needs at least two players. */
  NOT_ENOUGH_PLAYERS: 2209,
  /** The caller (or the user named) is not in the room. */
  NOT_IN_ROOM: 2211,
  /** oauth.exchangeCode: the code is unknown, used or expired (or its PKCE verifier is wrong). */
  OAUTH_BAD_CODE: 2001,
  /** oauth.exchangeCode: redirect_uri is not the one the dialog was given. */
  OAUTH_REDIRECT_MISMATCH: 2002,
  OAUTH_BAD_SECRET: 2003,
  OAUTH_NO_SUCH_APP: 2004,
  OAUTH_APP_INACTIVE: 2005,
  /** oauth.exchangeCode: redirect_uri is not a valid address; data.details says why. */
  OAUTH_BAD_REDIRECT_URI: 2007,
} as const;

/** The error every handler throws; the transport turns it into the error envelope. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(description);
    this.name = 'ApiError';
  }
}

/** HTTP status for an API result code: 200 for every API outcome except these. */
export function httpStatusFor(code: number): number {
  if (code === Code.INTERNAL) return 500;
  if (code === Code.RATE_LIMIT) return 429;
  return 200;
}

export const badParam = (name: string, problem: string) => new ApiError(Code.BAD_PARAM, `parameter ${name}: ${problem}`);
export const tooManyObjects = (name: string, max: number) =>
  new ApiError(Code.TOO_MANY_OBJECTS, `parameter ${name}: at most ${max} objects may be requested`);
export const authError = (description = 'authorization failed: the access token is missing, invalid or expired') =>
  new ApiError(Code.AUTH, description);
export const rateLimited = (retryAfter: number) => new ApiError(Code.RATE_LIMIT, 'too many requests', { retry_after: retryAfter });
