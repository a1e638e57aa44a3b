import type { Database } from '../db/connection.js';
import type { Selectable } from 'kysely';
import type { ItemProtosTable } from '../db/tables.js';
import type { World, WorldItemProto } from './schema.js';
import { storedRank } from '../users/index.js';
import { exportLobby, readStoredWorld } from './queries.js';
import type { LedgerKind } from '../market/index.js';

const parse = <T>(text: string | null): T | undefined => (text === null ? undefined : (JSON.parse(text) as T));
/** Drops keys whose value is undefined, so the file carries only what is set. */
function compact<T extends Record<string, unknown>>(object: T): T {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as T;
}
const nn = <T>(v: T | null): T | undefined => (v === null ? undefined : v);
const flag = (v: number): 1 | undefined => (v === 1 ? 1 : undefined);

/** A stored prototype as a world-file entry. */
export function itemProtoEntry(p: Selectable<ItemProtosTable>): WorldItemProto {
  return compact({
    item_proto_id: p.item_proto_id,
    type: p.type,
    title: p.title,
    description: p.description,
    image: nn(p.image),
    quality_id: p.quality_id,
    collection_id: nn(p.collection_id),
    monopoly_id: nn(p.monopoly_id),
    sticker_group_id: nn(p.sticker_group_id),
    prices: parse(p.prices),
    key_item_proto_id: nn(p.key_item_proto_id),
    case_item_proto_ids: parse(p.case_item_proto_ids),
    drop: parse(p.drop_list),
    twin_item_proto_ids: parse(p.twin_item_proto_ids),
    can_craft: p.can_craft,
    craft_result: p.craft_result,
    item_proto_status: nn(p.item_proto_status),
    extra: parse(p.extra),
  }) as WorldItemProto;
}

type StoredWorld = Awaited<ReturnType<typeof readStoredWorld>>;
type Row<K extends keyof StoredWorld> = NonNullable<StoredWorld[K]> extends (infer R)[] ? R : NonNullable<StoredWorld[K]>;

function userEntry(db: Database, u: Row<'users'>, recoveryCodeHashes: string[]) {
  const hasTotp = u.totp_secret !== null;
  return compact({
    user_id: u.user_id,
    email: nn(u.email),
    password_hash: nn(u.password_hash),
    totp_secret: u.totp_secret === null ? undefined : db.secrets.open(u.totp_secret),
    domain: nn(u.domain),
    nick: u.nick,
    nicks_old: JSON.parse(u.nicks_old) as string[],
    gender: u.gender,
    avatar: u.avatar,
    avatar_key: nn(u.avatar_key),
    profile_cover: nn(u.profile_cover),
    approved: flag(u.approved),
    vip: flag(u.vip),
    moderator: flag(u.moderator),
    superadmin: flag(u.superadmin),
    rank: storedRank(u.rank),
    games: u.games,
    games_wins: u.games_wins,
    xp: u.xp,
    xp_level: u.xp_level,
    global_ban: flag(u.global_ban),
    captcha: u.captcha_always === 1 ? ('always' as const) : undefined,
    inventory_privacy: u.inventory_privacy,
    messages_privacy: u.im_privacy,
    muted_until: nn(u.muted_until),
    bot_owner: nn(u.bot_owner_id),
    online: flag(u.always_online),
    created_at: u.created_at,
    email_verified: u.email_verified,
    trades_income: u.trades_income,
    trades_income_from_friends: u.trades_income_from_friends,
    trades_income_gifts: u.trades_income_gifts,
    trades_income_gifts_autoaccept: u.trades_income_gifts_autoaccept,
    last_seen: u.last_seen,
    totp_last_step: nn(u.totp_last_step),
    // Codes left over from a secret since removed could never be asked for.
    recovery_code_hashes: hasTotp && recoveryCodeHashes.length > 0 ? recoveryCodeHashes : undefined,
  });
}

function itemEntry(i: Row<'items'>, e: Row<'equipped'> | undefined) {
  return compact({
    item_id: i.item_id,
    user_id: i.user_id,
    item_proto_id: i.item_proto_id,
    ts_owned: i.ts_owned,
    ts_can_trade: i.ts_can_trade,
    equip: e
      ? e.slot === 'badge'
        ? { slot: 'badge' as const }
        : compact({ game: e.game ?? '', slot: e.slot, monopoly_id: nn(e.monopoly_id) })
      : undefined,
    data: parse(i.data),
  });
}

