import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createDecipheriv } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import {
  DB_KIND,
  migrateTo,
  newDatabaseLocation,
  processDatabaseEnv,
  startTestServer,
  type DatabaseLocation,
  type TestServer,
} from './helpers.js';
import { ADMIN_KEY, admin } from './admin-support.js';
import { BOB, PASSWORD, TOTP_SECRET, TOTP_USER, assertSession, assertTotpPending, authWorld, signin, totpCode } from './auth-fixtures.js';
import { openDatabase } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { hashPassword } from '../src/auth/passwords.js';

const MAIN = new URL('../src/cli/main.ts', import.meta.url).pathname;
const OTHER_KEY = '0123456789abcdef'.repeat(4);
const sqliteOnly = { skip: DB_KIND !== 'sqlite' && 'SQLite only: its files and key file' };

const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);

/** The key the location's servers seal with: SECRET_KEY, or the key file beside the SQLite database. */
function keyOf(location: DatabaseLocation): Buffer {
  if (location.secretKey) return Buffer.from(location.secretKey, 'hex');
  return Buffer.from(readFileSync(`${location.url.slice('sqlite:'.length)}.key`, 'utf8').trim(), 'hex');
}

/** Opens a stored value as the README describes it (v1:<nonce>:<ciphertext and tag>, AES-256-GCM), independently of the server's code. */
function unseal(stored: string, key: Buffer): string {
  const [version, nonce, sealed] = stored.split(':');
  assert.equal(version, 'v1');
  const nonceBytes = Buffer.from(nonce, 'base64');
  assert.equal(nonceBytes.length, 12, '96-bit nonce');
  const bytes = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, nonceBytes);
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
}

async function storedTotp(server: TestServer, userId: number): Promise<{ totp_secret: string | null; totp_pending: string | null }> {
  return server.db.kysely
    .selectFrom('users')
    .select(['totp_secret', 'totp_pending'])
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
}

/** A full sign-in with password and TOTP code; answers the Session's user_id. */
async function signInWithTotp(server: TestServer, email: string, secret: string): Promise<number> {
  const first = await signin(server, email);
  assert.equal(first.body.code, 0, JSON.stringify(first.body));
  const token = assertTotpPending(first.body.data);
  const second = await server.call('auth.totpVerify', { totp_session_token: token, code: totpCode(server.clock.now(), secret) });
  assert.equal(second.body.code, 0, JSON.stringify(second.body));
  assertSession(second.body.data);
  return second.body.data.user_id;
}

interface Run {
  code: number | null;
  output: string;
}

/** Runs the game-platform command to its end (serve: until it listens, then stops it with SIGTERM). */
function cli(args: string[], env: NodeJS.ProcessEnv): Promise<Run & { url?: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', WORLD: '', ADMIN_KEY: '', SECRET_KEY: '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let url: string | undefined;
  const onData = (chunk: Buffer) => {
    output += chunk;
    const listening = /listening on (http:\/\/\S+)/.exec(output);
    if (listening && !url) {
      url = listening[1];
      child.kill('SIGTERM');
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output, url })));
}

