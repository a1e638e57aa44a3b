import { Kind, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { TOO_DEEP, nestedDeeperThan } from '../api/depth.js';
import type { Insertable } from 'kysely';
import { ownTransaction, type Database, type DialectName, type Executor, type InTransaction } from '../db/connection.js';
import { dialectAdapter } from '../db/dialect.js';
import type { ItemsTable } from '../db/tables.js';
import { elementAt } from '../infra/elements.js';
import { unstorableTextProblem } from '../infra/text.js';
import { PasswordHasher } from '../auth/index.js';
import { lockChatWriters, MessageIds } from '../chat/index.js';
import { storedProtoIds } from '../catalog/index.js';
import { emailLookupKey, nickColumns, rankColumn, storedUserIds } from '../users/index.js';
import {
  DEFAULT_ITEM_TYPES,
  DEFAULT_QUALITIES,
  MAX_WORLD_COPIES,
  TEXT_KIND,
  World,
  textLimitsProblem,
  type WorldFriendship,
  type WorldItemProto,
  type WorldPromocode,
  type WorldUser,
} from './schema.js';
import { type InvalidatedTrade, invalidateTradesHoldingAt } from '../trades/index.js';
import { checkMarket } from '../market/index.js';
import { MAX_MISSION_MONEY, weekOf } from '../missions/index.js';
import {
  advanceSequences,
  deleteMissionProgress,
  deleteItemsAndEquipment,
  deleteUnusedRecoveryCodes,
  raiseUsesToRedemptions,
  upsertKeeping,
  deleteEntriesOf,
  deleteTradeContents,
  emptyWorldTables,
  endListingsOf,
  itemsToList,
  markItemsListed,
  hasUsersOrProtos,
  insertBatched,
  insertItems,
  lockWorldImport,
  protoClasses,
  raiseTotpLastStep,
  rebuildPrivateDialogs,
  revokeSessionsOf,
  setChatState,
  storedBots,
  storedBotsOf,
  storedCollectionIds,
  storedTotpSecrets,
  storedKeysAndCases,
  storedPairs,
  usersWith,
  type UserPair,
  usersWithOpenSessions,
  importLobby,
  storedLobbyProblems,
} from './queries.js';
import { lobbyProblems, lobbyUsers } from './lobby.js';

const checkWorld = TypeCompiler.Compile(World);

export class WorldError extends Error {
  /** What is wrong, each naming its place in the world (`item_protos[0].type: ...`). */
  readonly problems: readonly string[];
  constructor(message: string, options?: { cause?: unknown; problems?: readonly string[] }) {
    super(message, options);
    this.name = 'WorldError';
    this.problems = options?.problems ?? [message];
  }
}

export interface ImportOptions {
  /**
   * replace: the world becomes exactly the file (every session ends; the audit log stays).
   * merge: each entry of the file is added, or replaces as a whole the stored entry with the
   * same id; items without item_id are always added; nothing else changes.
   */
  mode: 'replace' | 'merge';
  /** Seconds since the epoch used where the file gives no time. */
  now: number;
  /** The transaction the import writes in (an admin action's, shared with its audit entry); a new one when absent. */
  inTransaction?: InTransaction;
}

export interface ImportSummary {
  users: number;
  item_protos: number;
  items: number;
  friendships: number;
  messages: number;
  promocodes: number;
  /** Users whose open sessions the import ended (banned ones, or everyone on replace): running servers must forget them. */
  endedSessionsOf: number[];
  /** Open trades made invalid by items the file replaced: a running server tells their receivers. */
  invalidatedTrades: InvalidatedTrade[];
  /** Whether the import wrote to the database (a replace always does, a merge when the file has entries): running servers hold what was there before. */
  wrote: boolean;
}

const bit = (v: boolean | 0 | 1 | undefined) => (v === true || v === 1 ? 1 : 0);
const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

/** References a world makes to entries it does not itself contain, with where each is made. */
interface OutsideReferences {
  users: Map<number, string>;
  item_protos: Map<number, string>;
  collections: Map<number, string>;
}

/** A unique, foreign-key or check constraint refused a write (SQLite and PostgreSQL). */
function isConstraintViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CONSTRAINT') || /^23\d{3}$/.test(code));
}

function invalid(problems: string[]): WorldError {
  const shown = problems.slice(0, 20);
  const more = problems.length > shown.length ? `\n  ... and ${problems.length - shown.length} more` : '';
  return new WorldError(`invalid world file:\n  ${shown.join('\n  ')}${more}`, { problems });
}

/** Checks a world's shape and inner consistency; references to entries outside it are returned, not judged. */
function validateWorld(input: unknown): { world: World; outside: OutsideReferences } {
  // Checked first and without recursion: the schema check would run out of stack on such a value.
  if (nestedDeeperThan(input)) throw invalid([`(root): ${TOO_DEEP}`]);
  const unstored = unstorableStrings(input);
  if (unstored.length > 0) throw invalid(unstored);
  if (!checkWorld.Check(input)) {
    const problems = [...checkWorld.Errors(input)].slice(0, 10).map((e) => {
      const where =
        e.path
          .replace(/^\//, '')
          .replace(/\/(\d+)/g, '[$1]')
          .replace(/\//g, '.') || '(root)';
      return `${where}: ${e.schema[Kind] === TEXT_KIND ? textLimitsProblem(e.schema) : (choicesProblem(e.schema) ?? e.message)}`;
    });
    throw invalid(problems);
  }
  const world = input as World;
  const { problems, outside } = checkReferences(world);
  if (problems.length > 0) throw invalid(problems);
  return { world, outside };
}

/** For a value that must be one of a few constants (`item_proto_status`, flags), which ones. */
function choicesProblem(schema: TSchema): string | undefined {
  const choices = (schema.anyOf as TSchema[] | undefined)?.map((choice) => choice.const as unknown);
  if (choices === undefined || choices.some((choice) => choice === undefined)) return undefined;
  return `must be ${choices.map((choice) => JSON.stringify(choice)).join(', ')}`;
}

/**
 * The strings of a value (keys too) that neither database could keep as they are, with where
 * they are: the first ten. The value nests at most MAX_PARAM_DEPTH levels.
 */
function unstorableStrings(value: unknown, path = '', found: string[] = []): string[] {
  if (found.length >= 10) return found;
  if (typeof value === 'string') {
    const problem = unstorableTextProblem(value);
    if (problem) found.push(`${path || '(root)'}: ${problem}`);
  } else if (Array.isArray(value)) {
    value.forEach((element, i) => unstorableStrings(element, `${path}[${i}]`, found));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, element] of Object.entries(value)) {
      const where = path ? `${path}.${JSON.stringify(key).slice(1, -1)}` : JSON.stringify(key).slice(1, -1);
      const problem = unstorableTextProblem(key);
      if (problem && found.length < 10) found.push(`${where} (the key): ${problem}`);
      unstorableStrings(element, where, found);
    }
  }
  return found;
}

function parseProblems(outside: OutsideReferences): string[] {
  return [
    ...[...outside.users].map(([id, where]) => `${where}: unknown user ${id}`),
    ...[...outside.item_protos].map(([id, where]) => `${where}: unknown item_proto_id ${id}`),
    ...[...outside.collections].map(([id, where]) => `${where}: unknown collection ${id}`),
  ];
}

/** Parses and validates a world on its own: every reference must resolve inside the file; every problem names its entry. */
export function parseWorld(input: unknown): World {
  const { world, outside } = validateWorld(input);
  const problems = parseProblems(outside);
  if (problems.length > 0) throw invalid(problems);
  return world;
}

const pairKey = (a: number, b: number) => (a < b ? `${a}:${b}` : `${b}:${a}`);

/** The two users of a friendship, written as a pair or as an object. */
const friendPair = (f: WorldFriendship): [number, number] => (Array.isArray(f) ? [f[0], f[1]] : [f.user_id, f.friend_id]);