function promocodeEntry(p: Row<'promocodes'>, uses: Row<'promocodeUses'>[]) {
  return compact({
    code: p.code,
    item_proto_ids: JSON.parse(p.item_proto_ids) as number[],
    max_uses: nn(p.max_uses),
    ts_expires: nn(p.ts_expires),
    disabled: flag(p.disabled),
    created_at: p.created_at,
    uses: p.uses,
    money: promocodeMoney(p),
    used_by:
      uses.length > 0 ? uses.map((u) => ({ user_id: u.user_id, ts: u.ts, item_ids: JSON.parse(u.item_ids) as number[] })) : undefined,
  });
}

function tradeItemEntry(e: Row<'tradeItems'>) {
  return compact({
    item_id: e.item_id,
    item_proto_id: e.item_proto_id,
    user_id: e.user_id,
    ts_owned: e.ts_owned,
    ts_can_trade: e.ts_can_trade,
    data: parse<Record<string, unknown>>(e.data),
  });
}

function tradeEntry(t: Row<'trades'>, things: Row<'tradeItems'>[]) {
  return compact({
    trade_id: t.trade_id,
    user_id_from: t.user_id_from,
    user_id_to: t.user_id_to,
    status: t.status,
    create_time: t.create_time,
    reaction_time: nn(t.reaction_time),
    things_from: things.filter((e) => e.side === 0).map(tradeItemEntry),
    things_to: things.filter((e) => e.side === 1).map(tradeItemEntry),
  });
}

function messageEntry(m: Row<'messages'>) {
  return compact({
    msg_id: m.msg_id,
    type: m.type as 1 | 2 | 3 | 4,
    user_id: m.user_id,
    ts: m.ts,
    text: nn(m.text),
    user_ids_mentioned: parse<number[]>(m.user_ids_mentioned),
    case_item_proto_id: nn(m.case_item_proto_id),
    drop_item_proto_id: nn(m.drop_item_proto_id),
    user_id_receiver: nn(m.user_id_receiver),
    item_proto_id: nn(m.item_proto_id),
    item_proto_ids: parse<number[]>(m.item_proto_ids),
  });
}

function promocodeMoney(p: Row<'promocodes'>) {
  return Number(p.money) > 0 ? Number(p.money) : undefined;
}

/** The ledger's transfers, each with its entries. */
function ledgerEntries(transfers: Row<'transfers'>[], entries: Row<'entries'>[]): World['ledger'] {
  const entriesOf = groupedBy(entries, (e) => Number(e.transfer_id));
  return transfers.map((t) =>
    compact({
      transfer_id: Number(t.transfer_id),
      ts: Number(t.ts),
      kind: t.kind as LedgerKind,
      item_id: t.item_id === null ? undefined : Number(t.item_id),
      item_proto_id: t.item_proto_id === null ? undefined : Number(t.item_proto_id),
      listing_id: t.listing_id === null ? undefined : Number(t.listing_id),
      reason: nn(t.reason),
      entries: (entriesOf.get(Number(t.transfer_id)) ?? []).map((e) =>
        compact({
          entry_id: Number(e.entry_id),
          account_id: Number(e.account_id),
          kind: e.kind as LedgerKind,
          amount: Number(e.amount),
          balance_after: e.balance_after === null ? undefined : Number(e.balance_after),
        }),
      ),
    }),
  ) as World['ledger'];
}

/** The rows by `key`, each group in the rows' order. */
function groupedBy<T, K>(rows: readonly T[], key: (row: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const row of rows) {
    const group = groups.get(key(row));
    if (group) group.push(row);
    else groups.set(key(row), [row]);
  }
  return groups;
}

/**
 * Writes the current world in the import format (passwords and recovery codes as hashes, owned
 * and listed items only, every trade and its moves, every promo code with its uses and who
 * redeemed it, the balances, the ledger, the listings, the sales and the market freezes).
 */