test('TOTP secrets are stored sealed whoever sets them, each with its own nonce, and sign-in with them works', async () => {
  const server = await startTestServer({ world: await authWorld(), config: { adminKey: ADMIN_KEY } });
  try {
    const key = keyOf(server.location);
    // From the world file.
    const imported = await storedTotp(server, TOTP_USER.user_id);
    assert.match(imported.totp_secret!, /^v1:[A-Za-z0-9+/]{16}:[A-Za-z0-9+/]+={0,2}$/);
    assert.equal(imported.totp_secret!.includes(TOTP_SECRET), false);
    assert.equal(unseal(imported.totp_secret!, key), TOTP_SECRET);
    const sameSecret = await storedTotp(server, 7);
    assert.equal(unseal(sameSecret.totp_secret!, key), TOTP_SECRET);
    assert.notEqual(sameSecret.totp_secret, imported.totp_secret, 'the same secret sealed twice looks different');
    assert.equal(await signInWithTotp(server, TOTP_USER.email, TOTP_SECRET), TOTP_USER.user_id);

    // Set up by the user: the pending secret, then the active one.
    const bob = await signin(server, BOB.email);
    const token = bob.body.data.access_token as string;
    const setup = (await server.call('account.totpSetup', {}, { token })).body.data as { secret: string };
    const pending = await storedTotp(server, BOB.user_id);
    assert.equal(pending.totp_secret, null);
    assert.equal(pending.totp_pending!.includes(setup.secret), false);
    assert.equal(unseal(pending.totp_pending!, key), setup.secret);
    assert.equal((await server.call('account.totpEnable', { code: totpCode(server.clock.now(), setup.secret) }, { token })).body.code, 0);
    const enabled = await storedTotp(server, BOB.user_id);
    assert.equal(enabled.totp_pending, null);
    assert.equal(unseal(enabled.totp_secret!, key), setup.secret);
    server.clock.advance(30);
    assert.equal(await signInWithTotp(server, BOB.email, setup.secret), BOB.user_id);

    // Set by an operator.
    const set = await admin(server, 'setTotp', { user_id: 1 });
    const byAdmin = await storedTotp(server, 1);
    assert.equal(byAdmin.totp_secret!.includes(set.secret), false);
    assert.equal(unseal(byAdmin.totp_secret!, key), set.secret);

    // Exports carry them in clear, to be sealed again by whatever imports them.
    const exported = (await admin(server, 'exportWorld')).world as { users: { user_id: number; totp_secret?: string }[] };
    assert.deepEqual(
      exported.users.filter((u) => u.totp_secret).map((u) => [u.user_id, u.totp_secret]),
      [
        [1, set.secret],
        [TOTP_USER.user_id, TOTP_SECRET],
        [7, TOTP_SECRET],
        [BOB.user_id, setup.secret],
      ],
    );
  } finally {
    await server.close();
  }
});

test('a database with TOTP secrets in clear, from before they were sealed, has them sealed on start, once, and they still work', async () => {
  const location = await newDatabaseLocation();
  try {
    const early = await openDatabase(location.url, { schema: location.schema, poolSize: 2, secretKey: location.secretKey });
    try {
      assert.equal((await migrateTo(early, '008_trades', location.schema)).at(-1), '008_trades');
      const hash = await hashPassword(PASSWORD);
      await sql`insert into users (user_id, email, password_hash, totp_secret, nick, created_at) values (2, ${TOTP_USER.email}, ${hash}, ${TOTP_SECRET}, 'Tess', 1000)`.execute(
        early.kysely,
      );
      await sql`insert into users (user_id, email, password_hash, totp_pending, nick, created_at) values (3, 'pending@example.com', ${hash}, 'KRSXG5CTMVRXEZLU', 'Pen', 1000)`.execute(
        early.kysely,
      );
    } finally {
      await early.close();
    }

    const server = await startTestServer({ location });
    let sealed: { totp_secret: string | null; totp_pending: string | null }[];
    try {
      const key = keyOf(location);
      sealed = [await storedTotp(server, 2), await storedTotp(server, 3)];
      assert.equal(unseal(sealed[0].totp_secret!, key), TOTP_SECRET);
      assert.equal(sealed[0].totp_pending, null);
      assert.equal(sealed[1].totp_secret, null);
      assert.equal(unseal(sealed[1].totp_pending!, key), 'KRSXG5CTMVRXEZLU');
      const check = await server.db.kysely.selectFrom('secret_key_check').selectAll().execute();
      assert.equal(check.length, 1);
      assert.equal(await signInWithTotp(server, TOTP_USER.email, TOTP_SECRET), 2);
    } finally {
      await server.close();
    }
    // Another start finds nothing left in clear and leaves the sealed values as they are.
    const again = await startTestServer({ location });
    try {
      assert.deepEqual([await storedTotp(again, 2), await storedTotp(again, 3)], sealed);
    } finally {
      await again.close();
    }
  } finally {
    await location.dispose();
  }
});