function checkReferences(world: World): { problems: string[]; outside: OutsideReferences } {
  const problems: string[] = [];
  const outside: OutsideReferences = { users: new Map(), item_protos: new Map(), collections: new Map() };
  const unique = <T>(list: T[] | undefined, key: (x: T) => unknown, name: string, field: string) => {
    const seen = new Set();
    (list ?? []).forEach((entry, i) => {
      const k = key(entry);
      if (k === undefined) return;
      if (seen.has(k)) problems.push(`${name}[${i}].${field}: duplicate ${String(k)}`);
      seen.add(k);
    });
    return seen;
  };
  const users = unique(world.users, (u) => u.user_id, 'users', 'user_id');
  unique(world.users, (u) => (u.email === undefined ? undefined : emailLookupKey(u.email)), 'users', 'email');
  unique(world.users, (u) => u.domain, 'users', 'domain');
  const protos = unique(world.item_protos, (p) => p.item_proto_id, 'item_protos', 'item_proto_id');
  const collections = unique(world.collections, (c) => c.collection_id, 'collections', 'collection_id');
  unique(world.qualities, (q) => q.quality_id, 'qualities', 'quality_id');
  unique(world.item_types, (t) => t.type, 'item_types', 'type');
  unique(world.items, (i) => i.item_id, 'items', 'item_id');
  unique(world.gchat?.messages, (m) => m.msg_id, 'gchat.messages', 'msg_id');
  unique(world.promocodes, (p) => p.code.toUpperCase(), 'promocodes', 'code');
  unique(world.apps, (a) => a.app_id, 'apps', 'app_id');
  unique(world.private_messages, (m) => m.msg_id, 'private_messages', 'msg_id');
  const user = (id: number, where: string) => users.has(id) || outside.users.has(id) || outside.users.set(id, where);
  const proto = (id: number, where: string) => protos.has(id) || outside.item_protos.has(id) || outside.item_protos.set(id, where);
  const fileUsers = new Map((world.users ?? []).map((u) => [u.user_id, u]));
  (world.users ?? []).forEach((u, i) => {
    if (u.bot_owner !== undefined) {
      user(u.bot_owner, `users[${i}].bot_owner`);
      const owner = fileUsers.get(u.bot_owner);
      if (u.bot_owner === u.user_id) problems.push(`users[${i}].bot_owner: a bot cannot own itself`);
      else if (owner?.bot_owner !== undefined) problems.push(ownerIsABot(i, u.bot_owner, owner.bot_owner));
    }
    if (u.password !== undefined && u.password_hash !== undefined) problems.push(`users[${i}]: give password or password_hash, not both`);
    if (u.recovery_code_hashes !== undefined && u.recovery_code_hashes.length > 0 && u.totp_secret === undefined)
      problems.push(`users[${i}].recovery_code_hashes: recovery codes need a totp_secret`);
  });
  (world.item_protos ?? []).forEach((p, i) => {
    const where = `item_protos[${i}]`;
    if (p.collection_id !== undefined && !collections.has(p.collection_id) && !outside.collections.has(p.collection_id))
      outside.collections.set(p.collection_id, `${where}.collection_id`);
    if (p.key_item_proto_id !== undefined) proto(p.key_item_proto_id, `${where}.key_item_proto_id`);
    for (const id of p.case_item_proto_ids ?? []) proto(id, `${where}.case_item_proto_ids`);
    for (const id of p.twin_item_proto_ids ?? []) proto(id, `${where}.twin_item_proto_ids`);
    (p.drop ?? []).forEach((d, j) => proto(d.item_proto_id, `${where}.drop[${j}].item_proto_id`));
  });
  (world.items ?? []).forEach((item, i) => {
    user(item.user_id, `items[${i}].user_id`);
    proto(item.item_proto_id, `items[${i}].item_proto_id`);
    if (item.item_id !== undefined && (item.copies ?? 1) > 1) problems.push(`items[${i}]: item_id and copies > 1 exclude each other`);
  });
  const copies = (world.items ?? []).reduce((sum, item) => sum + (item.copies ?? 0), 0);
  if (copies > MAX_WORLD_COPIES)
    problems.push(
      `items: their copies add up to ${copies}, more than the ${MAX_WORLD_COPIES} one file may make (list more items one by one)`,
    );
  const friendPairs = new Set<string>();
  (world.friends ?? []).forEach((f, i) => {
    const [a, b] = friendPair(f);
    user(a, `friends[${i}]`);
    user(b, `friends[${i}]`);
    if (a === b) problems.push(`friends[${i}]: a user cannot befriend themselves`);
    if (friendPairs.has(pairKey(a, b))) problems.push(`friends[${i}]: duplicate friendship ${a} and ${b}`);
    friendPairs.add(pairKey(a, b));
  });
  const blockPairs = new Set<string>();
  (world.blocks ?? []).forEach((b, i) => {
    user(b.user_id, `blocks[${i}].user_id`);
    user(b.blocked_user_id, `blocks[${i}].blocked_user_id`);
    if (b.user_id === b.blocked_user_id) problems.push(`blocks[${i}]: a user cannot block themselves`);
    if (friendPairs.has(pairKey(b.user_id, b.blocked_user_id)))
      problems.push(`blocks[${i}]: users ${b.user_id} and ${b.blocked_user_id} are also friends (a block ends a friendship)`);
    blockPairs.add(pairKey(b.user_id, b.blocked_user_id));
  });
  const requests = new Set<string>();
  (world.friend_requests ?? []).forEach((r, i) => {
    const where = `friend_requests[${i}]`;
    user(r.from, `${where}.from`);
    user(r.to, `${where}.to`);
    if (r.from === r.to) problems.push(`${where}: from and to are the same user`);
    if (friendPairs.has(pairKey(r.from, r.to))) problems.push(`${where}: users ${r.from} and ${r.to} are already friends`);
    if (blockPairs.has(pairKey(r.from, r.to))) problems.push(`${where}: one of users ${r.from} and ${r.to} blocks the other`);
    if (requests.has(`${r.to}>${r.from}`))
      problems.push(`${where}: requests cross (${r.to} already asked ${r.from}); make them friends instead`);
    if (requests.has(`${r.from}>${r.to}`)) problems.push(`${where}: duplicate request`);
    requests.add(`${r.from}>${r.to}`);
  });
  const tradeIds = unique(world.trades, (t) => t.trade_id, 'trades', 'trade_id');
  (world.trades ?? []).forEach((t, i) => {
    const where = `trades[${i}]`;
    user(t.user_id_from, `${where}.user_id_from`);
    user(t.user_id_to, `${where}.user_id_to`);
    if (t.user_id_from === t.user_id_to) problems.push(`${where}: a user cannot trade with themselves`);
    const sides = [...(t.things_from ?? []), ...(t.things_to ?? [])];
    if (sides.length === 0) problems.push(`${where}: a trade needs at least one item`);
    if (new Set(sides.map((e) => e.item_id)).size !== sides.length) problems.push(`${where}: an item appears twice`);
    for (const entry of sides) {
      proto(entry.item_proto_id, `${where}.item_proto_id`);
      if (entry.user_id !== undefined) user(entry.user_id, `${where}.user_id`);
    }
    if ((t.status ?? 0) !== 0 && t.reaction_time === undefined)
      problems.push(`${where}: a trade that is no longer open needs reaction_time`);
  });
  (world.trade_moves ?? []).forEach((m, i) => {
    const where = `trade_moves[${i}]`;
    if (!tradeIds.has(m.trade_id)) problems.push(`${where}.trade_id: unknown trade ${m.trade_id} (moves come with their trade)`);
    user(m.from_user_id, `${where}.from_user_id`);
    user(m.to_user_id, `${where}.to_user_id`);
  });
  (world.private_messages ?? []).forEach((m, i) => {
    const where = `private_messages[${i}]`;
    user(m.from, `${where}.from`);
    user(m.to, `${where}.to`);
    if (m.from === m.to) problems.push(`${where}: a user cannot write to themselves`);
  });
  (world.gchat?.messages ?? []).forEach((m, i) => {
    const where = `gchat.messages[${i}]`;
    user(m.user_id, `${where}.user_id`);
    const need = (field: keyof typeof m) => m[field] === undefined && problems.push(`${where}: type ${m.type} needs ${field}`);
    if (m.type === 1) need('text');
    if (m.type === 2) {
      need('case_item_proto_id');
      need('drop_item_proto_id');
    }
    if (m.type === 3) {
      need('user_id_receiver');
      need('item_proto_id');
    }
    if (m.type === 4) need('item_proto_ids');
    for (const id of m.user_ids_mentioned ?? []) user(id, `${where}.user_ids_mentioned`);
    if (m.user_id_receiver !== undefined) user(m.user_id_receiver, `${where}.user_id_receiver`);
    for (const id of [m.case_item_proto_id, m.drop_item_proto_id, m.item_proto_id, ...(m.item_proto_ids ?? [])])
      if (id !== undefined) proto(id, where);
  });
  (world.promocodes ?? []).forEach((p, i) => {
    const where = `promocodes[${i}]`;
    p.item_proto_ids.forEach((id, j) => proto(id, `${where}.item_proto_ids[${j}]`));
    unique(p.used_by, (u) => u.user_id, `${where}.used_by`, 'user_id');
    (p.used_by ?? []).forEach((u, j) => user(u.user_id, `${where}.used_by[${j}].user_id`));
    if (p.item_proto_ids.length === 0 && (p.money ?? 0) === 0) problems.push(`${where}: a code gives items, money or both`);
    const redemptions = p.used_by?.length ?? 0;
    if (p.uses !== undefined && p.uses < redemptions)
      problems.push(`${where}.uses: ${p.uses} is fewer than the ${redemptions} redemptions in used_by`);
  });
  problems.push(...marketProblems(world, user, proto, unique));
  unique(world.missions, (m) => m.mission_id, 'missions', 'mission_id');
  (world.missions ?? []).forEach((m, i) => {
    const where = `missions[${i}]`;
    if (m.reward_type === 'item') proto(m.reward, `${where}.reward`);
    else if (m.reward > MAX_MISSION_MONEY) problems.push(`${where}.reward: money rewards are at most ${MAX_MISSION_MONEY} units`);
    unique(m.progress, (p) => `${p.user_id} in week ${p.week}`, `${where}.progress`, 'user_id');
    (m.progress ?? []).forEach((p, j) => {
      user(p.user_id, `${where}.progress[${j}].user_id`);
      if (weekOf(p.week * 1000) !== p.week) problems.push(`${where}.progress[${j}].week: ${p.week} is not a Monday at 00:00 UTC`);
      if (p.ts_rewarded !== undefined && p.counter < m.target)
        problems.push(`${where}.progress[${j}]: a reward given at ${p.counter} of the target ${m.target}`);
    });
  });
  problems.push(...lobbyProblems(world, user));
  return { problems, outside };
}

