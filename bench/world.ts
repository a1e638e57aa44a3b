import { createHash } from 'node:crypto';
import type { World, WorldChatMessage, WorldItem, WorldItemProto, WorldUser } from '../src/world/schema.js';

/** How big the generated world is. */
export interface WorldScale {
  name: string;
  users: number;
  protos: number;
  collections: number;
  /** Owned items in total, special inventories included. */
  items: number;
  /** Users holding exactly `bigInventory` items of every kind (read scenarios). */
  bigUsers: number;
  bigInventory: number;
  /** Users holding `craftInventory` craftable cards of one class (craft scenario). */
  craftUsers: number;
  craftInventory: number;
  /** Users holding `openInventory` cases and as many of their keys (opening scenario). */
  openUsers: number;
  openInventory: number;
  /** Users holding exactly 100 items. */
  hundredUsers: number;
  /** Pairs of users who trade (trade scenario), each of both holding `tradeInventory` tradable items. */
  tradePairs: number;
  tradeInventory: number;
  /** Users with `friendsPerHeavyUser` friends each. */
  friendHeavyUsers: number;
  friendsPerHeavyUser: number;
  /** Friendships between ordinary users. */
  randomFriendships: number;
  messages: number;
}

export const FULL_SCALE: WorldScale = {
  name: 'full',
  users: 100_000,
  protos: 5_000,
  collections: 120,
  items: 1_000_000,
  bigUsers: 10,
  bigInventory: 10_000,
  craftUsers: 20,
  craftInventory: 10_000,
  openUsers: 10,
  openInventory: 5_000,
  hundredUsers: 10,
  tradePairs: 1_000,
  tradeInventory: 30,
  friendHeavyUsers: 20,
  friendsPerHeavyUser: 500,
  randomFriendships: 100_000,
  messages: 1_000,
};

export const QUICK_SCALE: WorldScale = {
  name: 'quick',
  users: 5_000,
  protos: 1_000,
  collections: 40,
  items: 60_000,
  bigUsers: 2,
  bigInventory: 10_000,
  craftUsers: 4,
  craftInventory: 3_000,
  openUsers: 4,
  openInventory: 1_500,
  hundredUsers: 4,
  tradePairs: 100,
  tradeInventory: 30,
  friendHeavyUsers: 4,
  friendsPerHeavyUser: 500,
  randomFriendships: 5_000,
  messages: 300,
};

/** The password of every generated account. */
export const BENCH_PASSWORD = 'bench-password-2026';
/** "Now" of the generated world: every time in it lies before this instant. */
export const WORLD_NOW = 1_767_225_600; // 2026-01-01T00:00:00Z

/** Card class consumed by the craft scenario (common), and the search filters. */
export const CRAFT_TYPE = 0;
export const CRAFT_QUALITY = 1;
export const SEARCH_FILTER = { type: 0, quality_id: 2 } as const;

/** Deterministic pseudo-random numbers (sfc32 seeded from a string). */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: string) {
    const h = createHash('sha256').update(seed).digest();
    this.a = h.readUInt32LE(0);
    this.b = h.readUInt32LE(4);
    this.c = h.readUInt32LE(8);
    this.d = h.readUInt32LE(12);
    for (let i = 0; i < 16; i++) this.next();
  }

  /** A float in [0, 1). */
  next(): number {
    this.a >>>= 0;
    this.b >>>= 0;
    this.c >>>= 0;
    this.d >>>= 0;
    let t = (this.a + this.b) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.d = (this.d + 1) | 0;
    t = (t + this.d) | 0;
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)];
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  /** `count` distinct integers in [min, max]. */
  distinct(count: number, min: number, max: number, exclude?: Set<number>): number[] {
    const seen = new Set<number>();
    while (seen.size < count) {
      const v = this.int(min, max);
      if (!exclude?.has(v)) seen.add(v);
    }
    return [...seen];
  }

  bytes(n: number): Uint8Array {
    return Uint8Array.from({ length: n }, () => Math.floor(this.next() * 256));
  }
}

/** A contiguous range of item ids owned by one user. */
export interface ItemRange {
  userId: number;
  firstItemId: number;
  count: number;
}

