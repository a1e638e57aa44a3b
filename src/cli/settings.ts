import { parseTrustProxy } from '../api/client-address.js';
import { defaultConfig, type Config } from '../config.js';
import { parseSecretKey, SecretKeyError } from '../infra/secret-box.js';

/**
 * Every setting the command line takes: its flag, its environment variable, and how it
 * changes the configuration. A flag wins over its environment variable, which wins over
 * the default in src/config.ts. The same list produces `--help` and the parseArgs options.
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

const TRUE_WORDS = new Set(['1', 'true', 'yes', 'on']);
const FALSE_WORDS = new Set(['0', 'false', 'no', 'off']);

/** A switch from the command line (always true) or from the environment (a yes/no word). */
function readSwitch(input: string | true, origin: string): boolean {
  if (input === true) return true;
  const word = input.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  throw new ConfigError(`${origin}: expected on or off, got "${input}"`);
}

function readInteger(input: string | true, origin: string, min: number, max: number): number {
  const text = String(input).trim();
  if (!/^\d+$/.test(text)) throw new ConfigError(`${origin}: expected a whole number, got "${input}"`);
  const value = Number(text);
  if (value < min || value > max) throw new ConfigError(`${origin}: must be between ${min} and ${max}`);
  return value;
}

function readText(input: string | true, origin: string): string {
  if (input === true || input.trim() === '') throw new ConfigError(`${origin}: a value is required`);
  return input.trim();
}

/** `MAX/SECONDS`, e.g. `3000/60`: at most MAX requests per window of SECONDS. */
/** A secret key's text, refused with the key parser's message when it is not one. */
function readSecretKey(input: string | true, origin: string): string {
  const text = readText(input, origin);
  try {
    parseSecretKey(text, origin);
  } catch (error) {
    if (error instanceof SecretKeyError) throw new ConfigError(error.message);
    throw error;
  }
  return text;
}

function readRate(input: string | true, origin: string): { max: number; windowSeconds: number } {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(String(input));
  if (!match) throw new ConfigError(`${origin}: expected MAX/SECONDS such as 3000/60, got "${input}"`);
  const max = Number(match[1]);
  const windowSeconds = Number(match[2]);
  if (max < 1 || windowSeconds < 1 || windowSeconds > 86400)
    throw new ConfigError(`${origin}: MAX and SECONDS must be positive (SECONDS at most 86400)`);
  return { max, windowSeconds };
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const defaults = defaultConfig();

export const DATABASE_SETTING: Setting = {
  flag: 'database',
  env: 'DATABASE_URL',
  value: 'URL',
  description: '`sqlite:<path>` or `postgres://user:password@host:port/name`',
  shownDefault: defaults.databaseUrl,
  apply(config, input, origin) {
    const url = readText(input, origin);
    if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(url)) throw new ConfigError(`${origin}: use sqlite:<path> or postgres://...`);
    config.databaseUrl = url;
  },
};

export const SECRET_KEY_SETTING: Setting = {
  flag: 'secret-key',
  env: 'SECRET_KEY',
  value: 'KEY',
  description:
    'key sealing the TOTP secrets stored in the database: 64 hexadecimal digits (`openssl rand -hex 32`); prefer the variable. ' +
    'Required on PostgreSQL; on SQLite without it the key file beside the database (<database>.key, made on first start) is used',
  shownDefault: 'SQLite: <database>.key',
  apply(config, input, origin) {
    config.secretKey = readSecretKey(input, origin);
  },
};

export const PREVIOUS_SECRET_KEY_SETTING: Setting = {
  flag: 'previous-secret-key',
  env: 'PREVIOUS_SECRET_KEY',
  value: 'KEY',
  description:
    'to change the secret key: the key the stored secrets were sealed with until now; on start they are sealed again with the new one ' +
    '(then this setting can go)',
  shownDefault: 'none',
  apply(config, input, origin) {
    config.previousSecretKey = readSecretKey(input, origin);
  },
};