test('a server given another secret key refuses to start and says why; nothing is changed', async () => {
  const location = await newDatabaseLocation();
  try {
    const first = await startTestServer({ location, world: await authWorld() });
    const before = await storedTotp(first, TOTP_USER.user_id);
    await first.close();

    const wrong = await openDatabase(location.url, { schema: location.schema, secretKey: OTHER_KEY });
    try {
      await assert.rejects(migrateToLatest(wrong), (error: Error) => {
        assert.equal(error.name, 'SecretKeyError');
        assert.match(
          error.message,
          /^wrong secret key: the secrets in this database are sealed with the key whose fingerprint is [0-9a-f]{16}/,
        );
        assert.match(error.message, new RegExp(`the key from SECRET_KEY \\(--secret-key\\) has fingerprint ${wrong.secrets.fingerprint}`));
        return true;
      });
    } finally {
      await wrong.close();
    }

    // The command does the same, before listening.
    const serve = await cli(['serve'], { ...processDatabaseEnv(location), SECRET_KEY: OTHER_KEY });
    assert.equal(serve.code, 1, serve.output);
    assert.equal(serve.url, undefined);
    assert.match(
      serve.output,
      /game-platform: wrong secret key: the secrets in this database are sealed with the key whose fingerprint is/,
    );

    const after = await startTestServer({ location });
    try {
      assert.deepEqual(await storedTotp(after, TOTP_USER.user_id), before);
      assert.equal(await signInWithTotp(after, TOTP_USER.email, TOTP_SECRET), TOTP_USER.user_id);
    } finally {
      await after.close();
    }
  } finally {
    await location.dispose();
  }
});

test('a change of key: started with the new key and the previous one, every secret is sealed again; then only the new key opens them', async () => {
  const location = await newDatabaseLocation();
  try {
    const first = await startTestServer({ location, world: await authWorld() });
    const before = await storedTotp(first, TOTP_USER.user_id);
    await first.close();
    const oldKey = keyOf(location).toString('hex');

    const changing = await openDatabase(location.url, { schema: location.schema, secretKey: OTHER_KEY, previousSecretKey: oldKey });
    try {
      await migrateToLatest(changing);
      const after = await changing.kysely
        .selectFrom('users')
        .select(['user_id', 'totp_secret'])
        .where('totp_secret', 'is not', null)
        .execute();
      assert.deepEqual(
        after.map((u) => [u.user_id, unseal(u.totp_secret!, Buffer.from(OTHER_KEY, 'hex'))]),
        [
          [TOTP_USER.user_id, TOTP_SECRET],
          [7, TOTP_SECRET],
        ],
      );
      assert.notEqual(after[0].totp_secret, before.totp_secret);
      // Again with both keys: nothing left to do.
      await migrateToLatest(changing);
      assert.deepEqual(
        await changing.kysely.selectFrom('users').select(['user_id', 'totp_secret']).where('totp_secret', 'is not', null).execute(),
        after,
      );
    } finally {
      await changing.close();
    }

    const old = await openDatabase(location.url, { schema: location.schema, secretKey: oldKey });
    try {
      await assert.rejects(migrateToLatest(old), /^SecretKeyError: wrong secret key/);
    } finally {
      await old.close();
    }
    const server = await startTestServer({ location: { ...location, secretKey: OTHER_KEY } });
    try {
      assert.equal(await signInWithTotp(server, TOTP_USER.email, TOTP_SECRET), TOTP_USER.user_id);
    } finally {
      await server.close();
    }
  } finally {
    await location.dispose();
  }
});

test('on PostgreSQL the server refuses to start without a secret key; a malformed key is refused everywhere', async () => {
  // Refused before connecting: nothing needs to listen at the address.
  const postgres = await cli(['serve'], { DATABASE_URL: 'postgres://someone@127.0.0.1:1/none' });
  assert.equal(postgres.code, 1, postgres.output);
  assert.match(
    postgres.output,
    /game-platform: PostgreSQL needs a secret key to seal the TOTP secrets it stores: set SECRET_KEY \(or --secret-key\)/,
  );
  const dir = mkdtempSync(join(tmpdir(), 'gp-key-'));
  try {
    const malformed = await cli(['serve', '--secret-key', 'not-a-key'], { DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` });
    assert.equal(malformed.code, 2, malformed.output);
    assert.match(malformed.output, /--secret-key: a secret key is 32 random bytes written as 64 hexadecimal digits/);
    assert.equal(existsSync(join(dir, 'db.sqlite')), false, 'nothing was created');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test(
  'SQLite files are 0600: the database, its -wal and -shm after writes, the key file; an older 0644 database is tightened',
  sqliteOnly,
  async () => {
    const location = await newDatabaseLocation();
    const path = location.url.slice('sqlite:'.length);
    // As an earlier version left it.
    writeFileSync(path, '');
    chmodSync(path, 0o644);
    try {
      const server = await startTestServer({ location, world: await authWorld() });
      try {
        // Real writes: sessions, a pending secret.
        const token = (await signin(server, BOB.email)).body.data.access_token as string;
        assert.equal((await server.call('account.totpSetup', {}, { token })).body.code, 0);
        for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}.key`]) assert.equal(mode(file), '600', file);
      } finally {
        await server.close();
      }
    } finally {
      await location.dispose();
    }
  },
);

