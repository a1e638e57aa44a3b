import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createHash, randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { sql, type Insertable } from 'kysely';
import { hash } from '@node-rs/argon2';
import { openDatabase, type Database } from '../src/db/connection.js';
import type { SessionsTable } from '../src/db/tables.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { checkLedger } from '../src/market/index.js';
import { importWorld } from '../src/world/import.js';
import { PASSWORD_HASH_OPTIONS } from '../src/auth/passwords.js';
import { newToken, sha256 } from '../src/infra/secrets.js';
import { BENCH_PASSWORD, WORLD_NOW, generateWorld, passwordSalt, type WorldRoles, type WorldScale } from './world.js';

const here = dirname(fileURLToPath(import.meta.url));
export const CACHE_DIR = join(here, '.cache');
const RUN_DATABASE = 'gpbench_run';
/** The secret key of the benchmark's databases (SECRET_KEY of the server under test): one for every copy of the cached worlds. */
export const BENCH_SECRET_KEY = 'be7cbe7cbe7cbe7cbe7cbe7cbe7cbe7cbe7cbe7cbe7cbe7cbe7cbe7cbe7cbe7c';

export type DbKind = 'sqlite' | 'postgres';

export interface PreparedDatabase {
  kind: DbKind;
  /** URL the server under test opens. */
  url: string;
  /** Seconds spent generating and importing, or 0 when the cached world was used. */
  importSeconds: number;
  fromCache: boolean;
}

/** Cache key: the seed, the scale, the schema and the generator. Any change builds a new world. */
export function cacheKey(seed: string, scale: WorldScale): string {
  const h = createHash('sha256');
  h.update(JSON.stringify({ seed, scale }));
  const migrations = join(here, '../src/db/migrations');
  for (const name of readdirSync(migrations).sort()) h.update(readFileSync(join(migrations, name)));
  h.update(readFileSync(join(here, 'world.ts')));
  return h.digest('hex').slice(0, 12);
}

async function fillWorld(db: Database, seed: string, scale: WorldScale, log: (line: string) => void): Promise<number> {
  const started = performance.now();
  const passwordHash = await hash(BENCH_PASSWORD, { ...PASSWORD_HASH_OPTIONS, salt: passwordSalt(seed) });
  const { world } = generateWorld(seed, scale, passwordHash);
  const generated = performance.now();
  log(`  generated ${world.users!.length} users, ${world.items!.length} items in ${((generated - started) / 1000).toFixed(1)} s`);
  await migrateToLatest(db);
  const summary = await importWorld(db, world, { mode: 'replace', now: WORLD_NOW });
  const imported = performance.now();
  log(`  importWorld: ${summary.items} items, ${summary.friendships} friendships in ${((imported - generated) / 1000).toFixed(1)} s`);
  return (imported - started) / 1000;
}

