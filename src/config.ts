/** Server configuration: every setting with its default, overridable by flags and environment. */
export interface Config {
  host: string;
  port: number;
  /** `sqlite:<path>` or `postgres://...` */
  databaseUrl: string;
  redisUrl?: string;
  /** PostgreSQL: keep the statements each connection runs prepared (off behind a pooler that cannot keep them). */
  preparedStatements: boolean;
  /** Prefix of every Redis key and channel, so several deployments can share one Redis. */
  redisPrefix: string;
  adminKey?: string;
  /**
   * Seals the TOTP secrets stored in the database (AES-256-GCM): 64 hexadecimal digits or the
   * base64 of 32 bytes. Without it a SQLite database uses the key file beside it (made on first
   * start); PostgreSQL refuses to start.
   */
  secretKey?: string;
  /** The key the secrets were sealed with until now: on start they are sealed again with secretKey. */
  previousSecretKey?: string;
  /**
   * Take the client address from X-Forwarded-For: the rightmost entry that is not one of our
   * proxies, given as a hop count (`true` is one hop) or a list of addresses and CIDR ranges.
   */
  trustProxy: boolean | number | string[];
  /** General per-address and per-token request limits (sign-in protections stay on regardless). */
  rateLimit: boolean;
  rateLimitPerIp: { max: number; windowSeconds: number };
  rateLimitPerToken: { max: number; windowSeconds: number };
  /** Open connections (HTTP and WebSocket) one client address may hold at once. */
  maxConnectionsPerIp: number;
  /** Password checks that may wait for a hasher in this process, in each queue (favoured sign-ins, everything else); past it, code 7. */
  passwordHashQueue: number;
  /** Entries of each per-address table (limits, failures), in memory and in Redis; see src/infra/address-keys.ts. */
  addressSlots: number;
  /** A world file imported on start when the database is empty. */
  world?: string;
  logLevel: string;
  /** Share of answered requests logged: 0 none, 1 every one, in between a random sample. */
  accessLog: number;
  /** Serve HTTPS and WSS with this certificate and key (PEM files, read again on SIGHUP). */
  tls?: { certFile?: string; keyFile?: string };
  /** A listener of its own serving GET /metrics to anyone reaching it (else only to the admin key). */
  metricsPort?: number;
  metricsHost: string;
  /** Requests taking at least this long are logged (warn) whatever accessLog says, ms. */
  slowRequestMs: number;
  /** Largest request body in bytes. */
  bodyLimit: number;
  /** Lifetime of user access tokens, seconds. */
  sessionTtl: number;
  /** Lifetime of refresh tokens, seconds. */
  refreshTtl: number;
  /**
   * Seconds after a rotation during which the old refresh token, presented again from the
   * address the rotation was made for, is taken for a lost race between two refreshes of one
   * client: it answers 1 and the sign-in stays. 0: any reuse revokes the whole sign-in.
   */
  refreshReuseGrace: number;
  /** Bind user tokens to the address they were issued for. */
  bindTokensToIp: boolean;
  /** A user counts as online this many seconds after an authenticated request. */
  onlineWindow: number;
  captcha: {
    /** siteverify endpoint (reCAPTCHA, hCaptcha, Turnstile all speak it) */
    verifyUrl?: string;
    secret?: string;
    /** Accept the captcha value `test-pass` (for development and tests only). */
    testVerifier: boolean;
  };
  chat: {
    /** Messages served by gchat.get. */
    historySize: number;
    /** Default slow-mode interval, seconds. */
    slowmodeInterval: number;
    /** Emoticon codes accepted in emote-only mode, without colons. */
    emoticons: string[];
    /** Public messages a bot may post per hour. */
    botHourlyLimit: number;
  };
  /** The lowest class of a drop (from an opened case or gift set) that the chat announces. */
  announceDropsFromClass: number;
  ws: {
    heartbeatSeconds: number;
    /** Bytes queued for one subscriber before it is dropped as too slow. */
    maxQueueBytes: number;
    maxFrameBytes: number;
  };
  accounts: {
    /** open: anyone may sign up (auth.signup); closed: only operators create accounts. */
    signup: 'open' | 'closed';
    /** Where players reach the server, for the links in e-mail (default: http://host:port). */
    publicUrl?: string;
  };
  bots: {
    /** Bots one user may create with bots.create (0: none). */
    perOwner: number;
  };
  mail: {
    /** smtp://user:pass@host:port or smtps://...; without it messages are only written to the log. */
    smtpUrl?: string;
    /** The From address of every message. */
    from: string;
    /** Waits before each new try of a message whose delivery failed for a temporary reason. */
    retryDelaysMs: number[];
  };
  im: {
    /** Private messages a user may send in any 10 seconds. */
    burst: number;
    /** Private messages a user may send in any hour. */
    perHour: number;
    /** Accounts younger than this, days, may start only `newDialogsPerDay` conversations a day. */
    youngAccountDays: number;
    newDialogsPerDay: number;
    /** Seconds after sending during which a user may delete their message for both (im.delete); 0: never. */
    deleteWindow: number;
  };
  trades: {
    /** Seconds an open trade lasts; then it expires (status 5). */
    ttl: number;
    /** Seconds a received item stays untradable (its ts_can_trade); 0: none. */
    hold: number;
    /** Open trades a user may have offered at once. */
    maxOpenOutgoing: number;
    /** Trades a user may create per minute. */
    createsPerMinute: number;
  };
  /** Where world files' root-relative images (`/media/...`) are served from, made absolute on import; else the public URL. */
  mediaUrl?: string;
  /** Origins (scheme://host[:port]) whose pages may call the API from the browser; empty: no CORS headers at all. */
  corsOrigins: string[];
  market: {
    /** Percent of a sale's price the platform keeps, rounded down. */
    feePercent: number;
    /** Seconds a bought item stays untradable and unsellable (its ts_can_trade). */
    hold: number;
    /** Seconds a listing lasts; then the item returns to its seller. */
    ttl: number;
    /** Lowest and highest listing price, in minor units (kopecks). */
    minPrice: number;
    maxPrice: number;
  };
  games: {
    /** Seconds a spectator's packets lag behind the game (the players' are live). */
    spectatorDelaySeconds: number;
    /** Unix seconds: when season 1 of the rank begins. */
    seasonStart: number;
    /** Days a season lasts; 0: one season without end. */
    seasonDays: number;
    /** Rated games a player plays in a season before their rank shows (`{qual: N}` until then). */
    rankQualifyingGames: number;
    /** Live games whose engine state each process keeps in memory (0: every call rebuilds its game from the database). */
    stateCacheSize: number;
  };
  http: {
    connectionTimeoutMs: number;
    keepAliveTimeoutMs: number;
    requestTimeoutMs: number;
    maxHeaderBytes: number;
  };
}