export const REDIS_SETTING: Setting = {
  flag: 'redis',
  env: 'REDIS_URL',
  value: 'URL',
  description: 'Redis shared by several server processes (rate limits, chat fan-out, revocations)',
  shownDefault: 'none: one process',
  apply(config, input, origin) {
    const url = readText(input, origin);
    if (!/^rediss?:\/\//.test(url)) throw new ConfigError(`${origin}: use redis://host:port`);
    config.redisUrl = url;
  },
};

export const REDIS_PREFIX_SETTING: Setting = {
  flag: 'redis-prefix',
  env: 'REDIS_PREFIX',
  value: 'PREFIX',
  description: 'prefix of every Redis key and channel, so several deployments can share one Redis',
  shownDefault: defaults.redisPrefix,
  apply(config, input, origin) {
    const prefix = readText(input, origin);
    if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(prefix)) throw new ConfigError(`${origin}: use up to 64 letters, digits and _ . : -`);
    config.redisPrefix = prefix;
  },
};

export const LOG_LEVEL_SETTING: Setting = {
  flag: 'log-level',
  env: 'LOG_LEVEL',
  value: 'LEVEL',
  description: `log level: ${LOG_LEVELS.join(', ')}`,
  shownDefault: defaults.logLevel,
  apply(config, input, origin) {
    const level = readText(input, origin).toLowerCase();
    if (!LOG_LEVELS.includes(level)) throw new ConfigError(`${origin}: expected one of ${LOG_LEVELS.join(', ')}`);
    config.logLevel = level;
  },
};

/** A share of requests: `0.01` or `1%`. */
function readShare(input: string | true, origin: string): number {
  const match = /^(\d+(?:\.\d+)?)(%?)$/.exec(String(input).trim());
  const share = match ? Number(match[1]) / (match[2] ? 100 : 1) : NaN;
  if (!(share > 0 && share <= 1)) throw new ConfigError(`${origin}: expected a share of requests such as 0.01 or 1%, got "${input}"`);
  return share;
}

export const REQUEST_LOG_SETTINGS: Setting[] = [
  {
    flag: 'access-log',
    env: 'ACCESS_LOG',
    envValue: 'on',
    description: 'log every answered request (info, one line each); slow requests and errors are logged regardless',
    shownDefault: 'off',
    apply(config, input, origin) {
      config.accessLog = readSwitch(input, origin) ? 1 : 0;
    },
  },
  {
    flag: 'access-log-sample',
    env: 'ACCESS_LOG_SAMPLE',
    value: 'SHARE',
    description: 'log a random sample of answered requests instead: 0.01 or 1% logs one in a hundred',
    shownDefault: 'none',
    apply(config, input, origin) {
      config.accessLog = readShare(input, origin);
    },
  },
  {
    flag: 'tls-cert',
    env: 'TLS_CERT',
    value: 'FILE',
    description: 'serve HTTPS and WSS with this PEM certificate chain (with --tls-key); SIGHUP reads both files again',
    shownDefault: 'none: plain HTTP',
    apply(config, input, origin) {
      config.tls = { ...config.tls, certFile: readText(input, origin) };
    },
  },
  {
    flag: 'tls-key',
    env: 'TLS_KEY',
    value: 'FILE',
    description: 'PEM private key of --tls-cert',
    shownDefault: 'none',
    apply(config, input, origin) {
      config.tls = { ...config.tls, keyFile: readText(input, origin) };
    },
  },
  {
    flag: 'metrics-port',
    env: 'METRICS_PORT',
    value: 'PORT',
    description: 'serve GET /metrics (Prometheus) without a key on a listener of its own; else only to the admin key on the API port',
    shownDefault: 'none',
    apply(config, input, origin) {
      config.metricsPort = readInteger(input, origin, 0, 65535);
    },
  },
  {
    flag: 'metrics-host',
    env: 'METRICS_HOST',
    value: 'ADDRESS',
    description: 'address of the metrics listener: one only your monitoring reaches',
    shownDefault: defaults.metricsHost,
    apply(config, input, origin) {
      config.metricsHost = readText(input, origin);
    },
  },
  {
    flag: 'slow-request-ms',
    env: 'SLOW_REQUEST_MS',
    value: 'MS',
    description: 'a request answered after this many milliseconds or more is logged (warn) with its request id',
    shownDefault: String(defaults.slowRequestMs),
    apply(config, input, origin) {
      config.slowRequestMs = readInteger(input, origin, 1, 3_600_000);
    },
  },
];

