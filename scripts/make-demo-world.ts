/**
 * Generates worlds/demo.json, the world `npm start` serves: the same file every run (a seeded
 * generator and fixed times), validated before it is written.
 *
 *   npx tsx scripts/make-demo-world.ts [OUTPUT]
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseWorld } from '../src/world/import.js';
import type { World, WorldItem, WorldItemProto, WorldUser, WorldChatMessage } from '../src/world/schema.js';

/** 2026-01-01T00:00:00Z: every time in the demo world is counted back from here. */
export const DEMO_NOW = 1_767_225_600;
const DAY = 86_400;
/**
 * 2030-01-01T00:00:00Z: when Alice's trade-locked card becomes tradable. Unlike the world's
 * other times it is not counted back from DEMO_NOW: it must still lie ahead of the servers
 * that load the demo.
 */
const LOCKED_UNTIL = 1_893_456_000;
/** Root-relative: the server draws these images itself (src/web/media.ts); --media-url or --public-url makes them absolute on import. */
const CDN = '/media/demo';

/** mulberry32: a small deterministic generator, so the file is the same every run. */
function seeded(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)],
  };
}

const QUALITY_NAMES = ['Stock', 'Common', 'Standard', 'Special', 'Highest', 'Exclusive'];
const PRICE_BY_QUALITY = [0, 5, 15, 45, 150, 600];

const MONOPOLIES: { id: number; name: string; cards: string[] }[] = [
  { id: 1, name: 'Coffee Houses', cards: ['Bean & Co', 'Roastery Nine', 'Morning Cup'] },
  { id: 2, name: 'Airlines', cards: ['Skyward', 'Blue Heron Air', 'Polar Jet'] },
  { id: 3, name: 'Car Makers', cards: ['Vantor', 'Mirelli', 'Kestrel Motors'] },
  { id: 4, name: 'Game Studios', cards: ['Pixel Forge', 'Ninth Moon', 'Red Lantern'] },
  { id: 5, name: 'Social Networks', cards: ['Chirp', 'Facefeed', 'Snapwave'] },
  { id: 6, name: 'Fast Food', cards: ['Burger Barn', 'Taco Torre', 'Noodle Dash'] },
  { id: 7, name: 'Fashion', cards: ['Maison Lune', 'Threadline', 'Atelier 5'] },
  { id: 8, name: 'Soft Drinks', cards: ['Fizzo', 'Lime Rush', 'Cola Nova'] },
];

const COLLECTIONS = [
  { collection_id: 1, title: 'Classic Board' },
  { collection_id: 2, title: 'Neon Nights' },
  { collection_id: 3, title: 'Winter Festival' },
  { collection_id: 4, title: 'Space Race' },
  { collection_id: 5, title: 'Animal Stickers' },
  { collection_id: 6, title: 'Emotion Stickers' },
  { collection_id: 7, title: 'Hall of Fame Badges' },
  { collection_id: 8, title: 'Dice Workshop' },
  { collection_id: 9, title: 'Taunts and Jokes' },
];

/** Card collections by class: stock and common cards are classic, higher classes come from the events. */
const CARD_COLLECTION_BY_QUALITY = [1, 1, 2, 3, 4, 4];

const STICKER_GROUPS = [
  { id: 21, collection: 5, names: ['Fox', 'Owl', 'Otter', 'Lynx', 'Panda'] },
  { id: 22, collection: 5, names: ['Koala', 'Hedgehog', 'Raccoon', 'Seal', 'Tiger'] },
  { id: 23, collection: 6, names: ['Grin', 'Facepalm', 'Shock', 'Wink', 'Rage'] },
  { id: 24, collection: 6, names: ['Sleepy', 'Party', 'Cool', 'Tears of Joy', 'Thinking'] },
];

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
const prices = (quality: number) =>
  quality === 0 ? undefined : { buy: PRICE_BY_QUALITY[quality], quick_sell: Math.round(PRICE_BY_QUALITY[quality] * 0.4) };

