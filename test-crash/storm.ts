/**
 * The traffic of one crash round: concurrent clients crafting, opening cases, redeeming promo
 * codes, revoking, trading on the market, changing friendships and chatting against a server that is about to be killed. Every acknowledged (code 0)
 * operation is recorded, and so is the one each client had in flight when the server died.
 */

export type PairState = 'none' | 'a_asked' | 'b_asked' | 'friends';
export type FriendOp = 'add_ab' | 'add_ba' | 'delete_ab' | 'delete_ba';

/** What a friend operation does to a pair, as friends.add and friends.delete define it. */
export function applyFriendOp(state: PairState, op: FriendOp): PairState {
  switch (op) {
    case 'add_ab':
      return state === 'none' ? 'a_asked' : state === 'b_asked' ? 'friends' : state;
    case 'add_ba':
      return state === 'none' ? 'b_asked' : state === 'a_asked' ? 'friends' : state;
    case 'delete_ab':
    case 'delete_ba':
      return 'none';
  }
}

export interface AckedCraft {
  userId: number;
  itemIds: number[];
  resultItemId: number;
}

export interface PairRecord {
  a: number;
  b: number;
  /** The state after the last acknowledged operation. */
  confirmed: PairState;
  /** The operation sent and not answered when the server died. */
  pending: FriendOp | null;
  acked: number;
}

export interface ChatRecord {
  msgId: string;
  userId: number;
  text: string;
  kept: boolean;
}

export interface PrivateMessageRecord {
  msgId: number;
  from: number;
  to: number;
  text: string;
  sendId: string;
}

export interface OpenRecord {
  userId: number;
  caseItemId: number;
  keyItemId: number;
  requestId: string;
  /** The items received, once acknowledged. */
  resultItemIds?: number[];
}

export interface RedemptionRecord {
  userId: number;
  code: string;
  /** The items received, once acknowledged. */
  itemIds?: number[];
}

export interface AckedTrade {
  tradeId: number;
  from: number;
  to: number;
  thingsFrom: number[];
  thingsTo: number[];
  /** The receiver's accept was acknowledged. */
  accepted: boolean;
}

/** A market operation acknowledged (or in flight at the kill: then it may or may not have happened). */
export type MarketRecord =
  | { op: 'sell'; userId: number; itemId: number; price: number }
  | { op: 'cancel'; userId: number; itemId: number }
  | { op: 'buy'; userId: number; itemId: number; price: number }
  | { op: 'quickSell'; userId: number; itemId: number }
  | { op: 'shop'; userId: number; requestId: string; itemId?: number };

export interface StormLog {
  /** Acknowledged market operations and shop purchases. */
  market: MarketRecord[];
  /** Market operations sent and not answered when the server died (shop purchases are retried after the restart). */
  pendingMarket: MarketRecord[];
  crafts: AckedCraft[];
  /** Every trade whose creation was acknowledged. */
  trades: AckedTrade[];
  /** Acknowledged openings. */
  openings: OpenRecord[];
  /** Openings sent and not answered when the server died (retried after the restart). */
  pendingOpenings: OpenRecord[];
  redemptions: RedemptionRecord[];
  pendingRedemptions: RedemptionRecord[];
  revocations: number[];
  pairs: PairRecord[];
  messages: ChatRecord[];
  /** Acknowledged private messages. */
  privateMessages: PrivateMessageRecord[];
  /** Private messages sent and not answered when the server died (sent again with their send_id after the restart). */
  pendingPrivateMessages: Omit<PrivateMessageRecord, 'msgId'>[];
  /** Those sent again after the restart, with the msg_id the retry answered and whether the first send had committed. */
  retriedPrivateMessages: (PrivateMessageRecord & { committed: boolean })[];
  deletions: Set<string>;
  /** Deletions sent and not answered. */
  pendingDeletions: Set<string>;
  /** Answers no operation may get: code 3, HTTP 5xx, not JSON, or a code the operation never answers. */
  unexpected: string[];
  requests: number;
  /** A request found the server gone: every client stops. */
  gone: boolean;
}