type Unique = <T>(list: T[] | undefined, key: (x: T) => unknown, name: string, field: string) => Set<unknown>;

/** The market's sections on their own: who and what they name, unique ids, transfers that sum to zero. */
function marketProblems(
  world: World,
  user: (id: number, where: string) => unknown,
  proto: (id: number, where: string) => unknown,
  unique: Unique,
): string[] {
  const problems: string[] = [];
  unique(world.balances, (b) => b.user_id, 'balances', 'user_id');
  (world.balances ?? []).forEach((b, i) => user(b.user_id, `balances[${i}].user_id`));
  unique(world.ledger, (t) => t.transfer_id, 'ledger', 'transfer_id');
  const entryIds = new Set<number>();
  (world.ledger ?? []).forEach((t, i) => {
    const where = `ledger[${i}]`;
    if (t.item_proto_id !== undefined) proto(t.item_proto_id, `${where}.item_proto_id`);
    const sum = t.entries.reduce((total, e) => total + e.amount, 0);
    if (sum !== 0) problems.push(`${where}.entries: their amounts sum to ${sum}, not 0 (a transfer moves money, it never makes it)`);
    t.entries.forEach((e, j) => {
      if (e.entry_id !== undefined) {
        if (entryIds.has(e.entry_id)) problems.push(`${where}.entries[${j}].entry_id: duplicate ${e.entry_id}`);
        entryIds.add(e.entry_id);
      }
      if (e.account_id > 0) {
        user(e.account_id, `${where}.entries[${j}].account_id`);
        if (e.balance_after === undefined) problems.push(`${where}.entries[${j}]: a user's entry needs balance_after`);
      } else if (e.balance_after !== undefined) problems.push(`${where}.entries[${j}]: the platform's accounts have no balance_after`);
    });
  });
  unique(world.listings, (l) => l.item_id, 'listings', 'item_id');
  unique(world.listings, (l) => l.listing_id, 'listings', 'listing_id');
  (world.listings ?? []).forEach((l, i) => {
    if (l.ts_expires !== undefined && l.ts_listed !== undefined && l.ts_expires <= l.ts_listed)
      problems.push(`listings[${i}].ts_expires: must be after ts_listed`);
  });
  unique(world.market_sales, (m) => m.sale_id, 'market_sales', 'sale_id');
  (world.market_sales ?? []).forEach((m, i) => {
    const where = `market_sales[${i}]`;
    user(m.seller_id, `${where}.seller_id`);
    user(m.buyer_id, `${where}.buyer_id`);
    proto(m.item_proto_id, `${where}.item_proto_id`);
    if (m.fee > m.price) problems.push(`${where}.fee: ${m.fee} is more than the price ${m.price}`);
  });
  unique(world.market_freezes, (f) => f.user_id, 'market_freezes', 'user_id');
  (world.market_freezes ?? []).forEach((f, i) => user(f.user_id, `market_freezes[${i}].user_id`));
  return problems;
}

/** The item type each equipment slot takes. */
const SLOT_TYPES: Record<string, number> = { cards: 0, generator: 4, joke: 8, badge: 5 };

/** In a merge, references to entries not in the file must name stored entries. */
async function checkOutsideReferences(trx: Executor, outside: OutsideReferences): Promise<string[]> {
  const problems: string[] = [];
  const missing = async (ids: number[], lookup: (ids: number[]) => Promise<number[]>) => {
    const found = new Set<number>();
    for (let i = 0; i < ids.length; i += 1000) for (const id of await lookup(ids.slice(i, i + 1000))) found.add(id);
    return ids.filter((id) => !found.has(id));
  };
  const users = await missing([...outside.users.keys()], (ids) => storedUserIds(trx, ids));
  for (const id of users) problems.push(`${outside.users.get(id)}: unknown user ${id}`);
  const protos = await missing([...outside.item_protos.keys()], (ids) => storedProtoIds(trx, ids));
  for (const id of protos) problems.push(`${outside.item_protos.get(id)}: unknown item_proto_id ${id}`);
  const collections = await missing([...outside.collections.keys()], (ids) => storedCollectionIds(trx, ids));
  for (const id of collections) problems.push(`${outside.collections.get(id)}: unknown collection ${id}`);
  return problems;
}

const ownerIsABot = (index: number, owner: number, ownersOwner: number) =>
  `users[${index}].bot_owner: user ${owner} is a bot (of user ${ownersOwner}); a bot cannot own bots`;

