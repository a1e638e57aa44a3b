import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { Redis } from 'ioredis';

/*
 * What some tests need that a machine may not have. Each entry of `missing` is `false` when the
 * component is here, or else the reason it is not, written to be a test's `skip` option:
 * `test('...', { skip: missing.redis }, ...)`. Every reason starts with "needs ", which is how
 * scripts/run-tests.mjs tells these skips from the others, lists them in its summary, and fails
 * the run when TEST_REQUIRE_ALL=1 (as .ci/run sets it).
 *
 * The locations come from the environment, so a missing component can be tried on a machine that
 * has it: TEST_REDIS_URL=redis://127.0.0.1:1, TEST_CHROMIUM=/nowhere, TEST_REDIS_SERVER=/nowhere.
 */

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The executable named, if it is a path, or else the first of the names found on the PATH. */
function findExecutable(names: string[]): string | undefined {
  const directories = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const name of names) {
    const candidates = isAbsolute(name) ? [name] : directories.map((directory) => join(directory, name));
    for (const candidate of candidates) {
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here: the next one
      }
    }
  }
  return undefined;
}

/** Whether a Redis answers PING at `url` within two seconds: the reason it does not, or false. */
async function redisAbsence(url: string): Promise<string | false> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  let cause: Error | undefined;
  redis.on('error', (error: Error) => (cause ??= error));
  try {
    await redis.connect();
    await redis.ping();
    return false;
  } catch (error) {
    return `needs Redis: ${url} does not answer (${(cause ?? (error as Error)).message}); start one or set TEST_REDIS_URL`;
  } finally {
    redis.disconnect();
  }
}

const chromiumNames = process.env.TEST_CHROMIUM
  ? [process.env.TEST_CHROMIUM]
  : ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
const redisServerNames = [process.env.TEST_REDIS_SERVER ?? 'redis-server'];

/** Headless Chromium for the /docs page test (TEST_CHROMIUM, else chromium or google-chrome on the PATH). */
export const CHROMIUM = findExecutable(chromiumNames);
/** The redis-server program, for tests that start and stop a Redis of their own (TEST_REDIS_SERVER). */
export const REDIS_SERVER = findExecutable(redisServerNames);
const CURL = findExecutable(['curl']);
const OPENSSL = findExecutable(['openssl']);

export const missing = {
  /** A Redis server at TEST_REDIS_URL (default redis://127.0.0.1:6379). */
  redis: await redisAbsence(REDIS_URL),
  /** The redis-server program. */
  redisServer: REDIS_SERVER
    ? false
    : `needs the redis-server program: ${redisServerNames[0]} was not found; install Redis or set TEST_REDIS_SERVER`,
  chromium: CHROMIUM
    ? false
    : `needs Chromium: ${chromiumNames.join(', ')} ${chromiumNames.length > 1 ? 'were' : 'was'} not found; install it or set TEST_CHROMIUM`,
  /** curl, to run the README's examples as written. */
  curl: CURL ? false : 'needs curl: it was not found on the PATH',
  /** openssl, to make the certificates of the TLS tests. */
  openssl: OPENSSL ? false : 'needs openssl: it was not found on the PATH',
} as const;

/** Generous waits for a loaded machine; nothing in the browser tests measures speed. */
export const WAIT = { timeout: 180_000 };

/**
 * Headless Chromium as the browser tests run it: no outside connections of its own, and a new
 * temporary profile (user-data-dir) each launch, removed when the browser closes.
 */
export async function launchChromium(): Promise<import('playwright-core').Browser> {
  const { chromium } = await import('playwright-core');
  if (!CHROMIUM) throw new Error('Chromium is missing: skip the test with missing.chromium');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