export interface StormPlan {
  url: string;
  adminKey: string;
  tokens: Map<number, string>;
  /** Per crafting user: the ids of their class-1 cards. */
  crafters: Map<number, number[]>;
  /** Per trading user: the ids of the items they trade. */
  traders: Map<number, number[]>;
  pairs: [number, number][];
  chatters: number[];
  /** Per opening user: the ids of their cases (prototype 501) and of their keys (502). */
  openers: Map<number, { cases: number[]; keys: number[] }>;
  redeemers: number[];
  /** Per market user: the ids of their cards (prototype 101, which the shop sells and buys back). */
  marketeers: Map<number, number[]>;
  /** Promo codes, in the order every redeemer tries them. */
  promocodes: string[];
  round: number;
  random: () => number;
}

/** A request the dead server never answered. */
class ServerGone extends Error {}

interface Answer {
  code: number;
  data?: any;
}

async function call(
  plan: StormPlan,
  log: StormLog,
  method: string,
  params: Record<string, unknown>,
  auth: { token?: string; admin?: boolean },
): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (auth.token) headers.authorization = `Bearer ${auth.token}`;
  if (auth.admin) headers['x-admin-key'] = plan.adminKey;
  let status: number;
  let text: string;
  try {
    log.requests++;
    const response = await fetch(`${plan.url}/api/${method}`, { method: 'POST', headers, body: JSON.stringify(params) });
    status = response.status;
    text = await response.text();
  } catch {
    log.gone = true;
    throw new ServerGone();
  }
  let body: Answer;
  try {
    body = JSON.parse(text) as Answer;
  } catch {
    log.unexpected.push(`${method}: HTTP ${status}, not JSON: ${text.slice(0, 200)}`);
    throw new ServerGone();
  }
  if (status >= 500 || typeof body.code !== 'number' || body.code === 3) {
    log.unexpected.push(`${method} ${JSON.stringify(params).slice(0, 200)}: HTTP ${status} ${text.slice(0, 300)}`);
  }
  return body;
}

function pickFrom<T>(random: () => number, list: T[], count: number): T[] {
  const copy = [...list];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, count);
}

/** Items a user is believed to own, by class; shared by that user's crafting clients and the revoker. */
type Pools = Map<number, Map<number, Set<number>>>;

function poolOf(pools: Pools, userId: number, quality: number): Set<number> {
  let byClass = pools.get(userId);
  if (!byClass) pools.set(userId, (byClass = new Map()));
  let pool = byClass.get(quality);
  if (!pool) byClass.set(quality, (pool = new Set()));
  return pool;
}

/**
 * A crafting client: ten items of one class from the shared pool (two clients per user, so
 * their picks overlap and race), 603 when another craft or a revocation got there first.
 */
async function crafter(plan: StormPlan, log: StormLog, pools: Pools, userId: number): Promise<void> {
  const token = plan.tokens.get(userId)!;
  for (;;) {
    const classes = [...pools.get(userId)!.entries()].filter(([, pool]) => pool.size >= 10);
    if (classes.length === 0) return;
    const [quality, pool] = classes[Math.floor(plan.random() * classes.length)]!;
    const ids = pickFrom(plan.random, [...pool], 10);
    const answer = await call(plan, log, 'inventory.craft', { item_ids: ids.join(',') }, { token });
    if (answer.code === 0) {
      const resultItemId = answer.data.item.item_id as number;
      log.crafts.push({ userId, itemIds: ids, resultItemId });
      for (const id of ids) pool.delete(id);
      if (quality + 1 < 3) poolOf(pools, userId, quality + 1).add(resultItemId);
    } else if (answer.code === 603) {
      // Some of them went to a racing craft or a revocation; drop one so a stale pool drains.
      pool.delete(ids[0]!);
    } else {
      log.unexpected.push(`inventory.craft answered ${JSON.stringify(answer)}`);
      return;
    }
  }
}