/** In a merge, a bot of the file must not be owned by a stored bot, nor own stored bots the file leaves as they are. */
async function checkStoredBots(trx: Executor, users: WorldUser[]): Promise<string[]> {
  const problems: string[] = [];
  const inFile = new Set(users.map((u) => u.user_id));
  const owners = [...new Set(users.flatMap((u) => (u.bot_owner !== undefined && !inFile.has(u.bot_owner) ? [u.bot_owner] : [])))];
  const ownerIsBot = new Map<number, number>();
  for (let i = 0; i < owners.length; i += 1000)
    for (const bot of await storedBots(trx, owners.slice(i, i + 1000))) ownerIsBot.set(bot.user_id, bot.bot_owner_id);
  const bots = users.filter((u) => u.bot_owner !== undefined).map((u) => u.user_id);
  const storedBotOf = new Map<number, number>();
  for (let i = 0; i < bots.length; i += 1000)
    for (const bot of await storedBotsOf(trx, bots.slice(i, i + 1000)))
      if (!inFile.has(bot.user_id) && !storedBotOf.has(bot.bot_owner_id)) storedBotOf.set(bot.bot_owner_id, bot.user_id);
  users.forEach((u, i) => {
    if (u.bot_owner === undefined) return;
    const ownersOwner = ownerIsBot.get(u.bot_owner);
    if (ownersOwner !== undefined) problems.push(ownerIsABot(i, u.bot_owner, ownersOwner));
    const ownBot = storedBotOf.get(u.user_id);
    if (ownBot !== undefined) problems.push(`users[${i}].bot_owner: user ${u.user_id} owns the bot ${ownBot}; a bot cannot own bots`);
  });
  return problems;
}

/** In a merge, a file's e-mail or domain must not belong to a different stored user. */
async function checkUserConflicts(trx: Executor, users: WorldUser[]): Promise<string[]> {
  const problems: string[] = [];
  for (const field of ['email', 'domain'] as const) {
    const wanted = new Map<string, number>();
    users.forEach((u, i) => {
      const value = field === 'email' ? (u.email === undefined ? undefined : emailLookupKey(u.email)) : u.domain;
      if (value !== undefined) wanted.set(value, i);
    });
    const values = [...wanted.keys()];
    for (let i = 0; i < values.length; i += 1000) {
      for (const row of await usersWith(trx, field, values.slice(i, i + 1000))) {
        const index = wanted.get(row.value)!;
        if (elementAt(users, index).user_id !== row.user_id) problems.push(`users[${index}].${field}: already used by user ${row.user_id}`);
      }
    }
  }
  return problems;
}

/**
 * Trades of the file, each replacing as a whole a stored trade with its id (its items too),
 * and the moves of those trades, which replace the stored moves of the same trades.
 */
async function importTrades(trx: Executor, world: World, now: number): Promise<void> {
  const trades = world.trades ?? [];
  if (trades.length === 0) return;
  const ids = trades.map((t) => t.trade_id);
  for (let i = 0; i < ids.length; i += 1000) await deleteTradeContents(trx, ids.slice(i, i + 1000));
  await insertBatched(
    trx,
    'trades',
    trades.map((t) => ({
      trade_id: t.trade_id,
      user_id_from: t.user_id_from,
      user_id_to: t.user_id_to,
      status: t.status ?? 0,
      create_time: t.create_time ?? now,
      reaction_time: t.reaction_time ?? null,
    })),
    { keys: ['trade_id'] },
  );
  await insertBatched(
    trx,
    'trade_items',
    trades.flatMap((t) =>
      (
        [
          [t.things_from ?? [], 0, t.user_id_from],
          [t.things_to ?? [], 1, t.user_id_to],
        ] as const
      ).flatMap(([entries, side, owner]) =>
        entries.map((e) => ({
          trade_id: t.trade_id,
          item_id: e.item_id,
          side,
          user_id: e.user_id ?? owner,
          item_proto_id: e.item_proto_id,
          ts_owned: e.ts_owned ?? t.create_time ?? now,
          ts_can_trade: e.ts_can_trade ?? 0,
          data: json(e.data),
        })),
      ),
    ),
  );
  await insertBatched(
    trx,
    'trade_moves',
    (world.trade_moves ?? []).map((m) => ({ ...m })),
  );
}

interface ImportRun {
  onlyIfEmpty: boolean;
}

type Item = NonNullable<World['items']>[number];
type StoredProto = { item_proto_id: number; type: number; quality_id: number; monopoly_id: number | null };

const upsert = (keys: string[]) => ({ keys });
const keepStored = (keys: string[]) => ({ keys, ignore: true });

/** Hashes the file's passwords; runs before the transaction, since hashing is slow and runs on the thread pool. */
async function hashPasswords(users: WorldUser[]): Promise<(string | null)[]> {
  const hasher = new PasswordHasher();
  return Promise.all(users.map((u) => (u.password !== undefined ? hasher.hash(u.password) : Promise.resolve(u.password_hash ?? null))));
}

/** Replace: empties the world, noting who had open sessions. Merge: checks the file against what is stored. */
async function prepareStoredWorld(
  trx: Executor,
  dialect: DialectName,
  replace: boolean,
  { world, outside }: { world: World; outside: OutsideReferences },
  endedSessionsOf: Set<number>,
): Promise<void> {
  const users = world.users ?? [];
  if (replace) {
    for (const userId of await usersWithOpenSessions(trx)) endedSessionsOf.add(userId);
    await emptyWorldTables(trx);
  } else {
    const fileRelations = relations(world);
    await lockUsersInIdOrder(trx, dialect, [
      ...users.map((u) => u.user_id),
      ...fileRelations.flatMap((r) => [r.a, r.b]),
      ...lobbyUsers(world),
    ]);
    const problems = [
      ...(await checkOutsideReferences(trx, outside)),
      ...(await checkUserConflicts(trx, users)),
      ...(await checkStoredBots(trx, users)),
      ...(await checkStoredRelations(trx, fileRelations)),
      ...(await storedLobbyProblems(trx, dialect, world)),
    ];
    if (problems.length > 0) throw invalid(problems);
  }
}

/**
 * Locks the stored users' rows in id order, as every change of the social graph locks its two
 * users (PostgreSQL): what the merge reads of their relations stays true until it commits.
 */
async function lockUsersInIdOrder(trx: Executor, dialect: DialectName, userIds: number[]): Promise<void> {
  const ids = [...new Set(userIds)].sort((a, b) => a - b);
  for (let i = 0; i < ids.length; i += 1000) await dialectAdapter.lockUsers(trx, dialect, ids.slice(i, i + 1000));
}

/** A friendship, block or friend request of the file: users a and b, where it is given. */
interface FileRelation {
  kind: 'friendship' | 'block' | 'request';
  where: string;
  a: number;
  b: number;
}

function relations(world: World): FileRelation[] {
  return [
    ...(world.friends ?? []).map((f, i) => {
      const [a, b] = friendPair(f);
      return { kind: 'friendship' as const, where: `friends[${i}]`, a, b };
    }),
    ...(world.blocks ?? []).map((b, i) => ({ kind: 'block' as const, where: `blocks[${i}]`, a: b.user_id, b: b.blocked_user_id })),
    ...(world.friend_requests ?? []).map((r, i) => ({ kind: 'request' as const, where: `friend_requests[${i}]`, a: r.from, b: r.to })),
  ];
}

/**
 * In a merge, the file's friendships, blocks and friend requests must agree with the stored
 * ones as they must with each other: no friendship or request beside a block, no request
 * beside a friendship, no two requests crossing. The stored graph is read in three queries
 * per thousand pairs of users.
 */