/** The accounts and items the scenarios use, known without generating the whole world. */
export interface WorldRoles {
  scale: WorldScale;
  seed: string;
  craftUsers: ItemRange[];
  bigUsers: ItemRange[];
  hundredUsers: ItemRange[];
  /** Each range: `count` cases, then `count` keys of them right after. */
  openUsers: ItemRange[];
  /** Offering and receiving side of each trading pair, `tradeInventory` items each. */
  tradePairs: { from: ItemRange; to: ItemRange }[];
  friendHeavyUsers: number[];
  /** Ordinary users (ids) that sign in and view. */
  firstOrdinaryUser: number;
  /** Item ids from here on belong to ordinary users. */
  firstOrdinaryItem: number;
}

/**
 * Special accounts take the lowest ids in a fixed order (craft, big, hundred, friend-heavy, openers, traders);
 * their items take the lowest item ids in the same order, one contiguous range per user.
 */
export function worldRoles(seed: string, scale: WorldScale): WorldRoles {
  let userId = 1;
  let itemId = 1;
  const ranges = (users: number, perUser: number): ItemRange[] =>
    Array.from({ length: users }, () => {
      const range = { userId: userId++, firstItemId: itemId, count: perUser };
      itemId += perUser;
      return range;
    });
  const craftUsers = ranges(scale.craftUsers, scale.craftInventory);
  const bigUsers = ranges(scale.bigUsers, scale.bigInventory);
  const hundredUsers = ranges(scale.hundredUsers, 100);
  const friendHeavyUsers = Array.from({ length: scale.friendHeavyUsers }, () => userId++);
  const openUsers = Array.from({ length: scale.openUsers }, () => {
    const range = { userId: userId++, firstItemId: itemId, count: scale.openInventory };
    itemId += 2 * scale.openInventory;
    return range;
  });
  const tradePairs = Array.from({ length: scale.tradePairs }, () => {
    const [from, to] = ranges(2, scale.tradeInventory);
    return { from, to };
  });
  return {
    scale,
    seed,
    craftUsers,
    bigUsers,
    hundredUsers,
    openUsers,
    tradePairs,
    friendHeavyUsers,
    firstOrdinaryUser: userId,
    firstOrdinaryItem: itemId,
  };
}

export function emailOf(userId: number): string {
  return `u${userId}@bench.example`;
}

/** Salt of the shared password hash, so the whole world is a function of the seed. */
export function passwordSalt(seed: string): Uint8Array {
  return new Random(`${seed}/password-salt`).bytes(16);
}

const TYPE_WEIGHTS: [type: number, weight: number][] = [
  [0, 40],
  [1, 4],
  [2, 5],
  [3, 5],
  [4, 10],
  [5, 5],
  [6, 3],
  [7, 2],
  [8, 10],
  [9, 16],
];
const QUALITY_WEIGHTS: [quality: number, weight: number][] = [
  [0, 10],
  [1, 30],
  [2, 25],
  [3, 18],
  [4, 12],
  [5, 5],
];
const WORDS = [
  'amber',
  'brass',
  'cobalt',
  'dune',
  'ember',
  'frost',
  'granite',
  'harbor',
  'ivory',
  'jade',
  'krait',
  'lunar',
  'maple',
  'nova',
  'onyx',
  'pine',
  'quartz',
  'raven',
  'sable',
  'tide',
];

function weighted(random: Random, weights: [number, number][]): number {
  const total = weights.reduce((s, [, w]) => s + w, 0);
  let r = random.next() * total;
  for (const [value, w] of weights) {
    r -= w;
    if (r < 0) return value;
  }
  return weights[weights.length - 1][0];
}