/** The operator revoking random items, racing the crafts for them. */
async function revoker(plan: StormPlan, log: StormLog, pools: Pools): Promise<void> {
  const users = [...plan.crafters.keys()];
  for (;;) {
    const userId = users[Math.floor(plan.random() * users.length)]!;
    const pool = poolOf(pools, userId, 1);
    if (pool.size === 0) return;
    const [itemId] = pickFrom(plan.random, [...pool], 1);
    const answer = await call(plan, log, 'admin.revokeItem', { item_id: itemId, reason: `crash round ${plan.round}` }, { admin: true });
    if (answer.code === 0) {
      log.revocations.push(itemId!);
      pool.delete(itemId!);
    } else if (answer.code !== 2) {
      log.unexpected.push(`admin.revokeItem answered ${JSON.stringify(answer)}`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * An opening client: a random case and key from the user's shared pools (two clients per
 * user, so they race for the same cases and keys), each request with its own request_id.
 */
async function opener(
  plan: StormPlan,
  log: StormLog,
  userId: number,
  pools: { cases: Set<number>; keys: Set<number> },
  client: number,
): Promise<void> {
  const token = plan.tokens.get(userId)!;
  for (let n = 0; pools.cases.size > 0 && pools.keys.size > 0; n++) {
    const [caseItemId] = pickFrom(plan.random, [...pools.cases], 1);
    const [keyItemId] = pickFrom(plan.random, [...pools.keys], 1);
    const record: OpenRecord = {
      userId,
      caseItemId: caseItemId!,
      keyItemId: keyItemId!,
      requestId: `r${plan.round}-u${userId}-c${client}-${n}`,
    };
    log.pendingOpenings.push(record);
    const answer = await call(
      plan,
      log,
      'inventory.open',
      { item_id: caseItemId, key_item_id: keyItemId, request_id: record.requestId },
      { token },
    );
    log.pendingOpenings.splice(log.pendingOpenings.indexOf(record), 1);
    if (answer.code === 0) {
      record.resultItemIds = answer.data.items.map((item: { item_id: number }) => item.item_id);
      log.openings.push(record);
      pools.cases.delete(caseItemId!);
      pools.keys.delete(keyItemId!);
    } else if (answer.code === 603) {
      // The other client took the case or the key: forget both, one of them is stale.
      pools.cases.delete(caseItemId!);
      pools.keys.delete(keyItemId!);
    } else {
      log.unexpected.push(`inventory.open answered ${JSON.stringify(answer)}`);
      return;
    }
  }
}

/** A user redeeming every promo code in turn, racing the other redeemers for the limited ones. */
async function redeemer(plan: StormPlan, log: StormLog, userId: number): Promise<void> {
  const token = plan.tokens.get(userId)!;
  for (const code of plan.promocodes) {
    const record: RedemptionRecord = { userId, code };
    log.pendingRedemptions.push(record);
    const answer = await call(plan, log, 'wallet.promocodeActivate', { promocode: code }, { token });
    log.pendingRedemptions.splice(log.pendingRedemptions.indexOf(record), 1);
    if (answer.code === 0) {
      record.itemIds = answer.data.items.map((item: { item_id: number }) => item.item_id);
      log.redemptions.push(record);
    } else if (answer.code === 7) {
      return;
    } else if (answer.code !== 1501) {
      log.unexpected.push(`wallet.promocodeActivate answered ${JSON.stringify(answer)}`);
      return;
    }
  }
}

/**
 * A trading client: offers one or two of its user's items to another trader for up to one of
 * theirs, and has the partner accept at once. Two clients per user draw from one believed
 * inventory, so offers overlap and accepts race (603: an item moved first; 802: never here).
 */
async function trader(plan: StormPlan, log: StormLog, pools: Map<number, Set<number>>, userId: number): Promise<void> {
  const partners = [...plan.traders.keys()].filter((id) => id !== userId);
  for (;;) {
    const mine = pools.get(userId)!;
    if (mine.size === 0) return;
    const partner = partners[Math.floor(plan.random() * partners.length)]!;
    const give = pickFrom(plan.random, [...mine], 1 + Math.floor(plan.random() * 2));
    const take = pickFrom(plan.random, [...pools.get(partner)!], Math.floor(plan.random() * 2));
    const params: Record<string, unknown> = { user_id: partner, thing_ids_from: give.join(',') };
    if (take.length > 0) params.thing_ids_to = take.join(',');
    const created = await call(plan, log, 'trades.create', params, { token: plan.tokens.get(userId)! });
    if (created.code === 603) {
      mine.delete(give[0]!);
      continue;
    }
    if (created.code !== 0) {
      log.unexpected.push(`trades.create answered ${JSON.stringify(created)}`);
      return;
    }
    const trade: AckedTrade = {
      tradeId: created.data.trade_id,
      from: userId,
      to: partner,
      thingsFrom: give,
      thingsTo: take,
      accepted: false,
    };
    log.trades.push(trade);
    const accepted = await call(plan, log, 'trades.accept', { trade_id: trade.tradeId }, { token: plan.tokens.get(partner)! });
    if (accepted.code === 0) {
      trade.accepted = true;
      for (const id of give) {
        mine.delete(id);
        pools.get(partner)!.add(id);
      }
      for (const id of take) {
        pools.get(partner)!.delete(id);
        mine.add(id);
      }
    } else if (accepted.code !== 603) {
      log.unexpected.push(`trades.accept answered ${JSON.stringify(accepted)}`);
      return;
    }
  }
}

/** What the market clients believe: each user's items and what is on sale. */
interface MarketBoard {
  owned: Map<number, Set<number>>;
  /** Items on sale: their seller and price (kopecks). */
  listed: Map<number, { seller: number; price: number }>;
}

/**
 * A market client: sells (or reprices), cancels, buys another's listing, quick-sells or buys from
 * the shop, at random; two clients per user share its believed inventory, so they race each
 * other and the other users' buyers. Every acknowledged operation is recorded, and the one in
 * flight at the kill too.
 */
async function marketeer(plan: StormPlan, log: StormLog, board: MarketBoard, userId: number, client: number): Promise<void> {
  const token = plan.tokens.get(userId)!;
  const mine = board.owned.get(userId)!;
  const expected = [0, 603, 2101, 2102, 2103, 2104];
  for (let n = 0; ; n++) {
    const roll = plan.random();
    const others = [...board.listed].filter(([, l]) => l.seller !== userId);
    const own = [...board.listed].filter(([, l]) => l.seller === userId);
    let record: MarketRecord;
    let method: string;
    let params: Record<string, unknown>;
    if (roll < 0.35 && mine.size > 0) {
      const [itemId] = pickFrom(plan.random, [...mine], 1);
      const price = 100 * (1 + Math.floor(plan.random() * 3));
      record = { op: 'sell', userId, itemId: itemId!, price };
      [method, params] = ['market.sell', { thing_id: itemId, price: price / 100 }];
    } else if (roll < 0.65 && others.length > 0) {
      const [itemId, listing] = others[Math.floor(plan.random() * others.length)]!;
      record = { op: 'buy', userId, itemId, price: listing.price };
      [method, params] = ['market.buy', { thing_id: itemId, price: listing.price }];
    } else if (roll < 0.75 && own.length > 0) {
      const [itemId] = own[Math.floor(plan.random() * own.length)]!;
      record = { op: 'cancel', userId, itemId };
      [method, params] = ['market.cancel', { thing_id: itemId }];
    } else if (roll < 0.85 && mine.size > 0) {
      const [itemId] = pickFrom(plan.random, [...mine], 1);
      record = { op: 'quickSell', userId, itemId: itemId! };
      [method, params] = ['market.quickSell', { thing_id: itemId }];
    } else {
      const requestId = `m${plan.round}-u${userId}-c${client}-${n}`;
      record = { op: 'shop', userId, requestId };
      [method, params] = ['shop.buy', { item_proto_id: 101, request_id: requestId }];
    }
    log.pendingMarket.push(record);
    const answer = await call(plan, log, method, params, { token });
    log.pendingMarket.splice(log.pendingMarket.indexOf(record), 1);
    if (!expected.includes(answer.code)) {
      log.unexpected.push(`${method} answered ${JSON.stringify(answer)}`);
      return;
    }
    const itemId = record.op === 'shop' ? undefined : record.itemId;
    if (answer.code !== 0) {
      // Stale belief: another client got there first.
      if (itemId !== undefined && record.op !== 'buy' && record.op !== 'cancel') mine.delete(itemId);
      if (itemId !== undefined && (record.op === 'buy' || record.op === 'cancel')) board.listed.delete(itemId);
      continue;
    }
    if (record.op === 'shop') record.itemId = answer.data.item.item_id as number;
    log.market.push(record);
    switch (record.op) {
      case 'sell':
        mine.delete(record.itemId);
        board.listed.set(record.itemId, { seller: userId, price: record.price });
        break;
      case 'cancel':
        board.listed.delete(record.itemId);
        mine.add(record.itemId);
        break;
      case 'buy':
        board.listed.delete(record.itemId);
        mine.add(record.itemId);
        break;
      case 'quickSell':
        mine.delete(record.itemId);
        break;
      case 'shop':
        mine.add(record.itemId!);
        break;
    }
  }
}

/** One client per pair of users, asking, accepting, withdrawing and unfriending in random order. */
async function friendPair(plan: StormPlan, log: StormLog, record: PairRecord): Promise<void> {
  const ops: FriendOp[] = ['add_ab', 'add_ba', 'delete_ab', 'delete_ba'];
  for (;;) {
    const op = ops[Math.floor(plan.random() * ops.length)]!;
    const [from, to] = op.endsWith('_ab') ? [record.a, record.b] : [record.b, record.a];
    record.pending = op;
    const answer = await call(
      plan,
      log,
      op.startsWith('add') ? 'friends.add' : 'friends.delete',
      { user_id: to },
      { token: plan.tokens.get(from)! },
    );
    if (answer.code !== 0) {
      log.unexpected.push(`${op} ${from}->${to} answered ${JSON.stringify(answer)}`);
      return;
    }
    record.confirmed = applyFriendOp(record.confirmed, op);
    record.pending = null;
    record.acked++;
  }
}

/** A chatting user: kept messages, and now and then a `!` message that is pushed but not kept. */
async function chatter(plan: StormPlan, log: StormLog, userId: number): Promise<void> {
  for (let n = 0; ; n++) {
    const kept = n % 7 !== 3;
    const text = `${kept ? '' : '!'}round ${plan.round} user ${userId} message ${n} ${'x'.repeat(1 + Math.floor(plan.random() * 80))}`;
    const answer = await call(plan, log, 'gchat.send', { message: text }, { token: plan.tokens.get(userId)! });
    if (answer.code !== 0) {
      log.unexpected.push(`gchat.send answered ${JSON.stringify(answer)}`);
      return;
    }
    log.messages.push({ msgId: answer.data.msg_id, userId, text, kept });
  }
}

/**
 * A user writing private messages to the next chatter, and reading what the previous one wrote
 * (read marks race the sends); each message carries a send_id, so a retry could not store it twice.
 */
async function messenger(plan: StormPlan, log: StormLog, index: number): Promise<void> {
  const from = plan.chatters[index]!;
  const to = plan.chatters[(index + 1) % plan.chatters.length]!;
  const previous = plan.chatters[(index + plan.chatters.length - 1) % plan.chatters.length]!;
  const token = plan.tokens.get(from)!;
  for (let n = 0; ; n++) {
    if (n % 5 === 4) {
      const read = await call(plan, log, 'im.historyGet', { user_id: previous, count: 5 }, { token });
      if (read.code !== 0) {
        log.unexpected.push(`im.historyGet answered ${JSON.stringify(read)}`);
        return;
      }
    }
    const text = `round ${plan.round} from ${from} message ${n}`;
    const sendId = `${plan.round}-${from}-${n}`;
    const answer = await call(plan, log, 'im.send', { user_id: to, text, send_id: sendId }, { token }).catch((error: unknown) => {
      if (error instanceof ServerGone) log.pendingPrivateMessages.push({ from, to, text, sendId });
      throw error;
    });
    if (answer.code !== 0) {
      log.unexpected.push(`im.send answered ${JSON.stringify(answer)}`);
      return;
    }
    log.privateMessages.push({ msgId: answer.data.msg_id, from, to, text, sendId });
  }
}

/** A moderator deleting random kept messages. */
async function deleter(plan: StormPlan, log: StormLog): Promise<void> {
  while (!log.gone) {
    await new Promise((resolve) => setTimeout(resolve, 15));
    const candidates = log.messages.filter((m) => m.kept && !log.deletions.has(m.msgId));
    if (candidates.length === 0) continue;
    const message = candidates[Math.floor(plan.random() * candidates.length)]!;
    log.pendingDeletions.add(message.msgId);
    const answer = await call(plan, log, 'admin.deleteMessage', { msg_id: message.msgId }, { admin: true });
    if (answer.code !== 0) {
      log.unexpected.push(`admin.deleteMessage answered ${JSON.stringify(answer)}`);
      return;
    }
    log.pendingDeletions.delete(message.msgId);
    log.deletions.add(message.msgId);
  }
}

/**
 * Runs every client until the server stops answering (or, for crafters and the revoker, until
 * they run out of items); resolves once every client has stopped.
 */
export async function runStorm(plan: StormPlan, log: StormLog): Promise<void> {
  const pools: Pools = new Map();
  for (const [userId, ids] of plan.crafters) for (const id of ids) poolOf(pools, userId, 1).add(id);
  for (const [a, b] of plan.pairs) log.pairs.push({ a, b, confirmed: 'none', pending: null, acked: 0 });
  const tradePools = new Map([...plan.traders].map(([userId, ids]) => [userId, new Set(ids)]));
  const board: MarketBoard = { owned: new Map([...plan.marketeers].map(([userId, ids]) => [userId, new Set(ids)])), listed: new Map() };
  const clients: Promise<void>[] = [
    ...[...plan.crafters.keys()].flatMap((userId) => [crafter(plan, log, pools, userId), crafter(plan, log, pools, userId)]),
    ...[...plan.traders.keys()].flatMap((userId) => [trader(plan, log, tradePools, userId), trader(plan, log, tradePools, userId)]),
    revoker(plan, log, pools),
    ...log.pairs.map((record) => friendPair(plan, log, record)),
    ...plan.chatters.map((userId) => chatter(plan, log, userId)),
    ...plan.chatters.map((_, index) => messenger(plan, log, index)),
    deleter(plan, log),
    ...[...plan.openers].flatMap(([userId, owned]) => {
      const shared = { cases: new Set(owned.cases), keys: new Set(owned.keys) };
      return [opener(plan, log, userId, shared, 0), opener(plan, log, userId, shared, 1)];
    }),
    ...plan.redeemers.map((userId) => redeemer(plan, log, userId)),
    ...[...plan.marketeers.keys()].flatMap((userId) => [marketeer(plan, log, board, userId, 0), marketeer(plan, log, board, userId, 1)]),
  ];
  await Promise.all(
    clients.map((client) =>
      client.catch((error: unknown) => {
        if (!(error instanceof ServerGone)) log.unexpected.push(`client failed: ${(error as Error).stack}`);
      }),
    ),
  );
}

export function newStormLog(): StormLog {
  return {
    market: [],
    pendingMarket: [],
    crafts: [],
    trades: [],
    openings: [],
    pendingOpenings: [],
    redemptions: [],
    pendingRedemptions: [],
    revocations: [],
    pairs: [],
    messages: [],
    privateMessages: [],
    pendingPrivateMessages: [],
    retriedPrivateMessages: [],
    deletions: new Set(),
    pendingDeletions: new Set(),
    unexpected: [],
    requests: 0,
    gone: false,
  };
}