/** Settings of the server itself (`serve`). */
/** An HTTP timeout, given in seconds and kept in milliseconds. */
/** A WebSocket size limit in bytes, from `min` to `max` (16 MiB unless given). */
function wsLimit(
  flag: string,
  env: string,
  key: 'maxFrameBytes' | 'maxQueueBytes',
  description: string,
  min: number,
  max = 16 * 1024 * 1024,
): Setting {
  return {
    flag,
    env,
    value: 'BYTES',
    description,
    shownDefault: String(defaults.ws[key]),
    apply(config, input, origin) {
      config.ws = { ...config.ws, [key]: readInteger(input, origin, min, max) };
    },
  };
}

function httpTimeout(
  flag: string,
  env: string,
  key: 'connectionTimeoutMs' | 'keepAliveTimeoutMs' | 'requestTimeoutMs',
  description: string,
): Setting {
  return {
    flag,
    env,
    value: 'SECONDS',
    description,
    shownDefault: String(defaults.http[key] / 1000),
    apply(config, input, origin) {
      config.http = { ...config.http, [key]: readInteger(input, origin, 1, 3600) * 1000 };
    },
  };
}

export const SERVER_SETTINGS: Setting[] = [
  {
    flag: 'host',
    env: 'HOST',
    value: 'ADDRESS',
    description: 'address to listen on (0.0.0.0 for every interface)',
    shownDefault: defaults.host,
    apply(config, input, origin) {
      config.host = readText(input, origin);
    },
  },
  {
    flag: 'port',
    env: 'PORT',
    value: 'PORT',
    description: 'TCP port to listen on (0 picks a free one)',
    shownDefault: String(defaults.port),
    apply(config, input, origin) {
      config.port = readInteger(input, origin, 0, 65535);
    },
  },
  DATABASE_SETTING,
  SECRET_KEY_SETTING,
  PREVIOUS_SECRET_KEY_SETTING,
  REDIS_SETTING,
  REDIS_PREFIX_SETTING,
  {
    flag: 'admin-key',
    env: 'ADMIN_KEY',
    value: 'KEY',
    description: 'key for the admin API (X-Admin-Key header); prefer the variable, flags show in process lists',
    shownDefault: 'none: admin API off',
    apply(config, input, origin) {
      const key = readText(input, origin);
      if (key.length < 16) throw new ConfigError(`${origin}: the admin key must be at least 16 characters`);
      config.adminKey = key;
    },
  },
  {
    flag: 'trust-proxy',
    env: 'TRUST_PROXY',
    value: 'PROXIES',
    optionalValue: true,
    description:
      'take the client address from X-Forwarded-For, the rightmost entry that is not one of our proxies: give the number of ' +
      'proxies in front of the server, or their addresses/CIDRs separated by commas; alone, one proxy',
    shownDefault: 'off',
    apply(config, input, origin) {
      if (input === true) {
        config.trustProxy = true;
        return;
      }
      try {
        config.trustProxy = parseTrustProxy(input);
      } catch (error) {
        throw new ConfigError(`${origin}: ${(error as Error).message}`);
      }
    },
  },
  {
    flag: 'no-rate-limit',
    env: 'RATE_LIMIT',
    envValue: 'off',
    description: 'turn off the general per-address and per-token request limits (sign-in protections stay on)',
    shownDefault: 'limits on',
    apply(config, input, origin) {
      config.rateLimit = input === true ? false : readSwitch(input, origin);
    },
  },
  {
    flag: 'rate-limit-ip',
    env: 'RATE_LIMIT_IP',
    value: 'MAX/SECONDS',
    description: 'requests allowed per client address per window',
    shownDefault: `${defaults.rateLimitPerIp.max}/${defaults.rateLimitPerIp.windowSeconds}`,
    apply(config, input, origin) {
      config.rateLimitPerIp = readRate(input, origin);
    },
  },
  {
    flag: 'rate-limit-token',
    env: 'RATE_LIMIT_TOKEN',
    value: 'MAX/SECONDS',
    description: 'requests allowed per access token per window',
    shownDefault: `${defaults.rateLimitPerToken.max}/${defaults.rateLimitPerToken.windowSeconds}`,
    apply(config, input, origin) {
      config.rateLimitPerToken = readRate(input, origin);
    },
  },
  {
    flag: 'max-connections-per-ip',
    env: 'MAX_CONNECTIONS_PER_IP',
    value: 'N',
    description: 'open connections (HTTP and WebSocket) one client address may hold; past it a new one is refused with code 7',
    shownDefault: String(defaults.maxConnectionsPerIp),
    apply(config, input, origin) {
      config.maxConnectionsPerIp = readInteger(input, origin, 1, 1_000_000);
    },
  },
  {
    flag: 'world',
    env: 'WORLD',
    value: 'FILE',
    description: 'world file imported on start when the database is empty',
    shownDefault: 'none',
    apply(config, input, origin) {
      config.world = readText(input, origin);
    },
  },
  LOG_LEVEL_SETTING,
  ...REQUEST_LOG_SETTINGS,
  {
    flag: 'body-limit',
    env: 'BODY_LIMIT',
    value: 'BYTES',
    description: 'largest request body; larger ones answer code 2 with HTTP 413',
    shownDefault: String(defaults.bodyLimit),
    apply(config, input, origin) {
      config.bodyLimit = readInteger(input, origin, 1024, 64 * 1024 * 1024);
    },
  },
  {
    flag: 'max-header-bytes',
    env: 'MAX_HEADER_BYTES',
    value: 'BYTES',
    description: 'largest request line and headers together; larger ones answer code 2 with HTTP 431',
    shownDefault: String(defaults.http.maxHeaderBytes),
    apply(config, input, origin) {
      config.http = { ...config.http, maxHeaderBytes: readInteger(input, origin, 1024, 1024 * 1024) };
    },
  },
  httpTimeout(
    'connection-timeout',
    'CONNECTION_TIMEOUT',
    'connectionTimeoutMs',
    'a connection that sends and receives nothing for this long is closed',
  ),
  httpTimeout(
    'keep-alive-timeout',
    'KEEP_ALIVE_TIMEOUT',
    'keepAliveTimeoutMs',
    'an idle keep-alive connection is closed this long after its last answer',
  ),
  httpTimeout(
    'request-timeout',
    'REQUEST_TIMEOUT',
    'requestTimeoutMs',
    'a request must arrive whole (headers and body) within this time, else code 2 with HTTP 408',
  ),
  wsLimit(
    'ws-max-frame',
    'WS_MAX_FRAME',
    'maxFrameBytes',
    'largest WebSocket message a client may send; a larger one closes the connection with 1009',
    128,
  ),
  wsLimit(
    'ws-max-queue',
    'WS_MAX_QUEUE',
    'maxQueueBytes',
    'data queued for one WebSocket subscriber that does not read; past it the subscriber is dropped',
    1024,
    256 * 1024 * 1024,
  ),
  {
    flag: 'session-ttl',
    env: 'SESSION_TTL',
    value: 'SECONDS',
    description: 'lifetime of user access tokens',
    shownDefault: String(defaults.sessionTtl),
    apply(config, input, origin) {
      config.sessionTtl = readInteger(input, origin, 60, 365 * 86400);
    },
  },
  {
    flag: 'refresh-reuse-grace',
    env: 'REFRESH_REUSE_GRACE',
    value: 'SECONDS',
    description:
      'a used refresh token presented again within this time of its rotation, from the same address, answers 1 without revoking the sign-in (a client racing itself); 0: every reuse revokes it',
    shownDefault: String(defaults.refreshReuseGrace),
    apply(config, input, origin) {
      config.refreshReuseGrace = readInteger(input, origin, 0, 60);
    },
  },
  {
    flag: 'no-ip-binding',
    env: 'IP_BINDING',
    envValue: 'off',
    description: 'accept user tokens from any address (bot tokens stay bound to their address)',
    shownDefault: 'bound',
    apply(config, input, origin) {
      config.bindTokensToIp = input === true ? false : readSwitch(input, origin);
    },
  },
  {
    flag: 'online-window',
    env: 'ONLINE_WINDOW',
    value: 'SECONDS',
    description: 'a user counts as online this long after an authenticated request',
    shownDefault: String(defaults.onlineWindow),
    apply(config, input, origin) {
      config.onlineWindow = readInteger(input, origin, 1, 86400);
    },
  },
  {
    flag: 'trade-ttl',
    env: 'TRADE_TTL',
    value: 'SECONDS',
    description: 'an open trade expires (status 5) this long after it was offered',
    shownDefault: String(defaults.trades.ttl),
    apply(config, input, origin) {
      config.trades.ttl = readInteger(input, origin, 60, 365 * 86400);
    },
  },
  {
    flag: 'trade-hold',
    env: 'TRADE_HOLD',
    value: 'SECONDS',
    description: 'items received in a trade cannot be traded or crafted for this long (0: at once)',
    shownDefault: String(defaults.trades.hold),
    apply(config, input, origin) {
      config.trades.hold = readInteger(input, origin, 0, 365 * 86400);
    },
  },
  {
    flag: 'trade-open-max',
    env: 'TRADE_OPEN_MAX',
    value: 'N',
    description: 'open trades a user may have offered at once (more answers 7)',
    shownDefault: String(defaults.trades.maxOpenOutgoing),
    apply(config, input, origin) {
      config.trades.maxOpenOutgoing = readInteger(input, origin, 1, 100_000);
    },
  },
  {
    flag: 'trade-create-rate',
    env: 'TRADE_CREATE_RATE',
    value: 'N',
    description: 'trades a user may offer per minute (more answers 7)',
    shownDefault: String(defaults.trades.createsPerMinute),
    apply(config, input, origin) {
      config.trades.createsPerMinute = readInteger(input, origin, 1, 1_000_000);
    },
  },
  {
    flag: 'chat-history',
    env: 'CHAT_HISTORY',
    value: 'N',
    description: 'messages served by gchat.get',
    shownDefault: String(defaults.chat.historySize),
    apply(config, input, origin) {
      config.chat = { ...config.chat, historySize: readInteger(input, origin, 1, 10_000) };
    },
  },
  {
    flag: 'chat-announce-from',
    env: 'CHAT_ANNOUNCE_FROM',
    value: 'CLASS',
    description: 'the lowest class of an opened drop that the chat announces (0: every drop)',
    shownDefault: String(defaults.announceDropsFromClass),
    apply(config, input, origin) {
      config.announceDropsFromClass = readInteger(input, origin, 0, 1000);
    },
  },
  {
    flag: 'captcha-verify-url',
    env: 'CAPTCHA_VERIFY_URL',
    value: 'URL',
    description: 'captcha siteverify endpoint (reCAPTCHA, hCaptcha and Turnstile speak the same protocol)',
    shownDefault: 'none',
    apply(config, input, origin) {
      const url = readText(input, origin);
      if (!/^https?:\/\//.test(url)) throw new ConfigError(`${origin}: expected an http(s) URL`);
      config.captcha = { ...config.captcha, verifyUrl: url };
    },
  },
  {
    flag: 'captcha-secret',
    env: 'CAPTCHA_SECRET',
    value: 'SECRET',
    description: 'secret sent to the captcha siteverify endpoint',
    shownDefault: 'none',
    apply(config, input, origin) {
      config.captcha = { ...config.captcha, secret: readText(input, origin) };
    },
  },
  {
    flag: 'captcha-test-verifier',
    env: 'CAPTCHA_TEST_VERIFIER',
    envValue: 'on',
    description: 'accept the captcha value `test-pass` (development and tests only, never in production)',
    shownDefault: 'off',
    apply(config, input, origin) {
      config.captcha = { ...config.captcha, testVerifier: readSwitch(input, origin) };
    },
  },
  {
    flag: 'signup',
    env: 'SIGNUP',
    value: 'MODE',
    description: 'open: anyone may create an account with auth.signup; closed: only operators create accounts',
    shownDefault: defaults.accounts.signup,
    apply(config, input, origin) {
      const value = readText(input, origin).toLowerCase();
      if (value !== 'open' && value !== 'closed') throw new ConfigError(`${origin}: expected open or closed`);
      config.accounts = { ...config.accounts, signup: value };
    },
  },
  {
    flag: 'bots-per-owner',
    env: 'BOTS_PER_OWNER',
    value: 'N',
    description: 'bots one user may create with bots.create (0: none; more answers 1802)',
    shownDefault: String(defaults.bots.perOwner),
    apply(config, input, origin) {
      config.bots = { ...config.bots, perOwner: readInteger(input, origin, 0, 1000) };
    },
  },
  {
    flag: 'public-url',
    env: 'PUBLIC_URL',
    value: 'URL',
    description: 'the address players reach the server at, for links in e-mail',
    shownDefault: 'http://HOST:PORT',
    apply(config, input, origin) {
      const url = readText(input, origin);
      if (!/^https?:\/\/[^\s]+$/.test(url)) throw new ConfigError(`${origin}: expected an http(s) URL`);
      config.accounts = { ...config.accounts, publicUrl: url.replace(/\/+$/, '') };
    },
  },
  {
    flag: 'smtp-url',
    env: 'SMTP_URL',
    value: 'URL',
    description:
      'mail server for account e-mail: smtp://user:password@host:587 (STARTTLS when offered) or smtps://...:465; prefer the variable',
    shownDefault: 'none: messages go to the log',
    apply(config, input, origin) {
      const url = readText(input, origin);
      if (!/^smtps?:\/\/[^\s]+$/.test(url)) throw new ConfigError(`${origin}: use smtp://host:port or smtps://host:port`);
      config.mail = { ...config.mail, smtpUrl: url };
    },
  },
  {
    flag: 'mail-from',
    env: 'MAIL_FROM',
    value: 'ADDRESS',
    description: 'From address of account e-mail',
    shownDefault: defaults.mail.from,
    apply(config, input, origin) {
      const from = readText(input, origin);
      if (!/@/.test(from) || /[\r\n]/.test(from)) throw new ConfigError(`${origin}: expected an e-mail address`);
      config.mail = { ...config.mail, from };
    },
  },
];

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
    const flag = `--${s.flag}${s.value ? ` ${s.value}` : ''}`;
    const env = s.envValue ? `${s.env}=${s.envValue}` : s.env;
    const tail = s.shownDefault ? ` (default: ${s.shownDefault})` : '';
    return { left: `  ${flag}`, right: `${env}: ${s.description}${tail}` };
  });
  rows.push(...extra.map((e) => ({ left: `  ${e.left}`, right: e.right })));
  const width = Math.max(...rows.map((r) => r.left.length)) + 2;
  return rows.map((r) => r.left.padEnd(width) + r.right).join('\n');
}
