import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDatabase, type Database } from '../src/db/connection.js';
import { dropPostgresSchema } from '../src/db/migrate.js';

/**
 * The real server as a child process (`game-platform serve` from the sources), for the crash
 * test and the soak: started on a given database, killed or stopped like an operator would.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface ServerProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  /** Everything the process wrote, for the failure message. */
  output(): string;
  /** Resolves with the exit code or signal once the process is gone. */
  exited: Promise<string>;
  kill(signal: NodeJS.Signals): Promise<string>;
}

export interface ServerOptions {
  databaseUrl: string;
  /** SECRET_KEY of the database (PostgreSQL); without it a SQLite server uses the key file beside the database. */
  secretKey?: string;
  adminKey?: string;
  /** Further `serve` flags. */
  args?: string[];
  /** Node's own flags for the server process (`--cpu-prof`...). */
  nodeArgs?: string[];
  env?: Record<string, string>;
}

/** Starts `serve --port 0` and resolves once it prints the address it listens on. */
export function startServerProcess(options: ServerOptions): Promise<ServerProcess> {
  const args = [
    ...(options.nodeArgs ?? []),
    '--import',
    'tsx',
    'src/cli/main.ts',
    'serve',
    '--port',
    '0',
    '--database',
    options.databaseUrl,
    '--log-level',
    'error',
    ...(options.args ?? []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      SECRET_KEY: options.secretKey ?? '',
      ...(options.adminKey ? { ADMIN_KEY: options.adminKey } : {}),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? `exit ${code}`)));
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.length > 200_000) output = output.slice(-100_000);
      const match = /listening on (http:\/\/[^\s]+)/.exec(output);
      if (match && child.pid !== undefined) {
        child.stdout!.off('data', onData);
        child.stdout!.on('data', (more: Buffer) => (output = (output + more.toString()).slice(-100_000)));
        resolve({
          url: match[1]!,
          pid: child.pid,
          child,
          output: () => output,
          exited,
          async kill(signal) {
            child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-100_000)));
    void exited.then((how) => reject(new Error(`the server exited (${how}) before listening:\n${output}`)));
  });
}

/** A fresh database for a server process: a temporary SQLite file, or a schema of a PostgreSQL database. */
export interface DatabaseLocation {
  /** The URL the server is started with. */
  url: string;
  /** The secret key the server is started with (SECRET_KEY); none on SQLite, which keeps its key file beside the database. */
  secretKey?: string;
  open(): Promise<Database>;
  dispose(): Promise<void>;
}

export function sqliteLocation(): DatabaseLocation {
  const dir = mkdtempSync(join(tmpdir(), 'gp-server-'));
  const url = `sqlite:${join(dir, 'server.db')}`;
  return { url, open: () => openDatabase(url), dispose: async () => rmSync(dir, { recursive: true, force: true }) };
}

export function postgresLocation(base: string, name: string): DatabaseLocation {
  const schema = `${name}_${process.pid}_${randomUUID().slice(0, 8)}`;
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const secretKey = randomBytes(32).toString('hex');
  return {
    url: url.toString(),
    secretKey,
    open: () => openDatabase(base, { schema, secretKey }),
    dispose: () => dropPostgresSchema(base, schema),
  };
}
