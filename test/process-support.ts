import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/connection.js';
import { allMethods } from '../src/domains.js';
import { REDIS_URL, newDatabaseLocation, processDatabaseEnv } from './helpers.js';
import { responseProblems } from './response-check.js';

const MAIN = new URL('../src/cli/main.ts', import.meta.url).pathname;
const methodsByName = new Map(allMethods().map((m) => [m.name, m]));

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  exited: Promise<number | null>;
}

/** `game-platform serve` as its own operating-system process; resolves once it listens. */
export function serve(env: NodeJS.ProcessEnv): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', WORLD: '', ADMIN_KEY: '', RATE_LIMIT: 'off', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve({ child, url: match[1]!, exited });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk) => (output += chunk));
    void exited.then((code) => reject(new Error(`serve exited with ${code}:\n${output}`)));
  });
}

/**
 * `count` `serve` processes on one new database, the first importing `world`, joined by Redis
 * when `redis`; `env` adds to their settings.
 */
export async function withServeProcesses(
  options: { count: number; world: unknown; redis: boolean; env?: NodeJS.ProcessEnv },
  body: (servers: ServerProcess[]) => Promise<void>,
): Promise<void> {
  const location = await newDatabaseLocation();
  const dir = mkdtempSync(join(tmpdir(), 'gp-processes-'));
  const servers: ServerProcess[] = [];
  // Opening the database creates the schema the processes are pointed at.
  const db = await openDatabase(location.url, { schema: location.schema, secretKey: location.secretKey });
  try {
    writeFileSync(join(dir, 'world.json'), JSON.stringify(options.world));
    const redis = options.redis ? { REDIS_URL, REDIS_PREFIX: location.redisPrefix } : {};
    const env = { ...processDatabaseEnv(location), ...redis, ...options.env };
    servers.push(await serve({ ...env, WORLD: join(dir, 'world.json') }));
    while (servers.length < options.count) servers.push(await serve(env));
    await body(servers);
  } finally {
    await stopAll(servers);
    await db.close();
    rmSync(dir, { recursive: true, force: true });
    await location.dispose();
  }
}

/** A command of the program as a separate process, the way an operator runs it; resolves once it has exited. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    env: { ...process.env, REDIS_URL: '', WORLD: '', ADMIN_KEY: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** Stops the processes and waits until each has exited. */
export async function stopAll(servers: ServerProcess[]): Promise<void> {
  for (const server of servers) server.child.kill('SIGTERM');
  for (const server of servers) await server.exited;
}

/**
 * Calls a method over HTTP (a connection of its own, so no request races the server closing
 * an idle kept-alive one), checks the answer against its published schema and returns it.
 */
export async function call(
  server: ServerProcess,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<any> {
  const payload = JSON.stringify(params);
  const { status, body } = await new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = request(
      `${server.url}/api/${method}`,
      {
        method: 'POST',
        agent: false,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
  assert.deepEqual(responseProblems(methodsByName.get(method), status, body, params), [], `${method} answered outside its schema`);
  return body;
}

/** As `call`, and checks that it succeeded: returns its data. */
export async function api(
  server: ServerProcess,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<any> {
  const body = await call(server, method, params, headers);
  assert.equal(body.code, 0, JSON.stringify(body));
  return body.data;
}