/** Prototype ids by kind: cards 1000+, gift sets 2000+, cases 3000+, keys 3100+, dice 4000+, badges 5000+, passes 6000+, subscriptions 7000+, taunts 8000+, stickers 9000+. */
export const PROTO = {
  card: (monopoly: number, card: number, quality: number) => 1000 + quality * 100 + monopoly * 10 + card,
  giftSet: (n: number) => 2000 + n,
  case: (n: number) => 3000 + n,
  key: (n: number) => 3100 + n,
  dice: (quality: number, n: number) => 4000 + quality * 10 + n,
  badge: (n: number) => 5000 + n,
  pass: (n: number) => 6000 + n,
  subscription: (n: number) => 7000 + n,
  taunt: (quality: number, n: number) => 8000 + quality * 10 + n,
  sticker: (group: number, n: number) => 9000 + group * 10 + n,
};

function makeProtos(): WorldItemProto[] {
  const protos: WorldItemProto[] = [];

  // Cards (type 0): every monopoly has three cards in each class; stock cards only the first one.
  for (const m of MONOPOLIES) {
    for (let quality = 0; quality <= 5; quality++) {
      m.cards.forEach((name, card) => {
        if (quality === 0 && card > 0) return;
        const id = PROTO.card(m.id, card, quality);
        const twins = quality >= 1 && quality <= 4 ? [PROTO.card(m.id, card, quality + 1)] : undefined;
        protos.push({
          item_proto_id: id,
          type: 0,
          title: quality === 0 ? `${name} (stock)` : name,
          description: `${QUALITY_NAMES[quality]} ${m.name} card.`,
          image: `${CDN}/cards/${slug(name)}-${quality}.svg`,
          quality_id: quality,
          collection_id: CARD_COLLECTION_BY_QUALITY[quality],
          monopoly_id: m.id,
          ...(prices(quality) ? { prices: prices(quality) } : {}),
          ...(twins ? { twin_item_proto_ids: twins } : {}),
          can_craft: quality >= 1 && quality <= 4 ? 1 : 0,
          // Stock cards are given, never crafted; the two exclusive event cards neither.
          craft_result: quality === 0 || (quality === 5 && card === 2) ? 0 : 1,
        });
      });
    }
  }

  // Number generators (type 4): three dice in each class.
  const diceNames = ['Bone', 'Crystal', 'Ember'];
  for (let quality = 0; quality <= 5; quality++)
    diceNames.forEach((name, n) =>
      protos.push({
        item_proto_id: PROTO.dice(quality, n),
        type: 4,
        title: `${name} Dice${quality === 0 ? '' : ` ${QUALITY_NAMES[quality]}`}`,
        description: `A pair of ${name.toLowerCase()} dice.`,
        image: `${CDN}/dice/${slug(name)}-${quality}.svg`,
        quality_id: quality,
        collection_id: 8,
        ...(prices(quality) ? { prices: prices(quality) } : {}),
        can_craft: quality >= 1 && quality <= 4 ? 1 : 0,
        craft_result: quality === 0 ? 0 : 1,
      }),
    );

  // Taunts (type 8): three in each class.
  const tauntNames = ['Slow Clap', 'Rubber Chicken', 'Confetti Cannon'];
  for (let quality = 0; quality <= 5; quality++)
    tauntNames.forEach((name, n) =>
      protos.push({
        item_proto_id: PROTO.taunt(quality, n),
        type: 8,
        title: `${name}${quality === 0 ? '' : ` ${QUALITY_NAMES[quality]}`}`,
        description: '',
        image: `${CDN}/taunts/${slug(name)}-${quality}.svg`,
        quality_id: quality,
        collection_id: 9,
        ...(prices(quality) ? { prices: prices(quality) } : {}),
        can_craft: quality >= 1 && quality <= 4 ? 1 : 0,
        craft_result: quality === 0 ? 0 : 1,
      }),
    );

  // Stickers (type 9): four groups of five, classes 1 to 5 within each group.
  STICKER_GROUPS.forEach((group, g) =>
    group.names.forEach((name, n) =>
      protos.push({
        item_proto_id: PROTO.sticker(g + 1, n),
        type: 9,
        title: `${name} Sticker`,
        description: `Sticker from the ${COLLECTIONS.find((c) => c.collection_id === group.collection)!.title} set.`,
        image: `${CDN}/stickers/${slug(name)}.svg`,
        quality_id: n + 1,
        collection_id: group.collection,
        sticker_group_id: group.id,
        prices: prices(n + 1),
        can_craft: n + 1 <= 4 ? 1 : 0,
      }),
    ),
  );

  // Badges (type 5): profile decorations, never crafted or traded.
  const badgeNames = [
    'First Win',
    'Ten Wins',
    'Hundred Wins',
    'Veteran',
    'Collector',
    'Crafter',
    'Founder',
    'Tournament Finalist',
    'Tournament Champion',
    'Helper',
    'Night Owl',
    'Lucky Roll',
  ];
  badgeNames.forEach((name, n) =>
    protos.push({
      item_proto_id: PROTO.badge(n),
      type: 5,
      title: name,
      description: `Badge: ${name}.`,
      image: `${CDN}/badges/${slug(name)}.svg`,
      quality_id: 1 + (n % 5),
      collection_id: 7,
      can_craft: 0,
      craft_result: 0,
    }),
  );

  // Passes (type 6): single use.
  ['Tournament Pass', 'Double XP Pass', 'Private Table Pass', 'Rematch Pass', 'Spectator Pass', 'Season Pass'].forEach((name, n) =>
    protos.push({
      item_proto_id: PROTO.pass(n),
      type: 6,
      title: name,
      description: 'Used up on first use.',
      image: `${CDN}/passes/${slug(name)}.svg`,
      quality_id: 1 + (n % 4),
      prices: prices(1 + (n % 4)),
      can_craft: 0,
      craft_result: 0,
    }),
  );

  // Subscriptions (type 7): a number of uses.
  [
    ['Weekly Premium', 7],
    ['Monthly Premium', 30],
    ['Tournament Series', 10],
    ['Coach Sessions', 5],
  ].forEach(([name, uses], n) =>
    protos.push({
      item_proto_id: PROTO.subscription(n),
      type: 7,
      title: name as string,
      description: `${uses} uses.`,
      image: `${CDN}/subscriptions/${slug(name as string)}.svg`,
      quality_id: 3,
      prices: prices(3),
      can_craft: 0,
      craft_result: 0,
      extra: { uses: { origin: uses } },
    }),
  );

  // Cases (type 2) open with their keys (type 3) and drop cards, dice and taunts.
  const caseNames = ['Neon Case', 'Winter Case', 'Space Case', 'Classic Case', 'Dice Case', 'Taunt Case', 'Mystery Case', 'Legend Case'];
  caseNames.forEach((name, n) => {
    const quality = 1 + (n % 4);
    // Weights of 100 in all: each card 40%, each secondary drop 8%, the rare card 4%.
    const drops = [
      { item_proto_id: PROTO.card(1 + n, 0, Math.min(quality, 4)), weight: 40 },
      { item_proto_id: PROTO.card(1 + ((n + 1) % 8), 1, Math.min(quality, 4)), weight: 40 },
      { item_proto_id: PROTO.dice(Math.min(quality + 1, 5), n % 3), is_secondary: 1 as const, weight: 8 },
      { item_proto_id: PROTO.taunt(Math.min(quality + 1, 5), n % 3), is_secondary: 1 as const, weight: 8 },
      { item_proto_id: PROTO.card(1 + n, 2, 5), is_rare: 1 as const, weight: 4 },
    ];
    protos.push({
      item_proto_id: PROTO.case(n),
      type: 2,
      title: name,
      description: `Opens with the ${name.replace(' Case', '')} Key.`,
      image: `${CDN}/cases/${slug(name)}.svg`,
      quality_id: quality,
      collection_id: 1 + (n % 4),
      prices: prices(quality),
      key_item_proto_id: PROTO.key(n),
      drop: drops,
      can_craft: 0,
      craft_result: 0,
    });
    protos.push({
      item_proto_id: PROTO.key(n),
      type: 3,
      title: `${name.replace(' Case', '')} Key`,
      description: `Opens the ${name}.`,
      image: `${CDN}/keys/${slug(name)}.svg`,
      quality_id: quality,
      prices: prices(quality),
      case_item_proto_ids: [PROTO.case(n)],
      can_craft: 0,
      craft_result: 0,
    });
  });

  // Gift sets (type 1) give a fixed set of items.
  ['Starter Set', 'Birthday Set', 'Winter Gift Set', 'Space Explorer Set', 'High Roller Set', 'Champion Set'].forEach((name, n) => {
    const quality = 1 + (n % 3);
    protos.push({
      item_proto_id: PROTO.giftSet(n),
      type: 1,
      title: name,
      description: 'Open it to receive every item inside.',
      image: `${CDN}/gift-sets/${slug(name)}.svg`,
      quality_id: quality,
      collection_id: 1 + (n % 4),
      prices: prices(quality),
      drop: [
        { item_proto_id: PROTO.card(1 + n, 0, quality) },
        { item_proto_id: PROTO.dice(quality, n % 3) },
        { item_proto_id: PROTO.taunt(quality, n % 3), is_secondary: 1 },
        { item_proto_id: PROTO.sticker(1 + (n % 4), 0), is_secondary: 1 },
      ],
      can_craft: 0,
      craft_result: 0,
    });
  });

  return protos.sort((a, b) => a.item_proto_id - b.item_proto_id);
}

