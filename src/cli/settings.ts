import { parseTrustProxy } from '../api/client-address.js';
import { defaultConfig, type Config } from '../config.js';
import { parseSecretKey, SecretKeyError } from '../infra/secret-box.js';

/**
 * A setting of the command line: its flag, its environment variable, and how it changes the
 * configuration. A flag wins over its environment variable, which wins over the default in
 * src/config.ts. Every setting is one row of SERVER_SETTINGS below; `--help`, the parseArgs
 * options and the README's configuration table (test/cli-readme.test.ts) come from that table.
 */
export interface Setting {
  /** Long flag without the dashes. */
  flag: string;
  env: string;
  /** Placeholder of the flag's value in help; absent for switches (flags without a value). */
  value?: string;
  /** What the environment variable holds, for switches (`RATE_LIMIT=off`). */
  envValue?: string;
  /** The flag may be given alone (as on) or with a value (`--trust-proxy`, `--trust-proxy=2`). */
  optionalValue?: boolean;
  description: string;
  /** Shown as the default in help. */
  shownDefault?: string;
  apply(config: Config, input: string | true, origin: string): void;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** A flag's or variable's text, or `true` for a flag given alone. */
type Input = string | true;

/** Reads a setting's input into its value; refuses it with a ConfigError naming its origin (flag or variable). */
interface Reader<T> {
  read(input: Input, origin: string): T;
  /** Writes a default value as help shows it (String unless given). */
  show?(value: T): string;
}

/** Where a setting's value lives in the configuration. */
interface Field<T> {
  get(config: Config): T | undefined;
  set(config: Config, value: T): void;
}

/** The configuration's groups of settings (`http.requestTimeoutMs`). */
type Section = 'tls' | 'captcha' | 'chat' | 'ws' | 'accounts' | 'bots' | 'mail' | 'trades' | 'im' | 'market' | 'games' | 'http';

function field<K extends keyof Config>(key: K): Field<NonNullable<Config[K]>>;
function field<S extends Section, K extends keyof NonNullable<Config[S]>>(
  section: S,
  key: K,
): Field<NonNullable<NonNullable<Config[S]>[K]>>;
function field(first: string, second?: string): Field<unknown> {
  type Record_ = Record<string, unknown>;
  if (second === undefined)
    return {
      get: (config) => (config as unknown as Record_)[first],
      set: (config, value) => {
        (config as unknown as Record_)[first] = value;
      },
    };
  return {
    get: (config) => ((config as unknown as Record_)[first] as Record_ | undefined)?.[second],
    set: (config, value) => {
      const target = config as unknown as Record_;
      target[first] = { ...(target[first] as Record_ | undefined), [second]: value };
    },
  };
}

const TRUE_WORDS = new Set(['1', 'true', 'yes', 'on']);
const FALSE_WORDS = new Set(['0', 'false', 'no', 'off']);

/** A switch: on from the command line, a yes/no word from the environment. */
const onOff: Reader<boolean> = {
  read(input, origin) {
    if (input === true) return true;
    const word = input.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
    throw new ConfigError(`${origin}: expected on or off, got "${input}"`);
  },
};

/** A switch whose flag turns something off (`--no-rate-limit`); its variable says on or off. */
const offSwitch: Reader<boolean> = {
  read: (input, origin) => (input === true ? false : onOff.read(input, origin)),
};

const text: Reader<string> = {
  read(input, origin) {
    if (input === true || input.trim() === '') throw new ConfigError(`${origin}: a value is required`);
    return input.trim();
  },
};

/** Text that must match `pattern`, else `message`. */
function matching(pattern: RegExp, message: string): Reader<string> {
  return {
    read(input, origin) {
      const value = text.read(input, origin);
      if (!pattern.test(value)) throw new ConfigError(`${origin}: ${message}`);
      return value;
    },
  };
}

/** One of `choices`, in any case. */
function oneOf<const T extends string>(choices: readonly T[]): Reader<T> {
  const expected = choices.length === 2 ? `${choices[0]} or ${choices[1]}` : `one of ${choices.join(', ')}`;
  return {
    read(input, origin) {
      const value = text.read(input, origin).toLowerCase();
      if (!(choices as readonly string[]).includes(value)) throw new ConfigError(`${origin}: expected ${expected}`);
      return value as T;
    },
  };
}

function integer(min: number, max: number): Reader<number> {
  return {
    read(input, origin) {
      const digits = String(input).trim();
      if (!/^\d+$/.test(digits)) throw new ConfigError(`${origin}: expected a whole number, got "${input}"`);
      const value = Number(digits);
      if (value < min || value > max) throw new ConfigError(`${origin}: must be between ${min} and ${max}`);
      return value;
    },
  };
}

/** A reader's value turned into what the configuration keeps, and back for help. */
function converted<A, B>(reader: Reader<A>, to: (value: A) => B, show?: (value: B) => string): Reader<B> {
  return { read: (input, origin) => to(reader.read(input, origin)), show };
}

/** A comma-separated list of web origins, each scheme://host[:port] without a path. */
const corsOrigins: Reader<string[]> = {
  read(input, origin) {
    const origins = text
      .read(input, origin)
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '');
    for (const entry of origins)
      if (!/^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/i.test(entry))
        throw new ConfigError(`${origin}: ${entry} is not an origin (scheme://host[:port], no path or trailing slash)`);
    return origins.map((entry) => entry.toLowerCase());
  },
  show: (origins) => origins.join(','),
};

