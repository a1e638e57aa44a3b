import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/connection.js';
import { DB_KIND, newDatabaseLocation, processDatabaseEnv, type DatabaseLocation } from './helpers.js';

/*
 * The start-up banner shows plain passwords and TOTP secrets only for the shipped demo world,
 * only on the start that imported it, and only on a terminal: never into a log stream, and
 * never those of another world file.
 */

const MAIN = new URL('../src/cli/main.ts', import.meta.url).pathname;
const DEMO = new URL('../worlds/demo.json', import.meta.url).pathname;
const demo = JSON.parse(readFileSync(DEMO, 'utf8')) as { users: { email?: string; password?: string; totp_secret?: string }[] };
/** Every secret of the demo world's accounts. */
const DEMO_SECRETS = demo.users.flatMap((u) => [u.password, u.totp_secret]).filter((s): s is string => typeof s === 'string');

/** A world of one's own: its secrets are nobody else's business. */
const OWN_PASSWORD = 'the-password-of-a-real-world';
const OWN_TOTP_SECRET = 'KRSXG5CTMVRXEZLUKRSXG5CTMVRXEZLU';
const ownWorld = {
  users: [{ user_id: 1, email: 'owner@example.com', password: OWN_PASSWORD, totp_secret: OWN_TOTP_SECRET, nick: 'Owner' }],
};

/** `script` gives the server a pseudo-terminal for its standard output (util-linux). */
const SCRIPT = '/usr/bin/script';
const noScript = (() => {
  try {
    readFileSync(SCRIPT);
    return false;
  } catch {
    return `needs ${SCRIPT} (util-linux) to run the server on a pseudo-terminal`;
  }
})();

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

interface Run {
  /** Standard output and error together: everything a log collector would get. */
  output: string;
  code: number | null;
}

/** `serve --world FILE` until it listens, then stopped as an operator would (Ctrl-C on a terminal, SIGTERM otherwise). */
async function serveOnce(world: string, env: NodeJS.ProcessEnv, terminal: boolean): Promise<Run> {
  const args = ['--import', 'tsx', MAIN, 'serve', '--world', world];
  const fullEnv = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: '0',
    REDIS_URL: '',
    WORLD: '',
    ADMIN_KEY: '',
    RATE_LIMIT: '',
    LOG_LEVEL: 'info',
    ...env,
  };
  const child: ChildProcessWithoutNullStreams = terminal
    ? spawn(SCRIPT, ['-qec', `exec ${[process.execPath, ...args].map(quote).join(' ')}`, '/dev/null'], { env: fullEnv })
    : spawn(process.execPath, args, { env: fullEnv });
  let output = '';
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (/listening on http/.test(output)) resolve();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void closed.then((code) => reject(new Error(`serve exited with ${code} before listening:\n${output}`)));
  });
  // The banner is written in one piece once the server listens; stop it.
  if (terminal) child.stdin.write('\x03');
  else child.kill('SIGTERM');
  const code = await closed;
  return { output, code };
}

async function withDatabase(run: (env: { DATABASE_URL: string; SECRET_KEY: string }, dir: string) => Promise<void>): Promise<void> {
  const location: DatabaseLocation = await newDatabaseLocation();
  const dir = mkdtempSync(join(tmpdir(), 'gp-banner-'));
  try {
    if (DB_KIND === 'postgres')
      await (await openDatabase(location.url, { schema: location.schema, secretKey: location.secretKey })).close();
    await run(processDatabaseEnv(location), dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await location.dispose();
  }
}

function assertNoSecrets(run: Run, secrets: string[]): void {
  for (const secret of secrets) assert.ok(!run.output.includes(secret), `the banner shows a secret (${secret}):\n${run.output}`);
}

describe('the start-up banner and world secrets', () => {
  test('the shipped demo world, imported with no terminal (a log stream): no passwords or TOTP secrets, a pointer to the README', () =>
    withDatabase(async (env) => {
      const run = await serveOnce(DEMO, env, false);
      assert.equal(run.code, 0, run.output);
      assert.match(run.output, /imported .*demo\.json: 36 users/);
      assertNoSecrets(run, DEMO_SECRETS);
      assert.match(run.output, /Demo world imported: its accounts are listed in the README \(Demo accounts\)\./);
    }));

  test('on a terminal: the demo accounts on the start that imports the shipped demo world, and on no later start', { skip: noScript }, () =>
    withDatabase(async (env) => {
      const first = await serveOnce(DEMO, env, true);
      assert.equal(first.code, 0, first.output);
      assert.match(first.output, /Demo accounts from .*demo\.json/);
      for (const secret of DEMO_SECRETS) assert.ok(first.output.includes(secret), `the demo banner shows ${secret}`);
      assert.match(first.output, /bob@example\.com\s+password bob-demo-password\s+user_id 2, TOTP secret JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP/);

      // Already imported: nothing was made usable now, so nothing is shown.
      const again = await serveOnce(DEMO, env, true);
      assert.equal(again.code, 0, again.output);
      assert.doesNotMatch(again.output, /imported /);
      assertNoSecrets(again, DEMO_SECRETS);
      assert.doesNotMatch(again.output, /Demo accounts|Demo world imported/);
    }),
  );

  test('any other world file, even on a terminal and just imported: none of its secrets', { skip: noScript }, () =>
    withDatabase(async (env, dir) => {
      const own = join(dir, 'own.json');
      writeFileSync(own, JSON.stringify(ownWorld));
      const onTerminal = await serveOnce(own, env, true);
      assert.equal(onTerminal.code, 0, onTerminal.output);
      assert.match(onTerminal.output, /imported .*own\.json: 1 users/);
      assertNoSecrets(onTerminal, [OWN_PASSWORD, OWN_TOTP_SECRET]);
      assert.doesNotMatch(onTerminal.output, /Demo accounts|Demo world imported/);
    }),
  );

  test('a copy of the demo world with one password changed is not the demo world', { skip: noScript }, () =>
    withDatabase(async (env, dir) => {
      const changed = structuredClone(demo);
      changed.users.find((u) => u.email === 'alice@example.com')!.password = 'alice-private-password';
      const copy = join(dir, 'demo.json');
      writeFileSync(copy, JSON.stringify(changed, null, 2));
      const run = await serveOnce(copy, env, true);
      assert.equal(run.code, 0, run.output);
      assertNoSecrets(run, [...DEMO_SECRETS, 'alice-private-password']);
    }),
  );
});