/** The named demo accounts; every one with a password is printed by `serve` on start. */
const NAMED_USERS: WorldUser[] = [
  {
    user_id: 1,
    email: 'alice@example.com',
    password: 'alice-demo-password',
    domain: 'alice',
    nick: 'Alice',
    nicks_old: ['alice_in_boardland', 'A.'],
    gender: 1,
    avatar: `${CDN}/avatars/alice.svg`,
    avatar_key: 'alice-1',
    profile_cover: `${CDN}/covers/alice.svg`,
    approved: 1,
    vip: 1,
    rank: { id: 12, pts: 2480 },
    games: 1843,
    games_wins: 977,
    xp: 185_400,
    xp_level: 61,
    created_at: DEMO_NOW - 900 * DAY,
  },
  {
    user_id: 2,
    email: 'bob@example.com',
    password: 'bob-demo-password',
    domain: 'bob',
    nick: 'Bob',
    gender: 0,
    avatar: `${CDN}/avatars/bob.svg`,
    approved: 1,
    totp_secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
    // Confirmed: a password reset keeps the second factor only on a confirmed address.
    email_verified: 1,
    rank: { hidden: 1 },
    games: 420,
    games_wins: 198,
    xp: 40_200,
    xp_level: 33,
    created_at: DEMO_NOW - 700 * DAY,
  },
  {
    user_id: 3,
    email: 'carol@example.com',
    password: 'carol-demo-password',
    domain: 'carol',
    nick: 'Carol (mod)',
    gender: 1,
    avatar: `${CDN}/avatars/carol.svg`,
    approved: 1,
    moderator: 1,
    rank: { qual: 4 },
    games: 2210,
    games_wins: 1300,
    xp: 260_000,
    xp_level: 70,
    created_at: DEMO_NOW - 1200 * DAY,
  },
  {
    user_id: 4,
    email: 'dave@example.com',
    password: 'dave-demo-password',
    domain: 'dave',
    nick: 'Dave',
    gender: 0,
    avatar: `${CDN}/avatars/dave.svg`,
    approved: 1,
    moderator: 1,
    superadmin: 1,
    vip: 1,
    rank: { expired: 1 },
    games: 88,
    games_wins: 40,
    xp: 9_000,
    xp_level: 14,
    online: 1,
    created_at: DEMO_NOW - 1500 * DAY,
  },
  {
    user_id: 5,
    email: 'erin@example.com',
    password: 'erin-demo-password',
    domain: 'erin',
    nick: 'Erin',
    gender: 1,
    avatar: `${CDN}/avatars/erin.svg`,
    inventory_privacy: 'nobody',
    games: 310,
    games_wins: 150,
    xp: 30_100,
    xp_level: 29,
    created_at: DEMO_NOW - 400 * DAY,
  },
  {
    user_id: 6,
    email: 'frank@example.com',
    password: 'frank-demo-password',
    domain: 'frank',
    nick: 'Frank',
    gender: 0,
    avatar: `${CDN}/avatars/frank.svg`,
    inventory_privacy: 'friends',
    vip: 1,
    games: 512,
    games_wins: 260,
    xp: 51_000,
    xp_level: 37,
    created_at: DEMO_NOW - 380 * DAY,
  },
  {
    user_id: 7,
    email: 'grace@example.com',
    password: 'grace-demo-password',
    domain: 'grace',
    nick: 'Grace',
    gender: 1,
    avatar: `${CDN}/avatars/grace.svg`,
    global_ban: 1,
    games: 75,
    games_wins: 12,
    xp: 4_000,
    xp_level: 9,
    created_at: DEMO_NOW - 200 * DAY,
  },
  {
    user_id: 8,
    email: 'heidi@example.com',
    password: 'heidi-demo-password',
    domain: 'heidi',
    nick: 'Heidi',
    gender: 1,
    avatar: `${CDN}/avatars/heidi.svg`,
    captcha: 'always',
    games: 140,
    games_wins: 70,
    xp: 12_500,
    xp_level: 17,
    created_at: DEMO_NOW - 150 * DAY,
  },
  {
    user_id: 9,
    email: 'ivan@example.com',
    password: 'ivan-demo-password',
    domain: 'ivan',
    nick: 'Ivan',
    gender: 0,
    avatar: `${CDN}/avatars/ivan.svg`,
    muted_until: DEMO_NOW + 3650 * DAY,
    games: 95,
    games_wins: 30,
    xp: 6_100,
    xp_level: 11,
    created_at: DEMO_NOW - 90 * DAY,
  },
  {
    user_id: 10,
    domain: 'dicebot',
    nick: 'DiceBot',
    gender: 0,
    avatar: `${CDN}/avatars/dicebot.svg`,
    bot_owner: 1,
    created_at: DEMO_NOW - 300 * DAY,
  },
];