function generateProtos(random: Random, scale: WorldScale): WorldItemProto[] {
  const protos: WorldItemProto[] = [];
  for (let id = 1; id <= scale.protos; id++) {
    // The first 60 are cards of every class in turn, so each card class is stocked (crafting draws from the next class).
    const type = id <= 60 ? 0 : weighted(random, TYPE_WEIGHTS);
    const quality_id = id <= 60 ? id % 6 : weighted(random, QUALITY_WEIGHTS);
    const word = random.pick(WORDS);
    const proto: WorldItemProto = {
      item_proto_id: id,
      type,
      quality_id,
      title: `${word[0].toUpperCase()}${word.slice(1)} ${['card', 'gift set', 'case', 'key', 'dice', 'badge', 'pass', 'subscription', 'taunt', 'sticker'][type]} ${id}`,
      description: random.chance(0.7) ? `A ${word} piece from the ${random.pick(WORDS)} series, number ${id}.` : '',
      image: `https://cdn.example.com/items/${id}.png`,
      collection_id: random.int(1, scale.collections),
      prices: { buy: random.int(1, 500) * 10, quick_sell: random.int(1, 200) },
      // Craft inputs and results must be craftable; a few other prototypes are not.
      can_craft: type === 0 || random.chance(0.8) ? 1 : 0,
    };
    if (type === 0) proto.monopoly_id = random.int(1, 40);
    if (type === 9) proto.sticker_group_id = random.int(1, 60);
    if (random.chance(0.1)) proto.twin_item_proto_ids = [random.int(1, scale.protos)];
    if (random.chance(0.05)) proto.extra = { can_sell: 1, buy_cost: random.int(10, 1000) };
    protos.push(proto);
  }
  const cases = protos.filter((p) => p.type === 2);
  const keys = protos.filter((p) => p.type === 3);
  cases.forEach((c, i) => {
    if (keys.length > 0) {
      const key = keys[i % keys.length];
      c.key_item_proto_id = key.item_proto_id;
      key.case_item_proto_ids = [...(key.case_item_proto_ids ?? []), c.item_proto_id];
    }
    c.drop = Array.from({ length: random.int(4, 10) }, () => ({
      item_proto_id: random.int(1, scale.protos),
      ...(random.chance(0.2) ? { is_rare: 1 as const } : {}),
    }));
  });
  return protos;
}

function generateUser(random: Random, id: number, passwordHash: string): WorldUser {
  const word = random.pick(WORDS);
  const games = random.int(0, 3000);
  const user: WorldUser = {
    user_id: id,
    email: emailOf(id),
    password_hash: passwordHash,
    nick: `${word}_${id.toString(36)}`,
    gender: random.int(0, 1) as 0 | 1,
    avatar: `https://cdn.example.com/avatars/${id}.jpg`,
    games,
    games_wins: random.int(0, games),
    xp: random.int(0, 500_000),
    xp_level: random.int(0, 120),
    created_at: WORLD_NOW - random.int(86400, 5 * 365 * 86400),
  };
  if (random.chance(0.6)) user.domain = `${word}.${id}`;
  if (random.chance(0.3)) user.avatar_key = `k${id.toString(16)}`;
  if (random.chance(0.2)) user.nicks_old = [`old_${word}_${id}`];
  if (random.chance(0.1)) user.profile_cover = `https://cdn.example.com/covers/${id}.jpg`;
  if (random.chance(0.05)) user.approved = 1;
  if (random.chance(0.08)) user.vip = 1;
  if (random.chance(0.3)) user.rank = random.chance(0.1) ? { hidden: 1 } : { id: 1 + (id % 30), pts: id % 5000 };
  return user;
}

function generateMessages(random: Random, scale: WorldScale): WorldChatMessage[] {
  const messages: WorldChatMessage[] = [];
  let ts = WORLD_NOW - scale.messages * 30;
  for (let i = 0; i < scale.messages; i++) {
    ts += random.int(1, 59);
    const user_id = random.int(1, scale.users);
    const msg_id = `${(ts * 1000).toString(36).padStart(9, '0')}${i.toString(36).padStart(4, '0')}bench0`;
    const kind = random.next();
    if (kind < 0.85) {
      const mentioned = random.chance(0.2) ? [random.int(1, scale.users)] : [];
      const text = `${random.pick(WORDS)} ${random.pick(WORDS)} ${mentioned.map((m) => `@${m}`).join(' ')} gg ${i}`.trim();
      messages.push({ msg_id, type: 1, user_id, ts, text, user_ids_mentioned: mentioned });
    } else if (kind < 0.93) {
      messages.push({
        msg_id,
        type: 2,
        user_id,
        ts,
        case_item_proto_id: random.int(1, scale.protos),
        drop_item_proto_id: random.int(1, scale.protos),
      });
    } else if (kind < 0.98) {
      messages.push({
        msg_id,
        type: 3,
        user_id,
        ts,
        user_id_receiver: random.int(1, scale.users),
        item_proto_id: random.int(1, scale.protos),
      });
    } else {
      messages.push({ msg_id, type: 4, user_id, ts, item_proto_ids: random.distinct(3, 1, scale.protos) });
    }
  }
  return messages;
}

/**
 * The whole benchmark world as a world file. Identical for identical seed and scale;
 * every account has the password BENCH_PASSWORD (stored as `passwordHash`).
 */
