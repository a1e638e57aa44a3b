import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import { defaultConfig } from '../src/config.js';
import { ConfigError, SERVER_SETTINGS, loadConfig, parseArgsOptions, withOptionalValues } from '../src/cli/settings.js';

const load = (args: string[], env: NodeJS.ProcessEnv = {}) => {
  const { values } = parseArgs({
    args: withOptionalValues(SERVER_SETTINGS, args),
    options: parseArgsOptions(SERVER_SETTINGS),
    strict: true,
  });
  return loadConfig(SERVER_SETTINGS, values as Record<string, string | boolean | undefined>, env);
};

test('without flags or variables the defaults of src/config.ts apply', () => {
  assert.deepEqual(load([]), defaultConfig());
});

test('a flag wins over its environment variable, which wins over the default', () => {
  const env = { HOST: '0.0.0.0', PORT: '9000', DATABASE_URL: 'postgres://db/one', REDIS_URL: 'redis://cache:6379' };
  const fromEnv = load([], env);
  assert.equal(fromEnv.host, '0.0.0.0');
  assert.equal(fromEnv.port, 9000);
  assert.equal(fromEnv.databaseUrl, 'postgres://db/one');
  assert.equal(fromEnv.redisUrl, 'redis://cache:6379');
  const fromFlags = load(['--port', '9100', '--database', 'sqlite:/tmp/x.db'], env);
  assert.equal(fromFlags.port, 9100);
  assert.equal(fromFlags.databaseUrl, 'sqlite:/tmp/x.db');
  assert.equal(fromFlags.host, '0.0.0.0', 'variables still fill what no flag gives');
  // An empty variable counts as unset.
  assert.equal(load([], { PORT: '' }).port, 8080);
});

test('every setting of the issue has its flag and variable', () => {
  const config = load(
    [
      '--host',
      'h',
      '--port',
      '1',
      '--database',
      'sqlite:a.db',
      '--redis',
      'redis://r',
      '--admin-key',
      'k'.repeat(20),
      '--trust-proxy',
      '--no-rate-limit',
      '--world',
      'w.json',
    ],
    {},
  );
  assert.deepEqual(
    [config.host, config.port, config.databaseUrl, config.redisUrl, config.adminKey, config.trustProxy, config.rateLimit, config.world],
    ['h', 1, 'sqlite:a.db', 'redis://r', 'k'.repeat(20), true, false, 'w.json'],
  );
  const viaEnv = load([], {
    HOST: 'h',
    PORT: '1',
    DATABASE_URL: 'sqlite:a.db',
    REDIS_URL: 'redis://r',
    ADMIN_KEY: 'k'.repeat(20),
    TRUST_PROXY: 'on',
    RATE_LIMIT: 'off',
    WORLD: 'w.json',
  });
  assert.deepEqual(viaEnv, config);
  assert.equal(load([], { RATE_LIMIT: 'on' }).rateLimit, true);
  assert.equal(load([], { TRUST_PROXY: 'false' }).trustProxy, false);
});

test('--trust-proxy takes a hop count or proxy addresses and CIDR ranges; alone it means one hop', () => {
  assert.equal(load(['--trust-proxy']).trustProxy, true);
  assert.equal(load(['--trust-proxy', '--port', '1']).trustProxy, true);
  assert.equal(load(['--trust-proxy', '2']).trustProxy, 2);
  assert.equal(load(['--trust-proxy=3']).trustProxy, 3);
  assert.deepEqual(load(['--trust-proxy', '10.0.0.0/8, 192.168.1.7,fd00::/8']).trustProxy, ['10.0.0.0/8', '192.168.1.7', 'fd00::/8']);
  assert.deepEqual(load([], { TRUST_PROXY: '127.0.0.1' }).trustProxy, ['127.0.0.1']);
  assert.equal(load([], { TRUST_PROXY: '1' }).trustProxy, 1);
  for (const bad of ['proxy.example.com', '10.0.0.0/33', '10.0.0.1/8/1', 'not-an-ip<script>'])
    assert.throws(() => load(['--trust-proxy', bad]), ConfigError, bad);
});

test('the other settings reach the configuration', () => {
  const config = load([
    '--log-level',
    'warn',
    '--body-limit',
    '2048',
    '--session-ttl',
    '3600',
    '--no-ip-binding',
    '--online-window',
    '60',
    '--chat-history',
    '50',
    '--rate-limit-ip',
    '100/10',
    '--rate-limit-token',
    '20/5',
    '--redis-prefix',
    'prod:',
    '--captcha-verify-url',
    'https://captcha.example.com/siteverify',
    '--captcha-secret',
    's3cret',
    '--captcha-test-verifier',
  ]);
  assert.equal(config.logLevel, 'warn');
  assert.equal(config.bodyLimit, 2048);
  assert.equal(config.sessionTtl, 3600);
  assert.equal(config.bindTokensToIp, false);
  assert.equal(config.onlineWindow, 60);
  assert.equal(config.chat.historySize, 50);
  assert.equal(config.chat.slowmodeInterval, defaultConfig().chat.slowmodeInterval, 'neighbouring defaults stay');
  assert.deepEqual(config.rateLimitPerIp, { max: 100, windowSeconds: 10 });
  assert.deepEqual(config.rateLimitPerToken, { max: 20, windowSeconds: 5 });
  assert.equal(config.redisPrefix, 'prod:');
  assert.deepEqual(config.captcha, { verifyUrl: 'https://captcha.example.com/siteverify', secret: 's3cret', testVerifier: true });
});

test('a bad value is refused naming the flag or variable it came from', () => {
  const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
    [['--port', 'http'], {}, /--port/],
    [[], { PORT: '70000' }, /PORT/],
    [[], { DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
    // An unset variable in `sqlite:$DB` would otherwise be a database in memory, lost at exit.
    [['--database', 'sqlite:'], {}, /--database.*not empty/],
    [[], { DATABASE_URL: 'sqlite:' }, /DATABASE_URL/],
    [['--redis', 'localhost:6379'], {}, /--redis/],
    [[], { TRUST_PROXY: 'perhaps' }, /TRUST_PROXY/],
    [[], { RATE_LIMIT: 'sometimes' }, /RATE_LIMIT/],
    [['--rate-limit-ip', '100'], {}, /--rate-limit-ip/],
    [['--log-level', 'loud'], {}, /--log-level/],
    [[], { ADMIN_KEY: 'short' }, /ADMIN_KEY/],
  ];
  for (const [args, env, named] of cases)
    assert.throws(
      () => load(args, env),
      (error: unknown) => error instanceof ConfigError && named.test(error.message),
    );
});