const PLAYER_NICKS = [
  'Mallory',
  'Niaj',
  'Olivia',
  'Peggy',
  'Quentin',
  'Rupert',
  'Sybil',
  'Trent',
  'Uma',
  'Victor',
  'Walter',
  'Xena',
  'Yusuf',
  'Zoe',
  'Arjun',
  'Beatriz',
  'Chen',
  'Dmitri',
  'Elif',
  'Farah',
  'Goran',
  'Hana',
  'Ines',
  'Jonas',
  'Kofi',
  'Lena',
];

function makeUsers(random: ReturnType<typeof seeded>): WorldUser[] {
  const players = PLAYER_NICKS.map((nick, n): WorldUser => {
    const games = random.int(0, 3000);
    const wins = random.int(0, games);
    const xp = games * random.int(50, 150);
    return {
      user_id: 11 + n,
      ...(n % 4 === 3 ? {} : { domain: slug(nick) }),
      nick,
      ...(n % 5 === 0 ? { nicks_old: [`${nick.toLowerCase()}${random.int(1, 99)}`] } : {}),
      gender: (n % 2) as 0 | 1,
      avatar: `${CDN}/avatars/${slug(nick)}.svg`,
      ...(n % 3 === 0 ? { approved: 1 as const } : {}),
      ...(n % 9 === 4 ? { vip: 1 as const } : {}),
      ...(n % 6 === 1 ? { online: 1 as const } : {}),
      games,
      games_wins: wins,
      xp,
      xp_level: Math.floor(Math.sqrt(xp / 50)),
      created_at: DEMO_NOW - random.int(30, 1500) * DAY,
    };
  });
  return [...NAMED_USERS, ...players];
}