export const DEFAULT_EMOTICONS = [
  'smile',
  'laugh',
  'wink',
  'sad',
  'cry',
  'angry',
  'cool',
  'love',
  'heart',
  'thumbsup',
  'thumbsdown',
  'clap',
  'fire',
  'dice',
  'money',
  'crown',
  'gg',
  'think',
  'wow',
  'sleep',
  'party',
  'rocket',
  'star',
  'ok',
];

export function defaultConfig(): Config {
  return {
    host: '127.0.0.1',
    port: 8080,
    databaseUrl: 'sqlite:./data/game-platform.db',
    preparedStatements: true,
    redisPrefix: 'gp:',
    trustProxy: false,
    rateLimit: true,
    rateLimitPerIp: { max: 3000, windowSeconds: 60 },
    rateLimitPerToken: { max: 1200, windowSeconds: 60 },
    maxConnectionsPerIp: 256,
    passwordHashQueue: 16,
    addressSlots: 16_384,
    logLevel: 'info',
    accessLog: 0,
    slowRequestMs: 1000,
    metricsHost: '127.0.0.1',
    bodyLimit: 64 * 1024,
    sessionTtl: 86400,
    refreshTtl: 30 * 86400,
    refreshReuseGrace: 10,
    bindTokensToIp: true,
    onlineWindow: 300,
    captcha: { testVerifier: false },
    chat: { historySize: 100, slowmodeInterval: 10, emoticons: DEFAULT_EMOTICONS, botHourlyLimit: 5 },
    announceDropsFromClass: 0,
    ws: { heartbeatSeconds: 30, maxQueueBytes: 1024 * 1024, maxFrameBytes: 16 * 1024 },
    accounts: { signup: 'open' },
    bots: { perOwner: 5 },
    mail: { from: 'game-platform <no-reply@localhost>', retryDelaysMs: [5_000, 30_000, 120_000, 600_000, 1_800_000] },
    im: { burst: 10, perHour: 300, youngAccountDays: 7, newDialogsPerDay: 20, deleteWindow: 86400 },
    trades: { ttl: 14 * 86400, hold: 0, maxOpenOutgoing: 100, createsPerMinute: 30 },
    corsOrigins: [],
    market: { feePercent: 10, hold: 7 * 86400, ttl: 30 * 86400, minPrice: 1, maxPrice: 100_000_000 },
    games: { spectatorDelaySeconds: 30, seasonStart: 1767225600, seasonDays: 30, rankQualifyingGames: 3, stateCacheSize: 10_000 },
    http: { connectionTimeoutMs: 10_000, keepAliveTimeoutMs: 5_000, requestTimeoutMs: 30_000, maxHeaderBytes: 16 * 1024 },
  };
}