export async function exportWorld(db: Database): Promise<World> {
  // One snapshot of every table: on PostgreSQL a repeatable-read transaction on one
  // connection, on SQLite one read transaction, so writes committing meanwhile are all in or all out.
  const stored = await db.kysely
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => ({ ...(await readStoredWorld(trx)), lobby: await exportLobby(trx) }));
  const tradeItemsOf = groupedBy(stored.tradeItems, (entry) => entry.trade_id);
  const equipByItem = new Map(stored.equipped.map((e) => [e.item_id, e]));
  const usesOf = groupedBy(stored.promocodeUses, (use) => use.code);
  const chatState = stored.chatState;
  const recoveryCodesOf = groupedBy(stored.recoveryCodes, (code) => code.user_id);
  const progressOf = groupedBy(stored.missionProgress, (p) => Number(p.mission_id));

  return {
    collections: stored.collections.map((c) => ({ collection_id: c.collection_id, title: c.title })),
    qualities: stored.qualities.map((q) => ({ quality_id: q.quality_id, title: q.title, coeff_rent: q.coeff_rent })),
    item_types: stored.itemTypes.map((t) => ({ type: t.type, title: t.title })),
    item_protos: stored.protos.map(itemProtoEntry),
    users: stored.users.map((u) =>
      userEntry(
        db,
        u,
        (recoveryCodesOf.get(u.user_id) ?? []).map((code) => code.code_hash),
      ),
    ) as World['users'],
    items: stored.items.map((i) => itemEntry(i, equipByItem.get(i.item_id))) as World['items'],
    friends: stored.friendships.map((f) => ({ user_id: f.user_id, friend_id: f.friend_id, since: f.since })),
    friend_requests: stored.requests.map((r) => ({ from: r.from_user_id, to: r.to_user_id, ts: r.ts })),
    blocks: stored.blocks.map((b) => ({ user_id: b.user_id, blocked_user_id: b.blocked_user_id, ts: b.ts })),
    promocodes: stored.promocodes.map((p) => promocodeEntry(p, usesOf.get(p.code) ?? [])),
    // Never their secrets.
    apps: stored.apps.map((a) => ({
      app_id: a.app_id,
      name: a.name,
      redirect_uris: JSON.parse(a.redirect_uris) as string[],
      scopes: a.scopes as 0 | 1 | 2 | 3 | 8 | 9 | 10 | 11,
      public_client: flag(a.public_client),
      active: flag(a.active),
    })),
    trades: stored.trades.map((t) => tradeEntry(t, tradeItemsOf.get(t.trade_id) ?? [])),
    trade_moves: stored.moves.map((m) => ({
      trade_id: m.trade_id,
      item_id: m.item_id,
      from_user_id: m.from_user_id,
      to_user_id: m.to_user_id,
      ts: m.ts,
    })),
    private_messages: stored.privateMessages.map((m) => ({
      msg_id: m.msg_id,
      from: m.sender_id,
      to: m.receiver_id,
      text: m.text,
      ts_created: m.ts_created,
      is_read: m.is_read === 1 ? 1 : 0,
    })),
    balances: stored.balances.map((b) => ({ user_id: Number(b.user_id), balance: Number(b.balance) })),
    ledger: ledgerEntries(stored.transfers, stored.entries),
    listings: stored.listings.map((l) => ({
      listing_id: Number(l.listing_id),
      item_id: Number(l.item_id),
      price: Number(l.price),
      ts_listed: Number(l.ts_listed),
      ts_expires: Number(l.ts_expires),
    })),
    market_sales: stored.sales.map((m) => ({
      sale_id: Number(m.sale_id),
      listing_id: Number(m.listing_id),
      item_id: Number(m.item_id),
      item_proto_id: Number(m.item_proto_id),
      seller_id: Number(m.seller_id),
      buyer_id: Number(m.buyer_id),
      price: Number(m.price),
      fee: Number(m.fee),
      ts: Number(m.ts),
    })),
    market_freezes: stored.freezes.map((f) => ({ user_id: Number(f.user_id), ts: Number(f.ts), reason: f.reason })),
    missions: stored.missions.map((m) => ({
      mission_id: Number(m.mission_id),
      name: m.name,
      goal: m.goal,
      target: Number(m.target),
      reward_type: m.reward_type,
      reward: Number(m.reward),
      active: Number(m.active) === 1 ? 1 : 0,
      ts_created: Number(m.ts_created),
      progress: (progressOf.get(Number(m.mission_id)) ?? []).map((p) =>
        compact({
          user_id: Number(p.user_id),
          week: Number(p.week),
          counter: Number(p.counter),
          ts_rewarded: p.ts_rewarded === null ? undefined : Number(p.ts_rewarded),
        }),
      ),
    })),
    rooms: stored.lobby.rooms,
    games: stored.lobby.games,
    gchat: {
      status: {
        closed: chatState?.closed === 1,
        slowmode: chatState?.slowmode === 1,
        emoteonly: chatState?.emoteonly === 1,
        slowmode_interval: chatState?.slowmode_interval ?? 10,
      },
      messages: stored.messages.map(messageEntry),
    },
  };
}