function makeItems(random: ReturnType<typeof seeded>, users: WorldUser[], protos: WorldItemProto[]): WorldItem[] {
  const items: WorldItem[] = [];
  let nextItemId = 1;
  const give = (userId: number, itemProtoId: number, daysAgo: number, extra: Partial<WorldItem> = {}) => {
    items.push({
      item_id: nextItemId++,
      user_id: userId,
      item_proto_id: itemProtoId,
      ts_owned: DEMO_NOW - daysAgo * DAY - random.int(0, DAY - 1),
      ...extra,
    });
  };

  // Alice: a full inventory. Ten-plus common cards and standard dice to craft with, one
  // card still trade-locked, every stock card, equipped boards and badges.
  const alice = 1;
  for (const m of MONOPOLIES) give(alice, PROTO.card(m.id, 0, 0), 800, m.id <= 2 ? { equip: { game: 'classic', slot: 'cards' } } : {});
  for (let n = 0; n < 14; n++) give(alice, PROTO.card(1 + (n % 8), n % 3, 1), 60 - n);
  give(alice, PROTO.card(3, 1, 1), 1, { ts_can_trade: LOCKED_UNTIL });
  for (let n = 0; n < 11; n++) give(alice, PROTO.dice(2, n % 3), 40 - n);
  for (let n = 0; n < 10; n++) give(alice, PROTO.taunt(1, n % 3), 30 - n);
  give(alice, PROTO.card(1, 0, 3), 20, { equip: { game: 'classic', slot: 'cards' } });
  give(alice, PROTO.card(2, 1, 4), 18, { equip: { game: 'classic', slot: 'cards', monopoly_id: 2 } });
  give(alice, PROTO.card(4, 2, 5), 15, { equip: { game: 'duel', slot: 'cards' } });
  give(alice, PROTO.dice(4, 1), 12, { equip: { game: 'classic', slot: 'generator' } });
  give(alice, PROTO.dice(3, 2), 11, { equip: { game: 'duel', slot: 'generator' } });
  give(alice, PROTO.taunt(3, 2), 10, { equip: { game: 'classic', slot: 'joke' } });
  give(alice, PROTO.badge(0), 700, { ts_can_trade: -1, equip: { slot: 'badge' } });
  give(alice, PROTO.badge(4), 300, { ts_can_trade: -1, equip: { slot: 'badge' } });
  give(alice, PROTO.badge(6), 850, { ts_can_trade: -1 });
  for (let n = 0; n < 3; n++) give(alice, PROTO.case(n), 9 - n);
  give(alice, PROTO.key(0), 5);
  give(alice, PROTO.key(1), 5);
  give(alice, PROTO.giftSet(1), 4);
  give(alice, PROTO.pass(0), 3);
  give(alice, PROTO.pass(0), 3);
  give(alice, PROTO.subscription(1), 2, { data: { uses: { left: 21, origin: 30 } } });
  for (let g = 1; g <= 4; g++) give(alice, PROTO.sticker(g, g - 1), 25 + g);
  give(alice, PROTO.sticker(1, 0), 26);

  // Everyone else: a handful of stock cards and random items of the catalogue.
  const tradeable = protos.filter((p) => p.quality_id !== 0 && p.type !== 5);
  for (const user of users) {
    if (user.user_id === alice) continue;
    const stock = MONOPOLIES.slice(0, user.bot_owner ? 2 : 4);
    for (const m of stock) give(user.user_id, PROTO.card(m.id, 0, 0), 300);
    const count = user.user_id <= 9 ? 12 : random.int(3, 10);
    for (let n = 0; n < count; n++) give(user.user_id, random.pick(tradeable).item_proto_id, random.int(0, 365));
    if (user.user_id % 3 === 0)
      give(user.user_id, PROTO.badge(user.user_id % 12), random.int(10, 500), { ts_can_trade: -1, equip: { slot: 'badge' } });
  }
  // Bob can craft too: ten standard taunts.
  for (let n = 0; n < 10; n++) give(2, PROTO.taunt(2, n % 3), 50 - n);
  // Frank keeps his board equipped.
  give(6, PROTO.dice(2, 0), 33, { equip: { game: 'classic', slot: 'generator' } });
  return items;
}