/** Whole seconds from `min` to `max`, kept in milliseconds. */
function secondsAsMs(min: number, max: number): Reader<number> {
  return converted(
    integer(min, max),
    (seconds) => seconds * 1000,
    (ms) => String(ms / 1000),
  );
}

/** `MAX/SECONDS`, e.g. `3000/60`: at most MAX requests per window of SECONDS. */
const rate: Reader<{ max: number; windowSeconds: number }> = {
  read(input, origin) {
    const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(String(input));
    if (!match) throw new ConfigError(`${origin}: expected MAX/SECONDS such as 3000/60, got "${input}"`);
    const max = Number(match[1]);
    const windowSeconds = Number(match[2]);
    if (max < 1 || windowSeconds < 1 || windowSeconds > 86400)
      throw new ConfigError(`${origin}: MAX and SECONDS must be positive (SECONDS at most 86400)`);
    return { max, windowSeconds };
  },
  show: ({ max, windowSeconds }) => `${max}/${windowSeconds}`,
};

/** A share of requests: `0.01` or `1%`. */
const share: Reader<number> = {
  read(input, origin) {
    const match = /^(\d+(?:\.\d+)?)(%?)$/.exec(String(input).trim());
    const value = match ? Number(match[1]) / (match[2] ? 100 : 1) : NaN;
    if (!(value > 0 && value <= 1)) throw new ConfigError(`${origin}: expected a share of requests such as 0.01 or 1%, got "${input}"`);
    return value;
  },
};

/** A secret key's text, refused with the key parser's message when it is not one. */
const secretKey: Reader<string> = {
  read(input, origin) {
    const value = text.read(input, origin);
    try {
      parseSecretKey(value, origin);
    } catch (error) {
      if (error instanceof SecretKeyError) throw new ConfigError(error.message);
      throw error;
    }
    return value;
  },
};

/** Alone: one proxy; else a number of proxies or their addresses/CIDRs. */
const trustedProxies: Reader<Config['trustProxy']> = {
  read(input, origin) {
    if (input === true) return true;
    try {
      return parseTrustProxy(input);
    } catch (error) {
      throw new ConfigError(`${origin}: ${(error as Error).message}`);
    }
  },
};

/** A row of the settings table: what help shows, how the input is read, and where its value goes. */
interface Row<T> extends Omit<Setting, 'apply' | 'shownDefault'> {
  read: Reader<T>;
  into: Field<T>;
  /** The default as help shows it; without it, the configuration's default value. */
  shownDefault?: string;
}

const defaults = defaultConfig();