test(
  'without a key SQLite makes its key file (0600) on the first start and says so, the next start uses it, a lost one is reported',
  sqliteOnly,
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gp-key-'));
    const database = join(dir, 'game.db');
    const keyFile = `${database}.key`;
    const world = { users: [{ user_id: 1, email: 'tess@example.com', password: PASSWORD, totp_secret: TOTP_SECRET, nick: 'Tess' }] };
    writeFileSync(join(dir, 'world.json'), JSON.stringify(world));
    const env = { DATABASE_URL: `sqlite:${database}`, WORLD: join(dir, 'world.json') };
    try {
      const first = await cli(['serve'], env);
      assert.equal(first.code, 0, first.output);
      assert.ok(first.output.includes(`created the secret key file ${keyFile} (mode 0600)`), first.output);
      assert.match(first.output, /Back it up with the database/);
      assert.ok(first.output.includes(`secrets:  TOTP secrets sealed with the key from ${keyFile} (made now, as there was none)`));
      assert.equal(mode(keyFile), '600');
      const key = readFileSync(keyFile, 'utf8');
      assert.match(key, /^[0-9a-f]{64}\n$/);

      const second = await cli(['serve'], env);
      assert.equal(second.code, 0, second.output);
      assert.doesNotMatch(second.output, /created the secret key file/);
      assert.ok(second.output.includes(`secrets:  TOTP secrets sealed with the key from ${keyFile}\n`), second.output);
      assert.equal(readFileSync(keyFile, 'utf8'), key, 'the same key');
      // The secret imported on the first start opens with it.
      const server = await startTestServer({
        location: { url: `sqlite:${database}`, redisPrefix: 'gp:key:', dispose: async () => undefined },
      });
      try {
        assert.equal(await signInWithTotp(server, 'tess@example.com', TOTP_SECRET), 1);
      } finally {
        await server.close();
      }

      rmSync(keyFile);
      const lost = await cli(['serve'], env);
      assert.equal(lost.code, 1, lost.output);
      assert.match(lost.output, /the secrets in this database are sealed with a secret key \(fingerprint [0-9a-f]{16}\) that is not here/);
      assert.ok(lost.output.includes(`${keyFile} was missing. Put back the key file kept with the database`));
      assert.equal(existsSync(keyFile), false, 'no new key is left in its place');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('an in-memory database seals with a key of its own', async () => {
  const db = await openDatabase('sqlite::memory:');
  try {
    assert.deepEqual(db.secretKeySource, { kind: 'ephemeral' });
    await migrateToLatest(db);
    const sealed = db.secrets.seal(TOTP_SECRET);
    assert.equal(db.secrets.open(sealed), TOTP_SECRET);
  } finally {
    await db.close();
  }
});

test('backups and exports are 0600; a restore needs the key of the backup and says so', sqliteOnly, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gp-key-backup-'));
  const server = await startTestServer({ world: await authWorld() });
  const source = server.location.url.slice('sqlite:'.length);
  try {
    const backupFile = join(dir, 'backup.db');
    const backup = await cli(['backup', backupFile], { DATABASE_URL: server.location.url });
    assert.equal(backup.code, 0, backup.output);
    assert.ok(backup.output.includes(`its TOTP secrets are sealed with the key in ${source}.key: keep a copy of that file`), backup.output);
    assert.equal(mode(backupFile), '600');

    const exportFile = join(dir, 'world.json');
    const exported = await cli(['export', exportFile], { DATABASE_URL: server.location.url });
    assert.equal(exported.code, 0, exported.output);
    assert.equal(mode(exportFile), '600');
    const world = JSON.parse(readFileSync(exportFile, 'utf8')) as { users: { user_id: number; totp_secret?: string }[] };
    assert.equal(world.users.find((u) => u.user_id === TOTP_USER.user_id)!.totp_secret, TOTP_SECRET);

    const target = join(dir, 'restored.db');
    const targetEnv = { DATABASE_URL: `sqlite:${target}` };
    const withoutKey = await cli(['restore', backupFile], targetEnv);
    assert.equal(withoutKey.code, 1, withoutKey.output);
    assert.match(
      withoutKey.output,
      /the TOTP secrets in .*backup\.db are sealed with a secret key \(fingerprint [0-9a-f]{16}\) that is not here/,
    );
    assert.ok(withoutKey.output.includes(`put the key file kept with the database at ${target}.key, or give the key in SECRET_KEY`));
    assert.equal(existsSync(target), false, 'nothing restored');
    const wrongKey = await cli(['restore', backupFile], { ...targetEnv, SECRET_KEY: OTHER_KEY });
    assert.equal(wrongKey.code, 1, wrongKey.output);
    assert.match(
      wrongKey.output,
      /the key from SECRET_KEY \(--secret-key\) \(fingerprint [0-9a-f]{16}\) does not open the TOTP secrets in/,
    );

    copyFileSync(`${source}.key`, `${target}.key`);
    const restored = await cli(['restore', backupFile], targetEnv);
    assert.equal(restored.code, 0, restored.output);
    assert.equal(mode(target), '600');
    const copy = await startTestServer({
      location: { url: `sqlite:${target}`, redisPrefix: 'gp:restored-key:', dispose: async () => undefined },
    });
    try {
      assert.equal(await signInWithTotp(copy, TOTP_USER.email, TOTP_SECRET), TOTP_USER.user_id);
    } finally {
      await copy.close();
    }
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('world files are written 0600 by export and admin export whatever was left before; a directory is refused and nothing is left', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gp-export-mode-'));
  const server = await startTestServer({ world: await authWorld(), config: { adminKey: ADMIN_KEY } });
  try {
    await server.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = server.app.server.address() as AddressInfo;
    const commands: [string[], NodeJS.ProcessEnv][] = [
      [['export'], processDatabaseEnv(server.location)],
      [['admin', 'export'], { ADMIN_URL: `http://127.0.0.1:${port}`, ADMIN_KEY }],
    ];
    for (const [command, env] of commands) {
      for (const leftOver of [false, true]) {
        const file = join(dir, `${command.join('-')}${leftOver ? '-over-leftovers' : ''}`);
        if (leftOver)
          // As an earlier version, or someone else sharing the directory, may have left them: readable by all.
          for (const earlier of [file, `${file}.partial`]) {
            writeFileSync(earlier, 'left over');
            chmodSync(earlier, 0o644);
          }
        const run = await cli([...command, file], env);
        assert.equal(run.code, 0, run.output);
        assert.equal(mode(file), '600', file);
        assert.equal(existsSync(`${file}.partial`), false, file);
        const world = JSON.parse(readFileSync(file, 'utf8')) as { users: { user_id: number; totp_secret?: string }[] };
        assert.equal(world.users.find((u) => u.user_id === TOTP_USER.user_id)!.totp_secret, TOTP_SECRET, file);
      }

      const target = join(dir, 'a-directory');
      mkdirSync(target, { recursive: true });
      const before = readdirSync(dir).sort();
      const refused = await cli([...command, target], env);
      assert.equal(refused.code, 2, refused.output);
      assert.equal(
        refused.output.split('\n')[0],
        `game-platform ${command.join(' ')}: ${target} is a directory: give the name of the file to write`,
      );
      assert.deepEqual(readdirSync(dir).sort(), before);
      assert.deepEqual(readdirSync(target), []);

      // A SQLite database and its companions are never written over, a running server's included.
      const database = join(dir, 'victim.db');
      const victim = new SQLite(database);
      victim.exec('create table if not exists kept (n integer)');
      victim.close();
      writeFileSync(`${database}.key`, 'the key');
      writeFileSync(`${database}-wal`, 'the log');
      for (const [file, what] of [
        [database, 'a SQLite database'],
        [`${database}.key`, `the secret key file of ${database}`],
        [`${database}-wal`, `the write-ahead log of ${database}`],
      ]) {
        const contents = readFileSync(file);
        const overDatabase = await cli([...command, file], env);
        assert.equal(overDatabase.code, 2, overDatabase.output);
        assert.equal(
          overDatabase.output.split('\n')[0],
          `game-platform ${command.join(' ')}: ${file} is ${what}: the world must go to a file of its own`,
        );
        assert.deepEqual(readFileSync(file), contents, file);
      }
    }
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
