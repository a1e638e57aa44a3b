import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { Config } from '../config.js';
import { openDatabase, describeDatabaseUrl, type Database, databaseOptions } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { sqliteFileAt } from '../db/database-files.js';
import { announceWorldImported, exportWorld, type ImportSummary, importWorld, WorldError } from '../world/index.js';
import { RedisBus } from '../infra/bus.js';
import { connectRedis } from '../infra/redis.js';
import { createdKeyNotice } from '../db/secret-key.js';

/** Opens the configured database with its secret key; says so when the key file was made now. */
async function openConfigured(config: Config): Promise<Database> {
  const db = await openDatabase(config.databaseUrl, databaseOptions(config));
  const notice = createdKeyNotice(db.secretKeySource);
  if (notice) console.error(notice);
  return db;
}

/** Reads and parses a world file; problems are reported with the file's name. */
export function readWorldFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new WorldError(`cannot read world file ${path}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new WorldError(`world file ${path} is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Why a world file must not be written at `path`, or undefined: a directory, or a SQLite
 * database or one of its files (the world written over it would ruin it, under a running
 * server too).
 */
export function worldFileTargetProblem(path: string): string | undefined {
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory() === true)
    return `${path} is a directory: give the name of the file to write`;
  const database = sqliteFileAt(path);
  return database === undefined ? undefined : `${path} is ${database}: the world must go to a file of its own`;
}

/**
 * Writes a world file: it holds password hashes and TOTP secrets in clear, so it is for its
 * owner's eyes only (0600), and it is written beside the target and renamed, so a failed write
 * never leaves half a file.
 */
export function writeWorldFile(file: string, text: string): void {
  const partial = `${file}.partial`;
  // Made anew: a leftover keeps its mode and owner, whoever made it.
  rmSync(partial, { force: true });
  try {
    writeFileSync(partial, text, { mode: 0o600, flag: 'wx' });
    renameSync(partial, file);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
}

async function withDatabase<T>(config: Config, work: (db: Database) => Promise<T>): Promise<T> {
  const db = await openConfigured(config);
  try {
    await migrateToLatest(db);
    return await work(db);
  } finally {
    await db.close();
  }
}

export async function migrateCommand(config: Config): Promise<number> {
  const db = await openConfigured(config);
  try {
    const applied = await migrateToLatest(db);
    console.log(
      applied.length === 0
        ? `${describeDatabaseUrl(config.databaseUrl)}: the schema is up to date`
        : `${describeDatabaseUrl(config.databaseUrl)}: applied ${applied.join(', ')}`,
    );
    return 0;
  } finally {
    await db.close();
  }
}

/** Tells running servers (through Redis) to reload and to forget the sessions an import ended. */
async function announceImport(config: Config, summary: ImportSummary): Promise<void> {
  const publisher = connectRedis(config.redisUrl!);
  const bus = new RedisBus(publisher, publisher.duplicate(), `${config.redisPrefix}bus:`);
  try {
    await announceWorldImported(bus, summary);
  } finally {
    await bus.close();
    publisher.disconnect();
  }
}

export async function importCommand(config: Config, file: string | undefined, mode: string | undefined): Promise<number> {
  if (!file) {
    console.error('game-platform import: give the world FILE to import');
    return 2;
  }
  const chosenMode = mode ?? 'merge';
  if (chosenMode !== 'merge' && chosenMode !== 'replace') {
    console.error(`game-platform import: --mode must be merge or replace, not "${chosenMode}"`);
    return 2;
  }
  try {
    const world = readWorldFile(file);
    const summary = await withDatabase(config, (db) => importWorld(db, world, { mode: chosenMode, now: Math.floor(Date.now() / 1000) }));
    if (config.redisUrl) await announceImport(config, summary);
    console.log(
      `imported ${file} (${chosenMode}): ${summary.users} users, ${summary.item_protos} item prototypes, ` +
        `${summary.items} items, ${summary.friendships} friendships, ${summary.messages} chat messages`,
    );
    if (!config.redisUrl && summary.wrote)
      console.log(
        'note: servers running on this database keep serving what they read before the import' +
          (summary.endedSessionsOf.length > 0 ? ' and accepting the sessions it ended' : '') +
          ': restart them (or run them with Redis and import with --redis) to see it',
      );
    return 0;
  } catch (error) {
    if (error instanceof WorldError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
}

export async function exportCommand(config: Config, file: string | undefined): Promise<number> {
  const toFile = file !== undefined && file !== '' && file !== '-';
  const problem = toFile ? worldFileTargetProblem(file) : undefined;
  if (problem) {
    console.error(`game-platform export: ${problem}`);
    return 2;
  }
  const world = await withDatabase(config, (db) => exportWorld(db));
  const text = `${JSON.stringify(world, null, 2)}\n`;
  if (!toFile) {
    process.stdout.write(text);
    return 0;
  }
  writeWorldFile(file, text);
  console.error(`exported the world to ${file}`);
  return 0;
}