function makeSocial(users: WorldUser[]) {
  const friends: [number, number][] = [
    [1, 2],
    [1, 3],
    [1, 4],
    [1, 6],
    [1, 11],
    [1, 12],
    [1, 13],
    [1, 14],
    [1, 15],
    [1, 16],
    [2, 3],
    [2, 5],
    [3, 4],
    [5, 6],
    [6, 8],
    [8, 9],
  ];
  // The players know each other in a ring, plus a few long links.
  const players = users.filter((u) => u.user_id >= 11).map((u) => u.user_id);
  players.forEach((id, i) => friends.push([id, players[(i + 1) % players.length]]));
  for (let i = 0; i < players.length; i += 5) friends.push([players[i], players[(i + 9) % players.length]]);
  const unique = new Map<string, [number, number]>();
  for (const [a, b] of friends) unique.set(a < b ? `${a}:${b}` : `${b}:${a}`, a < b ? [a, b] : [b, a]);

  const friend_requests = [
    { from: 17, to: 1, ts: DEMO_NOW - 2 * DAY },
    { from: 18, to: 1, ts: DEMO_NOW - 1 * DAY },
    { from: 5, to: 1, ts: DEMO_NOW - 3 * 3600 },
    { from: 1, to: 19, ts: DEMO_NOW - 4 * DAY },
    { from: 9, to: 2, ts: DEMO_NOW - 6 * DAY },
  ];
  // Alice blocks 20; 21 blocks Alice; Alice and 22 block each other.
  const blocks = [
    { user_id: 1, blocked_user_id: 20, ts: DEMO_NOW - 10 * DAY },
    { user_id: 21, blocked_user_id: 1, ts: DEMO_NOW - 8 * DAY },
    { user_id: 1, blocked_user_id: 22, ts: DEMO_NOW - 7 * DAY },
    { user_id: 22, blocked_user_id: 1, ts: DEMO_NOW - 7 * DAY },
    { user_id: 3, blocked_user_id: 9, ts: DEMO_NOW - 30 * DAY },
  ];
  const since = (a: number, b: number) => DEMO_NOW - ((a * 31 + b * 17) % 400) * DAY;
  return {
    friends: [...unique.values()]
      .sort((x, y) => x[0] - y[0] || x[1] - y[1])
      .map(([a, b]) => ({ user_id: a, friend_id: b, since: since(a, b) })),
    friend_requests,
    blocks,
  };
}