async function checkStoredRelations(trx: Executor, fileRelations: FileRelation[]): Promise<string[]> {
  if (fileRelations.length === 0) return [];
  const pairs = new Map<string, UserPair>();
  for (const { a, b } of fileRelations) {
    pairs.set(`${a}>${b}`, [a, b]);
    pairs.set(`${b}>${a}`, [b, a]);
  }
  const stored = async (table: 'friendships' | 'blocks' | 'friend_requests') =>
    new Set((await storedPairs(trx, table, [...pairs.values()])).map(([a, b]) => `${a}>${b}`));
  const friends = await stored('friendships');
  const blocks = await stored('blocks');
  const requests = await stored('friend_requests');
  const problems: string[] = [];
  for (const { kind, where, a, b } of fileRelations) {
    const blocker = blocks.has(`${a}>${b}`) ? [a, b] : blocks.has(`${b}>${a}`) ? [b, a] : undefined;
    const asker = requests.has(`${a}>${b}`) ? [a, b] : requests.has(`${b}>${a}`) ? [b, a] : undefined;
    if (kind === 'friendship') {
      if (blocker) problems.push(`${where}: user ${blocker[0]} blocks user ${blocker[1]} in the stored world (a block ends a friendship)`);
      if (asker)
        problems.push(
          `${where}: user ${asker[0]} has asked user ${asker[1]} to be friends in the stored world (a request ends in a friendship)`,
        );
    } else if (kind === 'block') {
      if (friends.has(`${a}>${b}`))
        problems.push(`${where}: users ${a} and ${b} are friends in the stored world (a block ends a friendship)`);
      if (asker)
        problems.push(`${where}: user ${asker[0]} has asked user ${asker[1]} to be friends in the stored world (a block ends requests)`);
    } else {
      if (friends.has(`${a}>${b}`)) problems.push(`${where}: users ${a} and ${b} are already friends in the stored world`);
      if (blocker) problems.push(`${where}: user ${blocker[0]} blocks user ${blocker[1]} in the stored world`);
      if (requests.has(`${b}>${a}`))
        problems.push(`${where}: requests cross (${b} already asked ${a} in the stored world); make them friends instead`);
    }
  }
  return problems;
}

async function importCatalogue(trx: Executor, world: World): Promise<void> {
  // Without qualities or item types in the file, the defaults fill in whatever is missing.
  await insertBatched(
    trx,
    'qualities',
    (world.qualities ?? DEFAULT_QUALITIES).map((q) => ({ ...q })),
    world.qualities ? upsert(['quality_id']) : keepStored(['quality_id']),
  );
  await insertBatched(
    trx,
    'item_types',
    (world.item_types ?? DEFAULT_ITEM_TYPES).map((t) => ({ ...t })),
    world.item_types ? upsert(['type']) : keepStored(['type']),
  );
  await insertBatched(
    trx,
    'collections',
    (world.collections ?? []).map((c) => ({ ...c })),
    upsert(['collection_id']),
  );
  await insertBatched(
    trx,
    'item_protos',
    (world.item_protos ?? []).map((p) => ({
      item_proto_id: p.item_proto_id,
      type: p.type,
      quality_id: p.quality_id ?? 0,
      title: p.title,
      description: p.description ?? '',
      image: p.image ?? null,
      collection_id: p.collection_id ?? null,
      monopoly_id: p.monopoly_id ?? null,
      sticker_group_id: p.sticker_group_id ?? null,
      prices: json(p.prices),
      key_item_proto_id: p.key_item_proto_id ?? null,
      case_item_proto_ids: json(p.case_item_proto_ids),
      drop_list: json(
        p.drop?.map((d) => ({
          item_proto_id: d.item_proto_id,
          ...(d.is_secondary !== undefined ? { is_secondary: bit(d.is_secondary) } : {}),
          ...(d.is_rare !== undefined ? { is_rare: bit(d.is_rare) } : {}),
          ...(d.weight !== undefined ? { weight: d.weight } : {}),
        })),
      ),
      twin_item_proto_ids: json(p.twin_item_proto_ids),
      can_craft: p.can_craft === undefined ? 1 : bit(p.can_craft),
      craft_result: p.craft_result === undefined ? 1 : bit(p.craft_result),
      item_proto_status: p.item_proto_status ?? null,
      extra: json(p.extra),
    })),
    upsert(['item_proto_id']),
  );
  const keyProblems = keyAndCaseProblems(world.item_protos ?? [], await storedKeysAndCases(trx));
  if (keyProblems.length > 0) throw invalid(keyProblems);
}

/**
 * Keys and cases of the catalogue as written (the file's prototypes and the stored ones) that
 * contradict each other, for the file's prototypes. A case opens with the key its
 * key_item_proto_id names (inventory.open reads nothing else); a key's case_item_proto_ids
 * lists only cases that name it. It may leave some out: a new case is written before the key
 * that will list it.
 */
function keyAndCaseProblems(
  fileProtos: WorldItemProto[],
  catalogue: { item_proto_id: number; key_item_proto_id: number | null; case_item_proto_ids: string | null }[],
): string[] {
  if (fileProtos.length === 0) return [];
  const inFile = new Map(fileProtos.map((p, i) => [p.item_proto_id, `item_protos[${i}]`]));
  const keyOf = new Map(catalogue.map((p) => [p.item_proto_id, p.key_item_proto_id]));
  const problems: string[] = [];
  for (const { item_proto_id: key, case_item_proto_ids: listed } of catalogue) {
    if (listed === null) continue;
    for (const caseId of JSON.parse(listed) as number[]) {
      const caseKey = keyOf.get(caseId) ?? null;
      if (caseKey === key) continue;
      const opens = caseKey === null ? 'opens without a key' : `opens with key ${caseKey}`;
      if (inFile.has(key)) problems.push(`${inFile.get(key)}.case_item_proto_ids: case ${caseId} ${opens}, not with this key ${key}`);
      else if (inFile.has(caseId))
        problems.push(`${inFile.get(caseId)}: key ${key} lists this case in its case_item_proto_ids, but it ${opens}`);
    }
  }
  return problems;
}

/** User columns a merge keeps from the stored user when the entry leaves them out, with their defaults. */
const KEPT_USER_COLUMNS = {
  email_verified: 0,
  trades_income: 1,
  trades_income_from_friends: 0,
  trades_income_gifts: 1,
  trades_income_gifts_autoaccept: 0,
  last_seen: 0,
} as const;
type KeptUserColumn = keyof typeof KEPT_USER_COLUMNS;
const keptUserColumns = Object.keys(KEPT_USER_COLUMNS) as KeptUserColumn[];

/** In a merge, the users whose stored recovery codes go: those given anew, and those of a secret the entry changes or removes. */
async function recoveryCodesReplaced(trx: Executor, db: Database, users: WorldUser[]): Promise<number[]> {
  const unchanged = users.filter((u) => u.recovery_code_hashes === undefined && u.totp_secret !== undefined);
  const stored = new Map<number, string>();
  const ids = unchanged.map((u) => u.user_id);
  for (let i = 0; i < ids.length; i += 1000)
    for (const row of await storedTotpSecrets(trx, ids.slice(i, i + 1000))) stored.set(row.user_id, db.secrets.open(row.totp_secret));
  return users.filter((u) => u.recovery_code_hashes !== undefined || u.totp_secret !== stored.get(u.user_id)).map((u) => u.user_id);
}

