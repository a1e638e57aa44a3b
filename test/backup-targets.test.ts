import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import SQLite from 'better-sqlite3';
import { DB_KIND } from './helpers.js';
import { api, serve, stopAll } from './process-support.js';

const root = join(import.meta.dirname, '..');
const run = promisify(execFile);
const sqliteOnly = DB_KIND === 'postgres' ? 'backup and restore of SQLite files: run once, with the SQLite suite' : false;

/** Runs the game-platform command; resolves to its exit code and output. */
async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', join(root, 'src/cli/main.ts'), ...args], {
      cwd: root,
      env: { ...process.env, SECRET_KEY: '', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** A directory with a migrated SQLite database and its key file: DIR/data/h.db, DIR/data/h.db.key. */
async function withDatabase(body: (dir: string, db: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gp-backup-targets-'));
  try {
    mkdirSync(join(dir, 'data'));
    const db = join(dir, 'data', 'h.db');
    const migrate = await cli(['migrate'], { DATABASE_URL: `sqlite:${db}` });
    assert.equal(migrate.code, 0, migrate.stderr);
    await body(dir, db);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test(
  'backup refuses to replace the database, its key file, -wal, -shm or -journal file, however the path is written',
  { skip: sqliteOnly },
  () =>
    withDatabase(async (dir, db) => {
      symlinkSync(join(dir, 'data'), join(dir, 'alias'));
      const key = readFileSync(`${db}.key`, 'utf8');
      const files = readdirSync(join(dir, 'data')).sort();
      const refusals = [
        { given: `${db}.key`, shown: `${db}.key`, is: "the database's secret key file" },
        { given: `${dir}/data/../data/h.db.key`, shown: `${db}.key`, is: "the database's secret key file" },
        { given: join(dir, 'alias', 'h.db.key'), shown: join(dir, 'alias', 'h.db.key'), is: "the database's secret key file" },
        { given: `${db}-wal`, shown: `${db}-wal`, is: "the database's write-ahead log" },
        { given: `${db}-shm`, shown: `${db}-shm`, is: "the database's shared-memory index" },
        { given: `${db}-journal`, shown: `${db}-journal`, is: "the database's rollback journal" },
        { given: join(dir, 'alias', 'h.db'), shown: join(dir, 'alias', 'h.db'), is: 'the database itself' },
      ];
      const answers = await Promise.all(refusals.map(({ given }) => cli(['backup', given], { DATABASE_URL: `sqlite:${db}` })));
      assert.deepEqual(
        answers,
        refusals.map(({ shown, is }) => ({ code: 1, stdout: '', stderr: `${shown} is ${is}: the backup must go to a file of its own\n` })),
      );
      assert.equal(readFileSync(`${db}.key`, 'utf8'), key);
      assert.deepEqual(readdirSync(join(dir, 'data')).sort(), files, 'nothing written beside the database');
      const fine = await cli(['backup', join(dir, 'data', 'h-copy.db')], { DATABASE_URL: `sqlite:${db}` });
      assert.equal(fine.code, 0, fine.stderr);
    }),
);

test('backup onto a directory is refused before anything is written', { skip: sqliteOnly }, () =>
  withDatabase(async (dir, db) => {
    const backups = join(dir, 'backups');
    mkdirSync(backups);
    const backup = await cli(['backup', backups], { DATABASE_URL: `sqlite:${db}` });
    assert.deepEqual(backup, {
      code: 1,
      stdout: '',
      stderr: `${backups} is a directory: give the backup's file name (${join(backups, 'h.db')}, say)\n`,
    });
    assert.deepEqual(readdirSync(dir).sort(), ['backups', 'data']);
    assert.deepEqual(readdirSync(backups), []);
  }),
);

test('a backup that fails its check leaves neither the backup nor its .partial file', { skip: sqliteOnly }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gp-backup-targets-'));
  try {
    const plain = join(dir, 'plain.db');
    const db = new SQLite(plain);
    db.exec('create table t (x)');
    db.close();
    const backup = await cli(['backup', join(dir, 'copy.db')], { DATABASE_URL: `sqlite:${plain}` });
    assert.deepEqual(backup, { code: 1, stdout: '', stderr: `the copy of ${plain} is not a game-platform database\n` });
    assert.deepEqual(readdirSync(dir), ['plain.db']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const ADMIN_KEY = 'backup-targets-admin-key';
const asAdmin = { 'x-admin-key': ADMIN_KEY };

/** The nick of user 1 in the database file itself. */
function nickInFile(path: string): string {
  const db = new SQLite(path, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('select nick from users where user_id = 1').get() as { nick: string }).nick;
  } finally {
    db.close();
  }
}

test(
  'restore is refused while a server process has the database open, and works once it has stopped',
  { skip: sqliteOnly, timeout: 120_000 },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'gp-backup-targets-'));
    const db = join(dir, 'g.db');
    const backupFile = join(dir, 'bk.db');
    const env = { DATABASE_URL: `sqlite:${db}`, SECRET_KEY: '', ADMIN_KEY };
    writeFileSync(
      join(dir, 'world.json'),
      JSON.stringify({ users: [{ user_id: 1, email: 'u@example.com', password: 'backup-targets', nick: 'Before' }] }),
    );
    const servers = [await serve({ ...env, WORLD: join(dir, 'world.json') })];
    let server = servers[0]!;
    const nick = async () => ((await api(server, 'users.get', { user_ids: '1' })) as { nick: string }[])[0]!.nick;
    try {
      const backup = await cli(['backup', backupFile], env);
      assert.equal(backup.code, 0, backup.stderr);
      await api(server, 'admin.updateUser', { user_id: 1, nick: 'After' }, asAdmin);

      await t.test('refused while the server runs, idle: the database and the server are left as they were', async () => {
        const inode = statSync(db).ino;
        const restore = await cli(['restore', backupFile], env);
        assert.deepEqual(restore, {
          code: 1,
          stdout: '',
          stderr: `${db} is open in another process (a server?): stop the servers on it first, then restore\n`,
        });
        assert.equal(statSync(db).ino, inode, 'the database file is not replaced');
        assert.equal(existsSync(`${db}.partial`), false);
        assert.equal(await nick(), 'After');
        await api(server, 'admin.updateUser', { user_id: 1, nick: 'After the refusal' }, asAdmin);
        await stopAll([server]);
        assert.equal(nickInFile(db), 'After the refusal', 'the write went into the database file');
      });

      await t.test('works once the server has stopped: a server started again serves the backup', async () => {
        const restore = await cli(['restore', backupFile], env);
        assert.deepEqual(restore, { code: 0, stdout: `restored ${backupFile}: 1 users, 0 items; start the servers again\n`, stderr: '' });
        server = await serve(env);
        servers.push(server);
        assert.equal(await nick(), 'Before');
      });
    } finally {
      await stopAll(servers);
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
