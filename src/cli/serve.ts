import { importWorldIfEmpty, isEmptyWorld, isShippedDemoWorld, WorldError } from '../world/index.js';
import v8 from 'node:v8';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import type { Services } from '../services.js';
import { createServer } from '../app.js';
import { openDatabase, describeDatabaseUrl, type Database, databaseOptions } from '../db/connection.js';
import { describeSecretKeySource } from '../db/secret-key.js';
import { migrateToLatest } from '../db/migrate.js';
import { readWorldFile } from './world-commands.js';
import { publicUrl } from '../accounts/index.js';
import { MetricsListenerError } from '../operations/metrics-endpoint.js';
import { reloadTls, tlsFilesOf } from '../operations/tls.js';

/**
 * How much the JavaScript heap may grow past what the last full collection kept, percent.
 * On a machine with several gigabytes of memory V8 lets it grow fourfold: the garbage of a
 * few large answers (whole 10,000-item inventories) then took the server from 260 to 490 MB.
 * At 50% the peak stayed near 210 MB at the same throughput (npm run bench).
 */
const HEAP_GROWING_PERCENT = 50;

/** Applies HEAP_GROWING_PERCENT unless the operator chose the heap's growth in NODE_OPTIONS or node's own flags. */
function limitHeapGrowth(): void {
  const chosen = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((flag) => /heap[-_]growing[-_]percent/.test(flag));
  if (!chosen) v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

/** How long in-flight requests get to finish after a shutdown signal. */
const SHUTDOWN_GRACE_MS = 25_000;
/** A repeated signal within this time is the same request to stop. */
const REPEAT_SIGNAL_MS = 2_000;

interface DemoAccount {
  email: string;
  password: string;
  notes: string[];
}

/** Accounts of a world file that carry a plain password, to print on start (see `serve`: the shipped demo world only). */
export function demoAccounts(world: unknown): DemoAccount[] {
  const users = (world as { users?: Record<string, unknown>[] }).users ?? [];
  return users
    .filter((u) => typeof u.email === 'string' && typeof u.password === 'string')
    .map((u) => {
      const notes: string[] = [`user_id ${u.user_id}`];
      if (typeof u.totp_secret === 'string') notes.push(`TOTP secret ${u.totp_secret}`);
      if (u.captcha === 'always') notes.push('captcha always');
      if (u.global_ban === 1 || u.global_ban === true) notes.push('globally blocked');
      if (u.inventory_privacy && u.inventory_privacy !== 'everyone') notes.push(`inventory: ${String(u.inventory_privacy)}`);
      if (u.moderator === 1 || u.moderator === true) notes.push('moderator');
      if (u.superadmin === 1 || u.superadmin === true) notes.push('superadmin');
      if (u.vip === 1 || u.vip === true) notes.push('vip');
      if (typeof u.muted_until === 'number') notes.push('muted');
      const bots = users.filter((b) => b.bot_owner === u.user_id).map((b) => b.user_id);
      if (bots.length > 0) notes.push(`owns bot ${bots.join(', ')}`);
      return { email: u.email as string, password: u.password as string, notes };
    });
}

function baseUrl(address: { address: string; port: number; family: string }, scheme: 'http' | 'https'): string {
  const host = address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.address;
  return `${scheme}://${address.family === 'IPv6' && host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/**
 * `game-platform serve`: opens and migrates the database, imports the world file into an
 * empty database, listens, and on SIGINT or SIGTERM stops accepting connections, lets
 * requests in flight finish and closes the database. Resolves to the exit code.
 */
export async function serve(config: Config): Promise<number> {
  limitHeapGrowth();
  const prepared = await prepareDatabase(config);
  if (typeof prepared === 'number') return prepared;
  const { db, world, imported } = prepared;

  const { app, services } = await createServer(config, { db });

  // Signals are handled from here on, so one arriving while the server starts also stops it cleanly.
  const stop = handleStopSignals(app, db);
  const tls = tlsFilesOf(config.tls);
  // Renewed certificates (certbot and the like) are taken up without a restart.
  if (tls) process.on('SIGHUP', () => reloadTls(app, tls));

  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    if (stop.closing()) return stop.done;
    stop.detach();
    await app.close();
    await db.close();
    console.error(
      error instanceof MetricsListenerError ? error.message : `cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`,
    );
    return 1;
  }

  console.log(startNotice(config, app, services, db, imported ? world : undefined).join('\n'));
  return stop.done;
}

/** Opens and migrates the database and imports the world file into an empty one; answers the exit code when that fails. */
async function prepareDatabase(config: Config): Promise<{ db: Database; world: unknown; imported: boolean } | number> {
  const db = await openDatabase(config.databaseUrl, databaseOptions(config));
  let world: unknown;
  let imported = false;
  try {
    await migrateToLatest(db);
    if (config.world) {
      world = readWorldFile(config.world);
      if (await isEmptyWorld(db)) {
        const summary = await importWorldIfEmpty(db, world, Math.floor(Date.now() / 1000));
        imported = summary !== null;
        if (summary)
          console.log(`imported ${config.world}: ${summary.users} users, ${summary.item_protos} item prototypes, ${summary.items} items`);
      }
    }
  } catch (error) {
    await db.close();
    if (error instanceof WorldError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
  return { db, world, imported };
}

/**
 * On SIGINT or SIGTERM: stop accepting connections, let requests in flight finish, close the
 * database. `done` resolves to the exit code once stopped.
 */
function handleStopSignals(app: FastifyInstance, db: Database): { done: Promise<number>; closing: () => boolean; detach: () => void } {
  let closing = false;
  let closingSince = 0;
  let stopped: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => (stopped = resolve));
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) {
      // npm and terminals often deliver one Ctrl-C twice (to the whole process group): only a
      // signal sent later, by someone tired of waiting, cuts the shutdown short.
      if (Date.now() - closingSince < REPEAT_SIGNAL_MS) return;
      app.log.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(1);
    }
    closing = true;
    closingSince = Date.now();
    app.log.info({ signal }, 'shutting down: no new connections, waiting for requests in flight');
    const timer = setTimeout(() => {
      app.log.error('requests in flight did not finish in time: exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    timer.unref();
    app
      .close()
      .then(() => db.close())
      .then(
        () => {
          clearTimeout(timer);
          app.log.info('stopped');
          stopped(0);
        },
        (error: unknown) => {
          clearTimeout(timer);
          app.log.error({ err: error }, 'error while shutting down');
          stopped(1);
        },
      );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  return {
    done,
    closing: () => closing,
    detach: () => {
      process.off('SIGINT', shutdown);
      process.off('SIGTERM', shutdown);
    },
  };
}

/** What serve prints once listening: where to reach it, what it runs on, and the world's demo accounts. */
/** The banner; `imported` is the world file when this start imported it. */
function startNotice(config: Config, app: FastifyInstance, services: Services, db: Database, imported: unknown): string[] {
  const tls = tlsFilesOf(config.tls);
  const address = app.server.address();
  const scheme = tls ? 'https' : 'http';
  const metricsAddress = services.metrics.listenerAddress();
  const url = address && typeof address === 'object' ? baseUrl(address, scheme) : `${scheme}://${config.host}:${config.port}`;
  const lines = [
    `game-platform is listening on ${url}`,
    `  API:      ${url}/api/<method>   (try ${url}/api/gchat.get)`,
    `  health:   ${url}/healthz   ${url}/readyz`,
    ...(metricsAddress ? [`  metrics:  ${baseUrl(metricsAddress, 'http')}/metrics`] : []),
    `  database: ${describeDatabaseUrl(config.databaseUrl)}${config.redisUrl ? `   redis: ${describeDatabaseUrl(config.redisUrl)}` : ''}`,
    `  secrets:  TOTP secrets sealed with the key from ${describeSecretKeySource(db.secretKeySource)}`,
    `  mail:     ${services.mail.destination}`,
    `  sign-up:  ${config.accounts.signup === 'open' ? `open (auth.signup); links in e-mail point to ${publicUrl(services)}` : 'closed'}`,
  ];
  // Plain passwords and TOTP secrets are shown only where they are public already (the shipped
  // demo world, whose accounts the README lists), when they just became usable, and only to a
  // person at a terminal: never into a log stream or for any other world.
  const demoImported = imported !== undefined && config.world !== undefined && isShippedDemoWorld(config.world);
  const accounts = demoImported && process.stdout.isTTY === true ? demoAccounts(imported) : [];
  if (demoImported && accounts.length === 0) lines.push('Demo world imported: its accounts are listed in the README (Demo accounts).');
  if (accounts.length > 0) {
    const width = Math.max(...accounts.map((a) => a.email.length));
    const passwordWidth = Math.max(...accounts.map((a) => a.password.length));
    lines.push(`Demo accounts from ${config.world} (sign in with auth.signin):`);
    for (const a of accounts) lines.push(`  ${a.email.padEnd(width)}  password ${a.password.padEnd(passwordWidth)}  ${a.notes.join(', ')}`);
  }
  return lines;
}