async function importUsers(
  trx: Executor,
  db: Database,
  users: WorldUser[],
  passwordHashes: (string | null)[],
  options: { now: number; replace: boolean },
  endedSessionsOf: Set<number>,
): Promise<void> {
  const { now, replace } = options;
  if (!replace) {
    const cleared = await recoveryCodesReplaced(trx, db, users);
    for (let i = 0; i < cleared.length; i += 1000) await deleteUnusedRecoveryCodes(trx, cleared.slice(i, i + 1000));
  }
  // On a merge, a stored user keeps the columns its entry leaves out.
  const rows = users.map((u, i) => ({
    // A merge never lowers the last step used (raised below), so no code is accepted twice.
    keep: replace ? [] : [...keptUserColumns.filter((c) => u[c] === undefined), 'totp_last_step'],
    row: {
      user_id: u.user_id,
      email: u.email === undefined ? null : emailLookupKey(u.email),
      password_hash: passwordHashes[i],
      totp_secret: u.totp_secret === undefined ? null : db.secrets.seal(u.totp_secret),
      totp_last_step: u.totp_last_step ?? null,
      domain: u.domain ?? null,
      ...nickColumns(u.nick),
      nicks_old: JSON.stringify(u.nicks_old ?? []),
      gender: u.gender ?? 0,
      avatar: u.avatar ?? '',
      avatar_key: u.avatar_key ?? null,
      profile_cover: u.profile_cover ?? null,
      approved: bit(u.approved),
      vip: bit(u.vip),
      moderator: bit(u.moderator),
      superadmin: bit(u.superadmin),
      rank: rankColumn(u.rank),
      games: u.games ?? 0,
      games_wins: u.games_wins ?? 0,
      xp: u.xp ?? 0,
      xp_level: u.xp_level ?? 0,
      global_ban: bit(u.global_ban),
      captcha_always: u.captcha === 'always' ? 1 : 0,
      inventory_privacy: u.inventory_privacy ?? 'everyone',
      im_privacy: u.messages_privacy ?? 'everyone',
      muted_until: u.muted_until ?? null,
      bot_owner_id: u.bot_owner ?? null,
      always_online: bit(u.online),
      created_at: u.created_at ?? now,
      ...Object.fromEntries(
        keptUserColumns.map((c) => [c, u[c] === undefined ? KEPT_USER_COLUMNS[c] : c === 'last_seen' ? u.last_seen : bit(u[c])]),
      ),
    },
  }));
  await upsertKeeping(trx, 'users', rows, ['user_id']);
  if (!replace) for (const u of users) if (u.totp_last_step !== undefined) await raiseTotpLastStep(trx, u.user_id, u.totp_last_step);
  await insertBatched(
    trx,
    'recovery_codes',
    users.flatMap((u) => (u.recovery_code_hashes ?? []).map((code_hash) => ({ user_id: u.user_id, code_hash, used_at: null }))),
    // A used recovery code stays used, even when an older file merged in lists it as unused.
    { keys: ['user_id', 'code_hash'], ignore: true },
  );
  // Banned users lose every session they had.
  const banned = users.filter((u) => bit(u.global_ban) === 1).map((u) => u.user_id);
  if (banned.length > 0) {
    const signedIn = await usersWithOpenSessions(trx, banned);
    await revokeSessionsOf(trx, banned, now);
    for (const userId of signedIn) endedSessionsOf.add(userId);
  }
}

/** Problems with the file's equipment: a slot's item type, a card's monopoly, two items in one slot of a board. */
function equipmentProblems(items: Item[], protoById: Map<number, StoredProto>): string[] {
  const problems: string[] = [];
  const equipSlots = new Set<string>();
  items.forEach((item, i) => {
    if (!item.equip) return;
    const proto = protoById.get(item.item_proto_id)!;
    const where = `items[${i}].equip`;
    const slot = item.equip.slot;
    if (proto.type !== SLOT_TYPES[slot])
      problems.push(
        `${where}: slot ${slot} takes items of type ${SLOT_TYPES[slot]}, item_proto_id ${proto.item_proto_id} is of type ${proto.type}`,
      );
    if ('game' in item.equip) {
      if (slot === 'cards') {
        const monopoly = item.equip.monopoly_id ?? proto.monopoly_id;
        if (monopoly === null) problems.push(`${where}: the card's prototype has no monopoly_id, so monopoly_id is required`);
        else if (proto.monopoly_id !== null && monopoly !== proto.monopoly_id)
          problems.push(`${where}: monopoly_id ${monopoly} differs from the prototype's ${proto.monopoly_id}`);
      } else {
        const key = `${item.user_id}:${item.equip.game}:${slot}`;
        if (equipSlots.has(key)) problems.push(`${where}: user ${item.user_id} already has a ${slot} on board ${item.equip.game}`);
        equipSlots.add(key);
      }
    }
  });
  return problems;
}

/** Writes the items and their equipment; answers how many items were written, and the open trades a replaced item made invalid. */
async function importItems(
  trx: Executor,
  db: Database,
  world: World,
  now: number,
  replace: boolean,
): Promise<{ written: number; invalidatedTrades: InvalidatedTrade[]; replacedItems: number[] }> {
  // Items: explicit ids first so generated ones never collide with them.
  const protoRows = await protoClasses(trx);
  const protoById = new Map(protoRows.map((p) => [p.item_proto_id, p]));
  const items = world.items ?? [];
  const equipProblems = equipmentProblems(items, protoById);
  if (equipProblems.length > 0) throw invalid(equipProblems);

  const explicit = items.filter((i) => i.item_id !== undefined);
  const generated = items.filter((i) => i.item_id === undefined);
  const itemRow = (item: Item, itemId?: number): Insertable<ItemsTable> => {
    const proto = protoById.get(item.item_proto_id)!;
    return {
      ...(itemId !== undefined ? { item_id: itemId } : {}),
      user_id: item.user_id,
      item_proto_id: item.item_proto_id,
      type: proto.type,
      quality_id: proto.quality_id,
      ts_owned: item.ts_owned ?? now,
      ts_can_trade: item.ts_can_trade ?? 0,
      state: 'owned',
      ended_at: null,
      craft_id: null,
      data: json(item.data),
    };
  };
  // A stored item with the id of a file entry is replaced as a whole: removed, then written
  // anew (a plain insert, so the triggers that keep inventory_counts see ordinary writes).
  const explicitIds = explicit.map((i) => i.item_id!);
  for (let i = 0; i < explicitIds.length; i += 1000) {
    const ids = explicitIds.slice(i, i + 1000);
    await deleteItemsAndEquipment(trx, ids);
  }
  await insertBatched(
    trx,
    'items',
    explicit.map((i) => itemRow(i, i.item_id)),
  );
  // A stored item the file replaces has moved: open trades holding it can no longer complete.
  const invalidatedTrades = replace ? [] : await invalidateTradesHoldingAt(trx, db.dialect, explicitIds, { now, cutoff: 0 });
  await advanceSequences(trx, db.dialect);
  const equipRows: Record<string, unknown>[] = [];
  const equipOf = (item: Item, itemId: number) => {
    if (!item.equip) return;
    const proto = protoById.get(item.item_proto_id)!;
    equipRows.push({
      item_id: itemId,
      user_id: item.user_id,
      slot: item.equip.slot,
      game: 'game' in item.equip ? item.equip.game : null,
      monopoly_id: item.equip.slot === 'cards' ? (item.equip.monopoly_id ?? proto.monopoly_id) : null,
    });
  };
  explicit.forEach((i) => equipOf(i, i.item_id!));
  let itemCount = explicit.length;
  for (const item of generated) {
    const copies = item.copies ?? 1;
    const rows = Array.from({ length: copies }, () => itemRow(item));
    const batch = 1000;
    for (let i = 0; i < rows.length; i += batch) {
      const inserted = await insertItems(trx, rows.slice(i, i + batch));
      if (item.equip && i === 0) equipOf(item, elementAt(inserted, 0));
    }
    itemCount += copies;
  }
  await insertBatched(trx, 'equipped', equipRows, upsert(['item_id']));
  return { written: itemCount, invalidatedTrades, replacedItems: explicitIds };
}