function row<T>({ read, into, shownDefault, ...shown }: Row<T>): Setting {
  const defaultValue = into.get(defaults);
  return {
    ...shown,
    shownDefault: shownDefault ?? (defaultValue === undefined ? undefined : (read.show ?? String)(defaultValue)),
    apply(config, input, origin) {
      into.set(config, read.read(input, origin));
    },
  };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const MIB = 1024 * 1024;
const YEAR = 365 * 86400;

/** Every setting of the server, in the order of `serve --help` and of the README's table. */
export const SERVER_SETTINGS: Setting[] = [
  row({
    flag: 'host',
    env: 'HOST',
    value: 'ADDRESS',
    description: 'address to listen on (0.0.0.0 for every interface)',
    read: text,
    into: field('host'),
  }),
  row({
    flag: 'port',
    env: 'PORT',
    value: 'PORT',
    description: 'TCP port to listen on (0 picks a free one)',
    read: integer(0, 65535),
    into: field('port'),
  }),
  row({
    flag: 'database',
    env: 'DATABASE_URL',
    value: 'URL',
    description: '`sqlite:<path>` or `postgres://user:password@host:port/name`',
    read: matching(/^(sqlite:.|postgres:\/\/|postgresql:\/\/)/, 'use sqlite:<path> (a path, not empty) or postgres://...'),
    into: field('databaseUrl'),
  }),
  row({
    flag: 'no-prepared-statements',
    env: 'PREPARED_STATEMENTS',
    envValue: 'off',
    description:
      'PostgreSQL: send every statement to be parsed and planned anew, instead of keeping them prepared on each connection ' +
      '(for a connection pooler in transaction mode that cannot keep prepared statements)',
    shownDefault: 'kept prepared',
    read: offSwitch,
    into: field('preparedStatements'),
  }),
  row({
    flag: 'secret-key',
    env: 'SECRET_KEY',
    value: 'KEY',
    description:
      'key sealing the TOTP secrets stored in the database: 64 hexadecimal digits (`openssl rand -hex 32`); prefer the variable. ' +
      'Required on PostgreSQL; on SQLite without it the key file beside the database (<database>.key, made on first start) is used',
    shownDefault: 'SQLite: <database>.key',
    read: secretKey,
    into: field('secretKey'),
  }),
  row({
    flag: 'previous-secret-key',
    env: 'PREVIOUS_SECRET_KEY',
    value: 'KEY',
    description:
      'to change the secret key: the key the stored secrets were sealed with until now; on start they are sealed again with the new one ' +
      '(then this setting can go)',
    shownDefault: 'none',
    read: secretKey,
    into: field('previousSecretKey'),
  }),
  row({
    flag: 'redis',
    env: 'REDIS_URL',
    value: 'URL',
    description: 'Redis shared by several server processes (rate limits, chat fan-out, revocations)',
    shownDefault: 'none: one process',
    read: matching(/^rediss?:\/\//, 'use redis://host:port'),
    into: field('redisUrl'),
  }),
  row({
    flag: 'redis-prefix',
    env: 'REDIS_PREFIX',
    value: 'PREFIX',
    description: 'prefix of every Redis key and channel, so several deployments can share one Redis',
    read: matching(/^[A-Za-z0-9_.:-]{1,64}$/, 'use up to 64 letters, digits and _ . : -'),
    into: field('redisPrefix'),
  }),
  row({
    flag: 'admin-key',
    env: 'ADMIN_KEY',
    value: 'KEY',
    description: 'key for the admin API (X-Admin-Key header); prefer the variable, flags show in process lists',
    shownDefault: 'none: admin API off',
    read: matching(/^[\s\S]{16,}$/, 'the admin key must be at least 16 characters'),
    into: field('adminKey'),
  }),
  row({
    flag: 'trust-proxy',
    env: 'TRUST_PROXY',
    value: 'PROXIES',
    optionalValue: true,
    description:
      'take the client address from X-Forwarded-For, the rightmost entry that is not one of our proxies: give the number of ' +
      'proxies in front of the server, or their addresses/CIDRs separated by commas; alone, one proxy',
    shownDefault: 'off',
    read: trustedProxies,
    into: field('trustProxy'),
  }),
  row({
    flag: 'no-rate-limit',
    env: 'RATE_LIMIT',
    envValue: 'off',
    description: 'turn off the general per-address and per-token request limits (sign-in protections stay on)',
    shownDefault: 'limits on',
    read: offSwitch,
    into: field('rateLimit'),
  }),
  row({
    flag: 'rate-limit-ip',
    env: 'RATE_LIMIT_IP',
    value: 'MAX/SECONDS',
    description: 'requests allowed per client address per window',
    read: rate,
    into: field('rateLimitPerIp'),
  }),
  row({
    flag: 'rate-limit-token',
    env: 'RATE_LIMIT_TOKEN',
    value: 'MAX/SECONDS',
    description: 'requests allowed per access token per window',
    read: rate,
    into: field('rateLimitPerToken'),
  }),
  row({
    flag: 'max-connections-per-ip',
    env: 'MAX_CONNECTIONS_PER_IP',
    value: 'N',
    description: 'open connections (HTTP and WebSocket) one client address may hold; past it a new one is refused with code 7',
    read: integer(1, 1_000_000),
    into: field('maxConnectionsPerIp'),
  }),
  row({
    flag: 'password-hash-queue',
    env: 'PASSWORD_HASH_QUEUE',
    value: 'N',
    description:
      'password checks that may wait for a hasher in this process, in each of two queues (sign-ins from a known address or device, everything else); past it, code 7 with retry_after',
    read: integer(0, 100_000),
    into: field('passwordHashQueue'),
  }),
  row({
    flag: 'world',
    env: 'WORLD',
    value: 'FILE',
    description: 'world file imported on start when the database is empty',
    shownDefault: 'none',
    read: text,
    into: field('world'),
  }),
  row({
    flag: 'log-level',
    env: 'LOG_LEVEL',
    value: 'LEVEL',
    description: `log level: ${LOG_LEVELS.join(', ')}`,
    read: oneOf(LOG_LEVELS),
    into: field('logLevel'),
  }),
  row({
    flag: 'access-log',
    env: 'ACCESS_LOG',
    envValue: 'on',
    description: 'log every answered request (info, one line each); slow requests and errors are logged regardless',
    shownDefault: 'off',
    read: converted(onOff, (on) => (on ? 1 : 0)),
    into: field('accessLog'),
  }),
  row({
    flag: 'access-log-sample',
    env: 'ACCESS_LOG_SAMPLE',
    value: 'SHARE',
    description: 'log a random sample of answered requests instead: 0.01 or 1% logs one in a hundred',
    shownDefault: 'none',
    read: share,
    into: field('accessLog'),
  }),
  row({
    flag: 'tls-cert',
    env: 'TLS_CERT',
    value: 'FILE',
    description: 'serve HTTPS and WSS with this PEM certificate chain (with --tls-key); SIGHUP reads both files again',
    shownDefault: 'none: plain HTTP',
    read: text,
    into: field('tls', 'certFile'),
  }),
  row({
    flag: 'tls-key',
    env: 'TLS_KEY',
    value: 'FILE',
    description: 'PEM private key of --tls-cert',
    shownDefault: 'none',
    read: text,
    into: field('tls', 'keyFile'),
  }),
  row({
    flag: 'metrics-port',
    env: 'METRICS_PORT',
    value: 'PORT',
    description: 'serve GET /metrics (Prometheus) without a key on a listener of its own; else only to the admin key on the API port',
    shownDefault: 'none',
    read: integer(0, 65535),
    into: field('metricsPort'),
  }),
  row({
    flag: 'metrics-host',
    env: 'METRICS_HOST',
    value: 'ADDRESS',
    description: 'address of the metrics listener: one only your monitoring reaches',
    read: text,
    into: field('metricsHost'),
  }),
  row({
    flag: 'slow-request-ms',
    env: 'SLOW_REQUEST_MS',
    value: 'MS',
    description: 'a request answered after this many milliseconds or more is logged (warn) with its request id',
    read: integer(1, 3_600_000),
    into: field('slowRequestMs'),
  }),
  row({
    flag: 'body-limit',
    env: 'BODY_LIMIT',
    value: 'BYTES',
    description: 'largest request body; larger ones answer code 2 with HTTP 413',
    read: integer(1024, 64 * MIB),
    into: field('bodyLimit'),
  }),
  row({
    flag: 'max-header-bytes',
    env: 'MAX_HEADER_BYTES',
    value: 'BYTES',
    description: 'largest request line and headers together; larger ones answer code 2 with HTTP 431',
    read: integer(1024, MIB),
    into: field('http', 'maxHeaderBytes'),
  }),
  row({
    flag: 'connection-timeout',
    env: 'CONNECTION_TIMEOUT',
    value: 'SECONDS',
    description: 'a connection that sends and receives nothing for this long is closed',
    read: secondsAsMs(1, 3600),
    into: field('http', 'connectionTimeoutMs'),
  }),
  row({
    flag: 'keep-alive-timeout',
    env: 'KEEP_ALIVE_TIMEOUT',
    value: 'SECONDS',
    description: 'an idle keep-alive connection is closed this long after its last answer',
    read: secondsAsMs(1, 3600),
    into: field('http', 'keepAliveTimeoutMs'),
  }),
  row({
    flag: 'request-timeout',
    env: 'REQUEST_TIMEOUT',
    value: 'SECONDS',
    description: 'a request must arrive whole (headers and body) within this time, else code 2 with HTTP 408',
    read: secondsAsMs(1, 3600),
    into: field('http', 'requestTimeoutMs'),
  }),
  row({
    flag: 'ws-max-frame',
    env: 'WS_MAX_FRAME',
    value: 'BYTES',
    description: 'largest WebSocket message a client may send; a larger one closes the connection with 1009',
    read: integer(128, 16 * MIB),
    into: field('ws', 'maxFrameBytes'),
  }),
  row({
    flag: 'ws-max-queue',
    env: 'WS_MAX_QUEUE',
    value: 'BYTES',
    description: 'data queued for one WebSocket subscriber that does not read; past it the subscriber is dropped',
    read: integer(1024, 256 * MIB),
    into: field('ws', 'maxQueueBytes'),
  }),
  row({
    flag: 'session-ttl',
    env: 'SESSION_TTL',
    value: 'SECONDS',
    description: 'lifetime of user access tokens',
    read: integer(60, YEAR),
    into: field('sessionTtl'),
  }),
  row({
    flag: 'refresh-reuse-grace',
    env: 'REFRESH_REUSE_GRACE',
    value: 'SECONDS',
    description:
      'a used refresh token presented again within this time of its rotation, from the same address, answers 1 without revoking the sign-in (a client racing itself); 0: every reuse revokes it',
    read: integer(0, 60),
    into: field('refreshReuseGrace'),
  }),
  row({
    flag: 'no-ip-binding',
    env: 'IP_BINDING',
    envValue: 'off',
    description: 'accept user tokens from any address (bot tokens stay bound to their address)',
    shownDefault: 'bound',
    read: offSwitch,
    into: field('bindTokensToIp'),
  }),
  row({
    flag: 'online-window',
    env: 'ONLINE_WINDOW',
    value: 'SECONDS',
    description: 'a user counts as online this long after an authenticated request',
    read: integer(1, 86400),
    into: field('onlineWindow'),
  }),
  row({
    flag: 'game-spectator-delay',
    env: 'GAME_SPECTATOR_DELAY',
    value: 'SECONDS',
    description: "a live game's spectators see each packet this long after its players (0: at once)",
    read: integer(0, 3600),
    into: field('games', 'spectatorDelaySeconds'),
  }),
  row({
    flag: 'game-season-start',
    env: 'GAME_SEASON_START',
    value: 'UNIX_SECONDS',
    description: 'when season 1 of the game ranks begins (seasons follow each other from then)',
    read: integer(0, 253402300799),
    into: field('games', 'seasonStart'),
  }),
  row({
    flag: 'game-season-days',
    env: 'GAME_SEASON_DAYS',
    value: 'DAYS',
    description: 'how long a season of the game ranks lasts (0: one season without end)',
    read: integer(0, 3650),
    into: field('games', 'seasonDays'),
  }),
  row({
    flag: 'game-rank-qualifying',
    env: 'GAME_RANK_QUALIFYING',
    value: 'GAMES',
    description: 'rated games a player plays in a season before their rank shows ({qual: N} until then)',
    read: integer(0, 100),
    into: field('games', 'rankQualifyingGames'),
  }),
  row({
    flag: 'game-state-cache',
    env: 'GAME_STATE_CACHE',
    value: 'GAMES',
    description: 'live games whose state each process keeps in memory between calls (0: rebuild every call from the database)',
    read: integer(0, 1_000_000),
    into: field('games', 'stateCacheSize'),
  }),
  row({
    flag: 'trade-ttl',
    env: 'TRADE_TTL',
    value: 'SECONDS',
    description: 'an open trade expires (status 5) this long after it was offered',
    read: integer(60, YEAR),
    into: field('trades', 'ttl'),
  }),
  row({
    flag: 'trade-hold',
    env: 'TRADE_HOLD',
    value: 'SECONDS',
    description: 'items received in a trade cannot be traded or crafted for this long (0: at once)',
    read: integer(0, YEAR),
    into: field('trades', 'hold'),
  }),
  row({
    flag: 'trade-open-max',
    env: 'TRADE_OPEN_MAX',
    value: 'N',
    description: 'open trades a user may have offered at once (more answers 7)',
    read: integer(1, 100_000),
    into: field('trades', 'maxOpenOutgoing'),
  }),
  row({
    flag: 'trade-create-rate',
    env: 'TRADE_CREATE_RATE',
    value: 'N',
    description: 'trades a user may offer in any 60 seconds; a refused offer does not count (more answers 7)',
    read: integer(1, 1_000_000),
    into: field('trades', 'createsPerMinute'),
  }),
  row({
    flag: 'im-burst',
    env: 'IM_BURST',
    value: 'N',
    description: 'private messages a user may send in any 10 seconds (more answers 7)',
    read: integer(1, 1_000_000),
    into: field('im', 'burst'),
  }),
  row({
    flag: 'im-per-hour',
    env: 'IM_PER_HOUR',
    value: 'N',
    description: 'private messages a user may send in any hour (more answers 7)',
    read: integer(1, 10_000_000),
    into: field('im', 'perHour'),
  }),
  row({
    flag: 'im-young-account-days',
    env: 'IM_YOUNG_ACCOUNT_DAYS',
    value: 'DAYS',
    description: 'accounts younger than this may start only --im-new-dialogs conversations a day (0: no account is young)',
    read: integer(0, 10_000),
    into: field('im', 'youngAccountDays'),
  }),
  row({
    flag: 'im-new-dialogs',
    env: 'IM_NEW_DIALOGS',
    value: 'N',
    description: 'conversations a young account may start in a day (more answers 7)',
    read: integer(0, 1_000_000),
    into: field('im', 'newDialogsPerDay'),
  }),
  row({
    flag: 'im-delete-window',
    env: 'IM_DELETE_WINDOW',
    value: 'SECONDS',
    description: 'how long after sending a user may delete their private message for both with im.delete (0: never)',
    read: integer(0, 100_000_000),
    into: field('im', 'deleteWindow'),
  }),
  row({
    flag: 'market-fee',
    env: 'MARKET_FEE',
    value: 'PERCENT',
    description: 'the part of a market sale the platform keeps, rounded down to the kopeck',
    read: integer(0, 100),
    into: field('market', 'feePercent'),
  }),
  row({
    flag: 'market-hold',
    env: 'MARKET_HOLD',
    value: 'SECONDS',
    description: 'an item bought on the market cannot be traded, crafted or sold again for this long',
    read: integer(0, YEAR),
    into: field('market', 'hold'),
  }),
  row({
    flag: 'market-ttl',
    env: 'MARKET_TTL',
    value: 'SECONDS',
    description: 'a market listing ends this long after it was made and the item returns to its seller',
    read: integer(60, YEAR),
    into: field('market', 'ttl'),
  }),
  row({
    flag: 'market-min-price',
    env: 'MARKET_MIN_PRICE',
    value: 'KOPECKS',
    description: 'the lowest market price, in kopecks (1/100 of the currency unit)',
    read: integer(1, 1_000_000_000_000),
    into: field('market', 'minPrice'),
  }),
  row({
    flag: 'market-max-price',
    env: 'MARKET_MAX_PRICE',
    value: 'KOPECKS',
    description: 'the highest market price, in kopecks',
    read: integer(1, 1_000_000_000_000),
    into: field('market', 'maxPrice'),
  }),
  row({
    flag: 'chat-history',
    env: 'CHAT_HISTORY',
    value: 'N',
    description: 'messages served by gchat.get',
    read: integer(1, 10_000),
    into: field('chat', 'historySize'),
  }),
  row({
    flag: 'chat-announce-from',
    env: 'CHAT_ANNOUNCE_FROM',
    value: 'CLASS',
    description: 'the lowest class of an opened drop that the chat announces (0: every drop)',
    read: integer(0, 1000),
    into: field('announceDropsFromClass'),
  }),
  row({
    flag: 'captcha-verify-url',
    env: 'CAPTCHA_VERIFY_URL',
    value: 'URL',
    description: 'captcha siteverify endpoint (reCAPTCHA, hCaptcha and Turnstile speak the same protocol)',
    shownDefault: 'none',
    read: matching(/^https?:\/\//, 'expected an http(s) URL'),
    into: field('captcha', 'verifyUrl'),
  }),
  row({
    flag: 'captcha-secret',
    env: 'CAPTCHA_SECRET',
    value: 'SECRET',
    description: 'secret sent to the captcha siteverify endpoint',
    shownDefault: 'none',
    read: text,
    into: field('captcha', 'secret'),
  }),
  row({
    flag: 'captcha-test-verifier',
    env: 'CAPTCHA_TEST_VERIFIER',
    envValue: 'on',
    description: 'accept the captcha value `test-pass` (development and tests only, never in production)',
    shownDefault: 'off',
    read: onOff,
    into: field('captcha', 'testVerifier'),
  }),
  row({
    flag: 'signup',
    env: 'SIGNUP',
    value: 'MODE',
    description: 'open: anyone may create an account with auth.signup; closed: only operators create accounts',
    read: oneOf(['open', 'closed']),
    into: field('accounts', 'signup'),
  }),
  row({
    flag: 'bots-per-owner',
    env: 'BOTS_PER_OWNER',
    value: 'N',
    description: 'bots one user may create with bots.create (0: none; more answers 1802)',
    read: integer(0, 1000),
    into: field('bots', 'perOwner'),
  }),
  row({
    flag: 'public-url',
    env: 'PUBLIC_URL',
    value: 'URL',
    description: 'the address players reach the server at, for links in e-mail',
    shownDefault: 'http://HOST:PORT',
    read: converted(matching(/^https?:\/\/[^\s]+$/, 'expected an http(s) URL'), (url) => url.replace(/\/+$/, '')),
    into: field('accounts', 'publicUrl'),
  }),
  row({
    flag: 'media-url',
    env: 'MEDIA_URL',
    value: 'URL',
    description:
      'where the images a world file names by a path of this server (/media/..., as the demo world does) are kept: ' +
      'they are imported as URL/media/...; the demo images are served by this server',
    shownDefault: 'the public URL, else left relative',
    read: converted(matching(/^https?:\/\/[^\s]+$/, 'expected an http(s) URL'), (url) => url.replace(/\/+$/, '')),
    into: field('mediaUrl'),
  }),
  row({
    flag: 'cors-origins',
    env: 'CORS_ORIGINS',
    value: 'ORIGINS',
    description:
      'origins (https://app.example.com, separated by commas) whose pages may call the API and the realtime feed from a browser; ' +
      'preflights from them are answered, any other origin gets no CORS headers',
    shownDefault: 'none: no CORS headers',
    read: corsOrigins,
    into: field('corsOrigins'),
  }),
  row({
    flag: 'smtp-url',
    env: 'SMTP_URL',
    value: 'URL',
    description:
      'mail server for account e-mail: smtp://user:password@host:587 (STARTTLS when offered) or smtps://...:465; prefer the variable',
    shownDefault: 'none: messages go to the log',
    read: matching(/^smtps?:\/\/[^\s]+$/, 'use smtp://host:port or smtps://host:port'),
    into: field('mail', 'smtpUrl'),
  }),
  row({
    flag: 'mail-from',
    env: 'MAIL_FROM',
    value: 'ADDRESS',
    description: 'From address of account e-mail',
    read: matching(/^[^\r\n]*@[^\r\n]*$/, 'expected an e-mail address'),
    into: field('mail', 'from'),
  }),
];

/** The settings with these flags, in this order (the settings of a command other than `serve`). */
export function settingsNamed(...flags: string[]): Setting[] {
  return flags.map((flag) => {
    const setting = SERVER_SETTINGS.find((s) => s.flag === flag);
    if (!setting) throw new Error(`no setting --${flag}`);
    return setting;
  });
}

/** The flag as help and the README write it: `--port PORT`. */
export function flagUsage(setting: Setting): string {
  return `--${setting.flag}${setting.value ? ` ${setting.value}` : ''}`;
}

/** The variable as help and the README write it: `PORT`, or `RATE_LIMIT=off` for a switch. */
export function envUsage(setting: Setting): string {
  return setting.envValue ? `${setting.env}=${setting.envValue}` : setting.env;
}

/**
 * The arguments with each flag that may stand alone given its value `on` when it does
 * (`--trust-proxy` followed by nothing or by another flag), so parseArgs can read it as a value.
 */
export function withOptionalValues(settings: Setting[], args: string[]): string[] {
  const optional = new Set(settings.filter((s) => s.optionalValue).map((s) => `--${s.flag}`));
  return args.map((arg, i) => (optional.has(arg) && (i + 1 >= args.length || args[i + 1]!.startsWith('-')) ? `${arg}=on` : arg));
}

/** The parseArgs option table for a list of settings. */
export function parseArgsOptions(settings: Setting[]): Record<string, { type: 'string' | 'boolean' }> {
  return Object.fromEntries(settings.map((s) => [s.flag, { type: s.value ? ('string' as const) : ('boolean' as const) }]));
}

/**
 * The configuration from parsed flags and the environment: a flag wins over its
 * environment variable, which wins over the default. An empty variable counts as unset.
 */
export function loadConfig(settings: Setting[], flags: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv): Config {
  const config = defaultConfig();
  for (const setting of settings) {
    const flagValue = flags[setting.flag];
    if (flagValue !== undefined && flagValue !== false) {
      setting.apply(config, flagValue === true ? true : flagValue, `--${setting.flag}`);
      continue;
    }
    const envValue = env[setting.env];
    if (envValue !== undefined && envValue !== '') setting.apply(config, envValue, setting.env);
  }
  return config;
}

/** Help lines for a list of settings: flag, variable, description, default. */
export function describeSettings(settings: Setting[], extra: { left: string; right: string }[] = []): string {
  const rows = settings.map((s) => {
    const tail = s.shownDefault ? ` (default: ${s.shownDefault})` : '';
    return { left: `  ${flagUsage(s)}`, right: `${envUsage(s)}: ${s.description}${tail}` };
  });
  rows.push(...extra.map((e) => ({ left: `  ${e.left}`, right: e.right })));
  const width = Math.max(...rows.map((r) => r.left.length)) + 2;
  return rows.map((r) => r.left.padEnd(width) + r.right).join('\n');
}