export function generateWorld(seed: string, scale: WorldScale, passwordHash: string): { world: World; roles: WorldRoles } {
  const roles = worldRoles(seed, scale);
  const random = new Random(`${seed}/${scale.name}`);
  const protos = generateProtos(random, scale);
  const craftInputs = protos.filter((p) => p.type === CRAFT_TYPE && p.quality_id === CRAFT_QUALITY).map((p) => p.item_proto_id);
  const anyProto = () => random.int(1, scale.protos);
  // Special inventories hold no stock-class items, so an owner sees every one of them by default.
  const nonStock = protos.filter((p) => p.quality_id !== 0).map((p) => p.item_proto_id);
  const tsOwned = () => WORLD_NOW - random.int(60, 365 * 86400);

  const users: WorldUser[] = [];
  for (let id = 1; id <= scale.users; id++) users.push(generateUser(random, id, passwordHash));

  const items: WorldItem[] = [];
  for (const range of roles.craftUsers)
    for (let i = 0; i < range.count; i++)
      items.push({ item_id: range.firstItemId + i, user_id: range.userId, item_proto_id: random.pick(craftInputs), ts_owned: tsOwned() });
  for (const range of [...roles.bigUsers, ...roles.hundredUsers])
    for (let i = 0; i < range.count; i++)
      items.push({ item_id: range.firstItemId + i, user_id: range.userId, item_proto_id: random.pick(nonStock), ts_owned: tsOwned() });
  // Openers: cases that open with a key, and the keys, from a stream of their own.
  const opening = new Random(`${seed}/${scale.name}/openers`);
  const openable = protos.filter((p) => p.type === 2 && p.key_item_proto_id !== undefined && (p.drop ?? []).length > 0);
  for (const range of roles.openUsers)
    for (let i = 0; i < range.count; i++) {
      const box = opening.pick(openable);
      items.push({ item_id: range.firstItemId + i, user_id: range.userId, item_proto_id: box.item_proto_id, ts_owned: tsOwned() });
      items.push({
        item_id: range.firstItemId + range.count + i,
        user_id: range.userId,
        item_proto_id: box.key_item_proto_id!,
        ts_owned: tsOwned(),
      });
    }
  // Traders: tradable items of any kind but stock class, from a stream of their own.
  const trading = new Random(`${seed}/${scale.name}/traders`);
  for (const { from, to } of roles.tradePairs)
    for (const range of [from, to])
      for (let i = 0; i < range.count; i++)
        items.push({ item_id: range.firstItemId + i, user_id: range.userId, item_proto_id: trading.pick(nonStock), ts_owned: tsOwned() });
  // Ordinary inventories: owners drawn with a skewed distribution, so most are small and a few large.
  const ordinaryUsers = scale.users - roles.firstOrdinaryUser + 1;
  for (let itemId = roles.firstOrdinaryItem; itemId <= scale.items; itemId++) {
    const owner = roles.firstOrdinaryUser + Math.floor(ordinaryUsers * random.next() ** 1.6);
    const item: WorldItem = { item_id: itemId, user_id: owner, item_proto_id: anyProto(), ts_owned: tsOwned() };
    if (random.chance(0.05)) item.ts_can_trade = WORLD_NOW + random.int(3600, 30 * 86400);
    items.push(item);
  }

  const friends: [number, number][] = [];
  const pairs = new Set<string>();
  const befriend = (a: number, b: number) => {
    if (a === b) return false;
    const key = a < b ? `${a}:${b}` : `${b}:${a}`;
    if (pairs.has(key)) return false;
    pairs.add(key);
    friends.push([a, b]);
    return true;
  };
  for (const heavy of roles.friendHeavyUsers) {
    let made = 0;
    while (made < scale.friendsPerHeavyUser) if (befriend(heavy, random.int(roles.firstOrdinaryUser, scale.users))) made++;
  }
  for (let made = 0; made < scale.randomFriendships;)
    if (befriend(random.int(roles.firstOrdinaryUser, scale.users), random.int(roles.firstOrdinaryUser, scale.users))) made++;

  const collections = Array.from({ length: scale.collections }, (_, i) => ({
    collection_id: i + 1,
    title: `${WORDS[i % WORDS.length]} collection ${i + 1}`,
  }));
  const world: World = {
    collections,
    item_protos: protos,
    users,
    items,
    friends,
    gchat: { status: { closed: false, slowmode: false, emoteonly: false }, messages: generateMessages(random, scale) },
  };
  return { world, roles };
}