function makeChat(): World['gchat'] {
  const start = DEMO_NOW - 3 * 3600;
  const lines: Omit<WorldChatMessage, 'ts'>[] = [
    { type: 1, user_id: 3, text: 'Welcome to the demo server! Be nice, have fun :smile:' },
    { type: 1, user_id: 1, text: 'Anyone up for a classic board? @2', user_ids_mentioned: [2] },
    { type: 1, user_id: 2, text: 'Sure @1, give me five minutes', user_ids_mentioned: [1] },
    { type: 2, user_id: 12, case_item_proto_id: PROTO.case(0), drop_item_proto_id: PROTO.card(1, 0, 1) },
    { type: 1, user_id: 14, text: 'gg everyone :gg:' },
    { type: 3, user_id: 4, user_id_receiver: 1, item_proto_id: PROTO.giftSet(1) },
    { type: 1, user_id: 10, text: 'DiceBot rolled 7 and 5 for the table.' },
    { type: 4, user_id: 3, item_proto_ids: [PROTO.pass(1), PROTO.key(2)] },
    { type: 1, user_id: 16, text: 'Is the Winter Case worth opening?' },
    { type: 1, user_id: 6, text: '@16 the keys are cheap this week', user_ids_mentioned: [16] },
    { type: 2, user_id: 15, case_item_proto_id: PROTO.case(2), drop_item_proto_id: PROTO.card(3, 2, 5) },
    { type: 1, user_id: 15, text: 'EXCLUSIVE DROP :fire: :fire:' },
    { type: 2, user_id: 1, case_item_proto_id: PROTO.giftSet(0), drop_item_proto_id: PROTO.dice(1, 0) },
    { type: 3, user_id: 11, user_id_receiver: 13, item_proto_id: PROTO.sticker(3, 1) },
    { type: 1, user_id: 13, text: 'thank you @11 :love:', user_ids_mentioned: [11] },
    { type: 4, user_id: 4, item_proto_ids: [PROTO.subscription(0)] },
    { type: 1, user_id: 8, text: ':thumbsup:' },
    { type: 1, user_id: 19, text: 'Looking for a fourth player on the duel board' },
    { type: 1, user_id: 1, text: 'Crafted my first Highest card today :party:' },
    { type: 1, user_id: 23, text: 'good luck all :dice:' },
  ];
  return {
    status: { closed: false, slowmode: false, emoteonly: false, slowmode_interval: 10 },
    // No msg_id: the server gives each message an id in its own format on import.
    messages: lines.map((line, i) => ({ ...line, ts: start + i * 420 }) as WorldChatMessage),
  };
}