async function importRelations(trx: Executor, world: World, now: number): Promise<void> {
  const friendships = (world.friends ?? []).flatMap((f) => {
    const [a, b, since] = Array.isArray(f) ? [f[0], f[1], now] : [f.user_id, f.friend_id, f.since ?? now];
    return [
      { user_id: a, friend_id: b, since },
      { user_id: b, friend_id: a, since },
    ];
  });
  await insertBatched(trx, 'friendships', friendships, upsert(['user_id', 'friend_id']));
  await insertBatched(
    trx,
    'friend_requests',
    (world.friend_requests ?? []).map((r) => ({ from_user_id: r.from, to_user_id: r.to, ts: r.ts ?? now })),
    upsert(['from_user_id', 'to_user_id']),
  );
  await insertBatched(
    trx,
    'blocks',
    (world.blocks ?? []).map((b) => ({ user_id: b.user_id, blocked_user_id: b.blocked_user_id, ts: b.ts ?? now })),
    upsert(['user_id', 'blocked_user_id']),
  );
}

const givesUses = (p: WorldPromocode) => p.uses !== undefined || p.used_by !== undefined;

/** Codes, each replacing a stored one with its text; their uses and redemptions where the entry gives them. */
async function importPromocodes(trx: Executor, world: World, now: number): Promise<void> {
  const codes = world.promocodes ?? [];
  // On a merge, a stored code keeps the columns its entry leaves out.
  await upsertKeeping(
    trx,
    'promocodes',
    codes.map((p) => ({
      keep: [
        ...(p.created_at === undefined ? ['created_at'] : []),
        ...(givesUses(p) ? [] : ['uses']),
        ...(p.money === undefined ? ['money'] : []),
      ],
      row: {
        code: p.code.toUpperCase(),
        item_proto_ids: JSON.stringify(p.item_proto_ids),
        max_uses: p.max_uses ?? null,
        ts_expires: p.ts_expires ?? null,
        disabled: bit(p.disabled),
        created_at: p.created_at ?? now,
        uses: p.uses ?? p.used_by?.length ?? 0,
        money: p.money ?? 0,
      },
    })),
    ['code'],
  );

  // A redemption is never undone, not even by an older file merged in: its user cannot redeem
  // the code again, and the code's uses count it.
  const described = codes.filter(givesUses);
  await insertBatched(
    trx,
    'promocode_uses',
    described.flatMap((p) =>
      (p.used_by ?? []).map((u) => ({
        code: p.code.toUpperCase(),
        user_id: u.user_id,
        ts: u.ts ?? now,
        item_ids: JSON.stringify(u.item_ids ?? []),
      })),
    ),
    { keys: ['code', 'user_id'], ignore: true },
  );
  const counted = described.map((p) => p.code.toUpperCase());
  for (let i = 0; i < counted.length; i += 1000) await raiseUsesToRedemptions(trx, counted.slice(i, i + 1000));
}

/** Apps, each replacing a stored one but for its secret, which a file never holds. */
async function importApps(trx: Executor, world: World, now: number): Promise<void> {
  const rows = (world.apps ?? []).map((a) => ({
    keep: ['secret_hash', 'created_at'],
    row: {
      app_id: a.app_id,
      name: a.name,
      secret_hash: null,
      redirect_uris: JSON.stringify([...new Set(a.redirect_uris)]),
      scopes: a.scopes ?? 0,
      public_client: bit(a.public_client),
      active: a.active === undefined ? 1 : bit(a.active),
      created_at: now,
    },
  }));
  await upsertKeeping(trx, 'oauth_apps', rows, ['app_id']);
}

/** Missions, each replacing a stored one with its id and, with it, its progress. */
async function importMissions(trx: Executor, world: World, now: number): Promise<void> {
  const missions = world.missions ?? [];
  if (missions.length === 0) return;
  await insertBatched(
    trx,
    'missions',
    missions.map((m) => ({
      mission_id: m.mission_id,
      name: m.name,
      goal: m.goal,
      target: m.target,
      reward_type: m.reward_type,
      reward: m.reward,
      active: m.active ?? 1,
      ts_created: m.ts_created ?? now,
    })),
    upsert(['mission_id']),
  );
  await deleteMissionProgress(
    trx,
    missions.map((m) => m.mission_id),
  );
  await insertBatched(
    trx,
    'mission_progress',
    missions.flatMap((m) =>
      (m.progress ?? []).map((p) => ({
        mission_id: m.mission_id,
        user_id: p.user_id,
        week: p.week,
        counter: p.counter,
        ts_rewarded: p.ts_rewarded ?? null,
      })),
    ),
  );
}

/**
 * Private messages of the file, each replacing a stored one with its id, with their places in
 * the timeline; then every conversation's newest message and unread count are made to agree.
 */
async function importPrivateMessages(trx: Executor, world: World, now: number): Promise<void> {
  const messages = world.private_messages ?? [];
  if (messages.length === 0) return;
  const pair = (m: (typeof messages)[number]) => ({ user_low: Math.min(m.from, m.to), user_high: Math.max(m.from, m.to) });
  await insertBatched(
    trx,
    'im_events',
    messages.map((m) => ({ event_id: m.msg_id, type: 1, msg_id: null, ...pair(m), ts: m.ts_created ?? now })),
    upsert(['event_id']),
  );
  await insertBatched(
    trx,
    'im_messages',
    messages.map((m) => ({
      msg_id: m.msg_id,
      sender_id: m.from,
      receiver_id: m.to,
      ...pair(m),
      text: m.text,
      ts_created: m.ts_created ?? now,
      is_read: m.is_read ?? 0,
      send_id: null,
      deleted_at: null,
    })),
    upsert(['msg_id']),
  );
  await rebuildPrivateDialogs(trx);
}

async function importChat(trx: Executor, world: World, now: number, replace: boolean): Promise<void> {
  const status = world.gchat?.status;
  if (status || replace) {
    await setChatState(trx, {
      closed: status?.closed ? 1 : 0,
      slowmode: status?.slowmode ? 1 : 0,
      emoteonly: status?.emoteonly ? 1 : 0,
      ...(status?.slowmode_interval !== undefined ? { slowmode_interval: status.slowmode_interval } : {}),
    });
  }
  const messages = world.gchat?.messages ?? [];
  const messageIds = new MessageIds();
  await insertBatched(
    trx,
    'chat_messages',
    messages.map((m, i) => ({
      msg_id: m.msg_id ?? messageIds.next((m.ts ?? now) * 1000 + i),
      type: m.type,
      user_id: m.user_id,
      ts: m.ts ?? now,
      text: m.type === 1 ? (m.text ?? '') : null,
      user_ids_mentioned: m.type === 1 ? JSON.stringify(m.user_ids_mentioned ?? []) : null,
      case_item_proto_id: m.type === 2 ? m.case_item_proto_id! : null,
      drop_item_proto_id: m.type === 2 ? m.drop_item_proto_id! : null,
      user_id_receiver: m.type === 3 ? m.user_id_receiver! : null,
      item_proto_id: m.type === 3 ? m.item_proto_id! : null,
      item_proto_ids: m.type === 4 ? JSON.stringify(m.item_proto_ids) : null,
      deleted_at: null,
    })),
    upsert(['msg_id']),
  );
}

/** What the database refused says which stored entries conflict; anything else is ours, and its text stays in the log. */
function importFailure(error: unknown): unknown {
  if (error instanceof WorldError) return error;
  if (isConstraintViolation(error))
    return new WorldError(
      'world import failed, nothing was changed: its entries conflict with the stored world (a reference or a unique value)',
      { cause: error },
    );
  return error;
}

/** Runs the import's writes, turning what the database refuses of them into the file's fault. */
async function explainingConflicts<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    throw importFailure(error);
  }
}