/** A working copy of the cached SQLite world (built first when missing). */
async function prepareSqlite(seed: string, scale: WorldScale, log: (line: string) => void): Promise<PreparedDatabase> {
  mkdirSync(CACHE_DIR, { recursive: true });
  const key = cacheKey(seed, scale);
  const cached = join(CACHE_DIR, `world-${scale.name}-${key}.sqlite`);
  let importSeconds = 0;
  const fromCache = existsSync(cached);
  if (!fromCache) {
    for (const name of readdirSync(CACHE_DIR)) if (name.startsWith(`world-${scale.name}-`)) rmSync(join(CACHE_DIR, name), { force: true });
    log(`building the ${scale.name} world on SQLite (cache key ${key})`);
    const building = `${cached}.building`;
    for (const suffix of ['', '-wal', '-shm']) rmSync(building + suffix, { force: true });
    const db = await openDatabase(`sqlite:${building}`, { secretKey: BENCH_SECRET_KEY });
    importSeconds = await fillWorld(db, seed, scale, log);
    await db.close();
    renameSync(building, cached);
  }
  const run = join(CACHE_DIR, `run-${scale.name}.sqlite`);
  for (const suffix of ['', '-wal', '-shm']) rmSync(run + suffix, { force: true });
  copyFileSync(cached, run);
  return { kind: 'sqlite', url: `sqlite:${run}`, importSeconds, fromCache };
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function adminQuery(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/**
 * A fresh copy of the cached PostgreSQL world: the world lives in its own database
 * (gpbench_<scale>_<key>) and each run gets a copy made with CREATE DATABASE ... TEMPLATE.
 */
async function preparePostgres(baseUrl: string, seed: string, scale: WorldScale, log: (line: string) => void): Promise<PreparedDatabase> {
  const key = cacheKey(seed, scale);
  const cachedName = `gpbench_${scale.name}_${key}`;
  const existing = await adminQuery(baseUrl, `select datname from pg_database where datname like 'gpbench_%'`);
  const names = existing.rows.map((r) => r.datname as string);
  let importSeconds = 0;
  const fromCache = names.includes(cachedName);
  if (!fromCache) {
    for (const name of names)
      if (name.startsWith(`gpbench_${scale.name}_`)) await adminQuery(baseUrl, `drop database if exists ${name} with (force)`);
    log(`building the ${scale.name} world on PostgreSQL (cache key ${key})`);
    const building = `${cachedName}_building`;
    await adminQuery(baseUrl, `drop database if exists ${building} with (force)`);
    await adminQuery(baseUrl, `create database ${building}`);
    const db = await openDatabase(withDatabase(baseUrl, building), { secretKey: BENCH_SECRET_KEY });
    importSeconds = await fillWorld(db, seed, scale, log);
    await db.close();
    // A settled database, as autovacuum leaves it: statistics and visibility map up to date.
    await adminQuery(withDatabase(baseUrl, building), 'vacuum analyze');
    await adminQuery(baseUrl, `alter database ${building} rename to ${cachedName}`);
  }
  await adminQuery(baseUrl, `drop database if exists ${RUN_DATABASE} with (force)`);
  await adminQuery(baseUrl, `create database ${RUN_DATABASE} template ${cachedName}`);
  return { kind: 'postgres', url: withDatabase(baseUrl, RUN_DATABASE), importSeconds, fromCache };
}

export function prepareDatabase(kind: DbKind, seed: string, scale: WorldScale, log: (line: string) => void): Promise<PreparedDatabase> {
  if (kind === 'sqlite') return prepareSqlite(seed, scale, log);
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('PostgreSQL runs need TEST_DATABASE_URL');
  return preparePostgres(url, seed, scale, log);
}

/** A session the harness opened: its user, the address it is bound to, its access token. */
export interface BenchSession {
  userId: number;
  ip: string;
  token: string;
}

/**
 * Signs users in by writing sessions the way sign-in stores them (token hash, bound to the
 * address given), so scenarios do not depend on sign-in throttling.
 */
export async function createSessions(url: string, wanted: { userId: number; ip: string }[]): Promise<BenchSession[]> {
  const db = await openDatabase(url, { secretKey: BENCH_SECRET_KEY });
  const sessions: BenchSession[] = [];
  try {
    const now = Math.floor(Date.now() / 1000);
    const rows = wanted.map(({ userId, ip }): Insertable<SessionsTable> => {
      const token = newToken();
      sessions.push({ userId, ip, token });
      return {
        user_id: userId,
        family_id: randomUUID(),
        access_hash: sha256(token),
        refresh_hash: sha256(newToken()),
        ip,
        is_bot: 0,
        expires_at: now + 86400,
        created_at: now,
      };
    });
    for (let i = 0; i < rows.length; i += 500)
      await db.kysely
        .insertInto('sessions')
        .values(rows.slice(i, i + 500))
        .execute();
  } finally {
    await db.close();
  }
  return sessions;
}

export interface ConservationReport {
  ok: boolean;
  crafts: number;
  openings: number;
  /** Trades accepted (each swaps one item for one). */
  trades: number;
  itemsTotal: number;
  owned: number;
  consumed: number;
  revoked: number;
  problems: string[];
}

/**
 * The conservation invariant after crafting and opening: every item is owned, or consumed by
 * exactly one recorded craft or opening, or revoked; each craft consumed ten items and created
 * one, each opening a case and its key for one; and the counts add up (items now = items
 * before + crafts + openings; owned per crafter = before - 9 x crafts, per opener before - openings).
 */
export async function checkConservation(url: string, roles: WorldRoles, market?: MarketSeed): Promise<ConservationReport> {
  const db = await openDatabase(url, { secretKey: BENCH_SECRET_KEY });
  const problems: string[] = [];
  const k = db.kysely;
  try {
    const states = await k
      .selectFrom('items')
      .select(['state', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('state')
      .execute();
    const count = (state: string) => Number(states.find((s) => s.state === state)?.n ?? 0);
    for (const s of states)
      if (!['owned', 'listed', 'consumed', 'revoked'].includes(s.state)) problems.push(`${s.n} items in unknown state ${s.state}`);
    const itemsTotal = states.reduce((sum, s) => sum + Number(s.n), 0);
    const crafts = await k.selectFrom('crafts').select(['craft_id', 'user_id', 'result_item_id', 'consumed_item_ids']).execute();
    const consumed = await k.selectFrom('items').select(['item_id', 'user_id', 'craft_id']).where('state', '=', 'consumed').execute();
    const revokedWithoutRecord = await k
      .selectFrom('items')
      .select('item_id')
      .where('state', '=', 'revoked')
      .where((eb) =>
        eb.not(eb.exists(eb.selectFrom('revocations').select('item_id').whereRef('revocations.item_id', '=', 'items.item_id'))),
      )
      .execute();
    if (revokedWithoutRecord.length > 0) problems.push(`${revokedWithoutRecord.length} revoked items without a revocation record`);
    const ownedWithCraft = await k
      .selectFrom('items')
      .select('item_id')
      .where('state', '=', 'owned')
      .where('craft_id', 'is not', null)
      .limit(5)
      .execute();
    if (ownedWithCraft.length > 0) problems.push(`owned items carry a craft id: ${ownedWithCraft.map((r) => r.item_id).join(', ')}`);

    const draws = await k.selectFrom('draws').select(['draw_id', 'user_id', 'case_item_id', 'key_item_id', 'result_item_ids']).execute();
    const openedBy = new Map<number, number>();
    for (const draw of draws) {
      for (const id of [draw.case_item_id, draw.key_item_id]) {
        if (id === null) continue;
        if (openedBy.has(id)) problems.push(`item ${id} consumed by openings ${openedBy.get(id)} and ${draw.draw_id}`);
        openedBy.set(id, draw.draw_id);
      }
      if ((JSON.parse(draw.result_item_ids) as number[]).length !== 1)
        problems.push(`opening ${draw.draw_id} gave ${draw.result_item_ids}`);
    }
    const consumedBy = new Map<number, number>();
    for (const craft of crafts) {
      const ids = JSON.parse(craft.consumed_item_ids) as number[];
      if (ids.length !== 10 || new Set(ids).size !== 10)
        problems.push(`craft ${craft.craft_id} consumed ${ids.length} items (${new Set(ids).size} distinct)`);
      for (const id of ids) {
        if (consumedBy.has(id)) problems.push(`item ${id} consumed by crafts ${consumedBy.get(id)} and ${craft.craft_id}`);
        consumedBy.set(id, craft.craft_id);
      }
    }
    for (const item of consumed) {
      const craftId = consumedBy.get(item.item_id);
      if (openedBy.has(item.item_id)) {
        if (craftId !== undefined || item.craft_id !== null) problems.push(`item ${item.item_id} is consumed by an opening and a craft`);
      } else if (craftId === undefined) problems.push(`item ${item.item_id} is consumed but no craft or opening lists it`);
      else if (item.craft_id !== craftId)
        problems.push(`item ${item.item_id} points at craft ${item.craft_id}, listed by craft ${craftId}`);
    }
    if (consumed.length !== consumedBy.size + openedBy.size)
      problems.push(`${consumedBy.size} items listed by crafts and ${openedBy.size} by openings, ${consumed.length} consumed`);

    const results = await k
      .selectFrom('items')
      .select(['item_id', 'user_id', 'created_by_craft_id'])
      .where('created_by_craft_id', 'is not', null)
      .execute();
    const resultByCraft = new Map(results.map((r) => [r.created_by_craft_id!, r]));
    for (const craft of crafts) {
      const result = resultByCraft.get(craft.craft_id);
      if (!result || result.item_id !== craft.result_item_id) problems.push(`craft ${craft.craft_id} has no matching result item`);
      else if (result.user_id !== craft.user_id) problems.push(`craft ${craft.craft_id} result belongs to user ${result.user_id}`);
    }
    const seeded = market?.listings ?? 0;
    if (itemsTotal !== roles.scale.items + seeded + crafts.length + draws.length)
      problems.push(
        `items total ${itemsTotal}, expected ${roles.scale.items} + ${seeded} listed for the market + ${crafts.length} crafts + ${draws.length} openings`,
      );
    if (market) {
      const ledger = await checkLedger(k);
      problems.push(...ledger.map((problem) => `ledger: ${problem}`));
      const sold = await k
        .selectFrom('market_sales')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      if (count('listed') + Number(sold.n) !== seeded) problems.push(`${count('listed')} listed + ${sold.n} sold, ${seeded} were listed`);
    }

    const craftsPerUser = new Map<number, number>();
    for (const craft of crafts) craftsPerUser.set(craft.user_id, (craftsPerUser.get(craft.user_id) ?? 0) + 1);
    const ownedPerUser = await k
      .selectFrom('items')
      .select(['user_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('state', '=', 'owned')
      .where(
        'user_id',
        'in',
        [...roles.craftUsers, ...roles.openUsers, ...roles.tradePairs.flatMap((p) => [p.from, p.to])].map((r) => r.userId),
      )
      .groupBy('user_id')
      .execute();
    for (const range of roles.craftUsers) {
      const owned = Number(ownedPerUser.find((r) => r.user_id === range.userId)?.n ?? 0);
      const expected = range.count - 9 * (craftsPerUser.get(range.userId) ?? 0);
      if (owned !== expected) problems.push(`user ${range.userId} owns ${owned} items, expected ${expected}`);
    }
    const openingsPerUser = new Map<number, number>();
    for (const draw of draws) openingsPerUser.set(draw.user_id, (openingsPerUser.get(draw.user_id) ?? 0) + 1);
    for (const range of roles.openUsers) {
      const owned = Number(ownedPerUser.find((r) => r.user_id === range.userId)?.n ?? 0);
      const expected = 2 * range.count - (openingsPerUser.get(range.userId) ?? 0);
      if (owned !== expected) problems.push(`opener ${range.userId} owns ${owned} items, expected ${expected}`);
    }
    // A trade swaps one item for one: every trader keeps as many items as it started with.
    for (const range of roles.tradePairs.flatMap((p) => [p.from, p.to])) {
      const owned = Number(ownedPerUser.find((r) => r.user_id === range.userId)?.n ?? 0);
      if (owned !== range.count) problems.push(`trader ${range.userId} owns ${owned} items, expected ${range.count}`);
    }
    const accepted = await k
      .selectFrom('trades')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 1)
      .executeTakeFirstOrThrow();
    return {
      ok: problems.length === 0,
      crafts: crafts.length,
      openings: draws.length,
      trades: Number(accepted.n),
      itemsTotal,
      owned: count('owned'),
      consumed: count('consumed'),
      revoked: count('revoked'),
      problems: problems.slice(0, 20),
    };
  } finally {
    await db.close();
  }
}

export async function dropRunDatabase(kind: DbKind, url: string): Promise<void> {
  if (kind === 'sqlite') {
    const path = url.slice('sqlite:'.length);
    for (const suffix of ['', '-wal', '-shm']) rmSync(path + suffix, { force: true });
    return;
  }
  const base = process.env.TEST_DATABASE_URL!;
  await adminQuery(base, `drop database if exists ${RUN_DATABASE} with (force)`);
}

/** What seedMarket put on the market. */
export interface MarketSeed {
  protoId: number;
  /** Listed items firstItemId .. firstItemId + listings - 1, each at `price` kopecks. */
  firstItemId: number;
  listings: number;
  price: number;
  buyers: number[];
}

const MARKET_LISTINGS = 100_000;
const MARKET_PRICE = 100;
const MARKET_SELLERS = 100;

/**
 * Puts 100,000 new items of one prototype on sale by a hundred sellers, and gives the buyers money
 * (granted through the ledger, so that it still balances), straight in the run's database.
 */
export async function seedMarket(url: string, roles: WorldRoles, buyers: number[]): Promise<MarketSeed> {
  const db = await openDatabase(url, { secretKey: BENCH_SECRET_KEY });
  try {
    await migrateToLatest(db);
    const k = db.kysely;
    const proto = await k
      .selectFrom('item_protos')
      .select(['item_proto_id', 'type', 'quality_id'])
      .where('type', '=', 0)
      .where('quality_id', '>', 0)
      .where((eb) => eb.or([eb('item_proto_status', 'is', null), eb('item_proto_status', '=', 0)]))
      .orderBy('item_proto_id')
      .executeTakeFirstOrThrow();
    // Sellers from the last ordinary users (the buyers are the first): one seller of them all would make every sale wait for one balance.
    const sellerOf = (n: number) => roles.scale.users - (n % MARKET_SELLERS);
    const { max } = await k
      .selectFrom('items')
      .select((eb) => eb.fn.max<number>('item_id').as('max'))
      .executeTakeFirstOrThrow();
    const firstItemId = Number(max) + 1;
    const now = Math.floor(Date.now() / 1000);
    await k.transaction().execute(async (trx) => {
      for (let start = 0; start < MARKET_LISTINGS; start += 500) {
        const ids = Array.from({ length: Math.min(500, MARKET_LISTINGS - start) }, (_, i) => firstItemId + start + i);
        await trx
          .insertInto('items')
          .values(
            ids.map((item_id) => ({
              item_id,
              user_id: sellerOf(item_id),
              item_proto_id: proto.item_proto_id,
              type: proto.type,
              quality_id: proto.quality_id,
              ts_owned: WORLD_NOW,
              ts_can_trade: 0,
              state: 'listed' as const,
            })),
          )
          .execute();
        await trx
          .insertInto('market_listings')
          .values(
            ids.map((item_id) => ({
              item_id,
              seller_id: sellerOf(item_id),
              item_proto_id: proto.item_proto_id,
              type: proto.type,
              quality_id: proto.quality_id,
              price: MARKET_PRICE,
              ts_listed: now,
              ts_expires: now + 365 * 86400,
            })),
          )
          .execute();
      }
      const grant = MARKET_LISTINGS * MARKET_PRICE;
      for (const buyer of buyers) {
        await trx.insertInto('balances').values({ user_id: buyer, balance: grant }).execute();
        const { transfer_id } = await trx
          .insertInto('ledger_transfers')
          .values({ ts: now, kind: 'admin_grant', item_id: null, item_proto_id: null, listing_id: null, reason: 'benchmark' })
          .returning('transfer_id')
          .executeTakeFirstOrThrow();
        await trx
          .insertInto('ledger_entries')
          .values([
            { transfer_id: Number(transfer_id), account_id: buyer, kind: 'admin_grant', amount: grant, balance_after: grant },
            { transfer_id: Number(transfer_id), account_id: -2, kind: 'admin_grant', amount: -grant, balance_after: null },
          ])
          .execute();
      }
      if (db.dialect === 'postgres')
        await sql`select setval(pg_get_serial_sequence('items', 'item_id'), ${firstItemId + MARKET_LISTINGS})`.execute(trx);
    });
    return { protoId: proto.item_proto_id, firstItemId, listings: MARKET_LISTINGS, price: MARKET_PRICE, buyers };
  } finally {
    await db.close();
  }
}