/** Promo codes: one any user may redeem, one limited to its first 100 users, one expired. */
export const DEMO_PROMOCODES: NonNullable<World['promocodes']> = [
  { code: 'WELCOME-2026', item_proto_ids: [PROTO.case(3), PROTO.key(3), PROTO.giftSet(0)] },
  { code: 'FIRST-100', item_proto_ids: [PROTO.subscription(0)], max_uses: 100 },
  { code: 'SUMMER-2025', item_proto_ids: [PROTO.pass(1)], ts_expires: DEMO_NOW - 120 * DAY },
];

/** The demo world, the same every time. */
export function makeDemoWorld(): World {
  const random = seeded(20260101);
  const protos = makeProtos();
  const users = makeUsers(random);
  const items = makeItems(random, users, protos);
  return {
    // Editors that read JSON Schema check the file as it is edited.
    $schema: './world.schema.json',
    collections: COLLECTIONS,
    qualities: QUALITY_NAMES.map((title, quality_id) => ({ quality_id, title, coeff_rent: [1, 1.1, 1.25, 1.5, 2, 2.5][quality_id] })),
    item_types: ['Card', 'Gift set', 'Case', 'Key', 'Number generator', 'Badge', 'Pass', 'Subscription', 'Taunt', 'Sticker'].map(
      (title, type) => ({ type, title }),
    ),
    item_protos: protos,
    users,
    items,
    ...makeSocial(users),
    promocodes: DEMO_PROMOCODES,
    gchat: makeChat(),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const output = process.argv[2] ?? fileURLToPath(new URL('../worlds/demo.json', import.meta.url));
  const world = parseWorld(makeDemoWorld());
  writeFileSync(output, `${JSON.stringify(world, null, 2)}\n`);
  console.log(
    `wrote ${output}: ${world.users!.length} users, ${world.item_protos!.length} item prototypes, ${world.items!.length} items, ` +
      `${world.friends!.length} friendships, ${world.gchat!.messages!.length} chat messages`,
  );
}