async function runImport(db: Database, input: unknown, options: ImportOptions, run: ImportRun): Promise<ImportSummary | null> {
  const { world, outside } = validateWorld(input);
  const replace = options.mode === 'replace';
  const { now } = options;
  if (replace) {
    const problems = parseProblems(outside);
    if (problems.length > 0) throw invalid(problems);
  }
  const users = world.users ?? [];
  const passwordHashes = await hashPasswords(users);

  let itemCount = 0;
  let imported = true;
  const endedSessionsOf = new Set<number>();
  let invalidatedTrades: InvalidatedTrade[] = [];
  // The transaction may be shared (with an admin action's audit entry): only the import's own writes are the file's fault.
  await (options.inTransaction ?? ownTransaction(db))((trx) =>
    explainingConflicts(async () => {
      if (run.onlyIfEmpty) {
        // Several processes may start on one new database at once: one imports, the others see it done.
        await lockWorldImport(trx, db.dialect);
        if (!(await isEmptyWorld(trx))) {
          imported = false;
          return;
        }
      }
      // Held to the end: the import moves the msg_seq sequence, and a replace removes users a message being stored may name.
      await lockChatWriters(trx, db.dialect);
      await prepareStoredWorld(trx, db.dialect, replace, { world, outside }, endedSessionsOf);
      await importCatalogue(trx, world);
      await importUsers(trx, db, users, passwordHashes, { now, replace }, endedSessionsOf);
      let replacedItems: number[];
      ({ written: itemCount, invalidatedTrades, replacedItems } = await importItems(trx, db, world, now, replace));
      await importMarket(trx, db.dialect, world, now, replace ? [] : replacedItems);
      await importRelations(trx, world, now);
      await importPromocodes(trx, world, now);
      await importApps(trx, world, now);
      await importMissions(trx, world, now);
      await importTrades(trx, world, now);
      await importChat(trx, world, now, replace);
      await importPrivateMessages(trx, world, now);
      await importLobby(trx, db.dialect, world, now, replace);
      await advanceSequences(trx, db.dialect);
      if (replace || hasMarket(world)) {
        const problems = await checkMarket(trx);
        if (problems.length > 0) throw invalid(problems.map((problem) => `the market does not add up: ${problem}`));
      }
    }),
  );
  if (!imported) return null;

  return {
    users: users.length,
    item_protos: (world.item_protos ?? []).length,
    items: itemCount,
    friendships: (world.friends ?? []).length,
    messages: (world.gchat?.messages ?? []).length,
    promocodes: (world.promocodes ?? []).length,
    endedSessionsOf: [...endedSessionsOf].sort((a, b) => a - b),
    invalidatedTrades,
    wrote: replace || hasEntries(world),
  };
}

const MARKET_SECTIONS = ['balances', 'ledger', 'listings', 'market_sales', 'market_freezes'] as const;

/** Whether a file gives any of the market's sections. */
const hasMarket = (world: World) => MARKET_SECTIONS.some((section) => world[section] !== undefined);

/** A listing without ts_expires lasts the default --market-ttl. */
const DEFAULT_LISTING_DAYS = 30;

/**
 * The market's sections: balances, transfers (each replacing a stored one with its id, entries
 * and all), listings, sales and freezes. In a merge, the stored listing of an item the file
 * replaces or lists anew ends first. Whether it all adds up is checked once everything is written.
 */
async function importMarket(trx: Executor, dialect: DialectName, world: World, now: number, replacedItems: number[]): Promise<void> {
  const listings = world.listings ?? [];
  await endListingsOf(trx, [...new Set([...replacedItems, ...listings.map((l) => l.item_id)])]);
  await insertBatched(
    trx,
    'balances',
    (world.balances ?? []).map((b) => ({ user_id: b.user_id, balance: b.balance })),
    upsert(['user_id']),
  );
  const transfers = world.ledger ?? [];
  await deleteEntriesOf(
    trx,
    transfers.map((t) => t.transfer_id),
  );
  await insertBatched(
    trx,
    'ledger_transfers',
    transfers.map((t) => ({
      transfer_id: t.transfer_id,
      ts: t.ts ?? now,
      kind: t.kind,
      item_id: t.item_id ?? null,
      item_proto_id: t.item_proto_id ?? null,
      listing_id: t.listing_id ?? null,
      reason: t.reason ?? null,
    })),
    upsert(['transfer_id']),
  );
  const entries = transfers.flatMap((t) =>
    t.entries.map((e) => ({
      ...(e.entry_id !== undefined ? { entry_id: e.entry_id } : {}),
      transfer_id: t.transfer_id,
      account_id: e.account_id,
      kind: e.kind,
      amount: e.amount,
      balance_after: e.balance_after ?? null,
    })),
  );
  // Numbered entries first, so that the others are numbered after them.
  await insertBatched(
    trx,
    'ledger_entries',
    entries.filter((e) => 'entry_id' in e),
  );
  await advanceSequences(trx, dialect);
  await insertBatched(
    trx,
    'ledger_entries',
    entries.filter((e) => !('entry_id' in e)),
  );

  const items = new Map(
    (
      await itemsToList(
        trx,
        listings.map((l) => l.item_id),
      )
    ).map((item) => [item.item_id, item]),
  );
  const problems: string[] = [];
  listings.forEach((l, i) => {
    const item = items.get(l.item_id);
    const where = `listings[${i}].item_id`;
    if (!item) problems.push(`${where}: unknown item ${l.item_id}`);
    else if (item.state !== 'owned') problems.push(`${where}: item ${l.item_id} is ${item.state}, not in its owner's inventory`);
    else if (item.equipped) problems.push(`${where}: item ${l.item_id} is equipped (an item on sale cannot be)`);
  });
  if (problems.length > 0) throw invalid(problems);
  await markItemsListed(
    trx,
    listings.map((l) => l.item_id),
  );
  const listingRow = (l: (typeof listings)[number]) => {
    const item = items.get(l.item_id)!;
    const listed = l.ts_listed ?? now;
    return {
      ...(l.listing_id !== undefined ? { listing_id: l.listing_id } : {}),
      item_id: l.item_id,
      seller_id: item.user_id,
      item_proto_id: item.item_proto_id,
      type: item.type,
      quality_id: item.quality_id,
      price: l.price,
      ts_listed: listed,
      ts_expires: l.ts_expires ?? listed + DEFAULT_LISTING_DAYS * 86400,
    };
  };
  await insertBatched(trx, 'market_listings', listings.filter((l) => l.listing_id !== undefined).map(listingRow), upsert(['listing_id']));
  await advanceSequences(trx, dialect);
  await insertBatched(trx, 'market_listings', listings.filter((l) => l.listing_id === undefined).map(listingRow));
  await insertBatched(
    trx,
    'market_sales',
    (world.market_sales ?? []).map((m) => ({ ...m, ts: m.ts ?? now })),
    upsert(['sale_id']),
  );
  await insertBatched(
    trx,
    'market_freezes',
    (world.market_freezes ?? []).map((f) => ({ user_id: f.user_id, ts: f.ts ?? now, reason: f.reason })),
    upsert(['user_id']),
  );
}

/** Whether a file gives anything to write. */
function hasEntries(world: World): boolean {
  const { $schema: _schema, gchat, ...sections } = world;
  return Object.values(sections).some((list) => list.length > 0) || gchat?.status !== undefined || (gchat?.messages ?? []).length > 0;
}

/** Imports a world in one transaction: a bad file changes nothing. */
export async function importWorld(db: Database, input: unknown, options: ImportOptions): Promise<ImportSummary> {
  return (await runImport(db, input, options, { onlyIfEmpty: false }))!;
}

/**
 * Imports a world into a new installation: does nothing (and answers null) when the database
 * already holds users or prototypes, also when another process imports at the same moment.
 */
export async function importWorldIfEmpty(db: Database, input: unknown, now: number): Promise<ImportSummary | null> {
  return runImport(db, input, { mode: 'replace', now }, { onlyIfEmpty: true });
}

/** True when the database holds no users and no prototypes (a new installation). */
export async function isEmptyWorld(db: Database | Executor): Promise<boolean> {
  return !(await hasUsersOrProtos('kysely' in db ? db.kysely : db));
}
