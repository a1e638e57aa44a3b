import { sql, type ExpressionBuilder, type QueryCreator } from 'kysely';
import type { OwnedRow } from '../catalog/index.js';
import type { DialectName, Executor } from '../db/connection.js';
import { Statement, type Placeholders } from '../db/statements.js';
import type { InventoryPrivacy, Tables, TradeItemsTable } from '../db/tables.js';
import { elementAt } from '../infra/elements.js';
import { type InvalidatedTrade, OWNED } from '../inventory/index.js';
import { TradeStatus } from './status.js';

/**
 * The open status as a literal, as the index of open trades (trades_open_by_age) names it:
 * compared with a bound value, SQLite would compile the statement again on every run.
 */
const OPEN = sql.lit(TradeStatus.OPEN);

/** Ids per statement: keeps each well under PostgreSQL's parameter limit. */
export const IDS_PER_STATEMENT = 1000;

const TRADE_COLUMNS = ['trade_id', 'user_id_from', 'user_id_to', 'status', 'create_time', 'reaction_time'] as const;

const TRADE_PRIVACY_COLUMNS = [
  'trades_income',
  'trades_income_from_friends',
  'trades_income_gifts',
  'trades_income_gifts_autoaccept',
] as const;

/** A user's settings for the trades offered to them. */
export type TradePrivacy = Record<(typeof TRADE_PRIVACY_COLUMNS)[number], number>;

/** A trade's row, as the parties and transitions read it. */
export interface TradeRecord {
  trade_id: number;
  user_id_from: number;
  user_id_to: number;
  status: number;
  create_time: number;
  reaction_time: number | null;
}

/** An item of a trade, its side, and its per-item data as it was when the trade was made. */
export interface TradeEntry {
  item_id: number;
  side: number;
  data: string | null;
}

/** A trade and its items in ascending item id, in one statement. */
const TRADE_WITH_ENTRIES = new Statement<{ tradeId: number }, TradeRecord & { [K in keyof TradeEntry]: TradeEntry[K] | null }>(
  ({ tradeId }) => sql`
    select trades.trade_id, trades.user_id_from, trades.user_id_to, trades.status, trades.create_time, trades.reaction_time,
      trade_items.item_id, trade_items.side, trade_items.data
    from trades left join trade_items on trade_items.trade_id = trades.trade_id
    where trades.trade_id = ${tradeId}
    order by trade_items.item_id`,
);

/** A trade and its items in ascending item id, in one statement; undefined when there is no such trade. */
export async function tradeWithEntries(
  executor: Executor,
  tradeId: number,
): Promise<{ trade: TradeRecord; entries: TradeEntry[] } | undefined> {
  const { rows } = await TRADE_WITH_ENTRIES.run(executor, { tradeId });
  const first = rows[0];
  if (first === undefined) return undefined;
  const { trade_id, user_id_from, user_id_to, status, create_time, reaction_time } = first;
  const entries: TradeEntry[] = [];
  for (const { item_id, side, data } of rows) if (item_id !== null && side !== null) entries.push({ item_id, side, data });
  return { trade: { trade_id, user_id_from, user_id_to, status, create_time, reaction_time }, entries };
}

/** A trade's items in ascending item id. */
export function tradeEntries(executor: Executor, tradeId: number): Promise<TradeEntry[]> {
  return executor
    .selectFrom('trade_items')
    .select(['item_id', 'side', 'data'])
    .where('trade_id', '=', tradeId)
    .orderBy('item_id')
    .execute();
}

const MARK_ACCEPTED = new Statement<{ tradeId: number; now: number; cutoff: number }>(
  ({ tradeId, now, cutoff }) => sql`
    update trades set status = ${TradeStatus.ACCEPTED}, reaction_time = ${now}
    where trade_id = ${tradeId} and status = ${OPEN} and create_time > ${cutoff}`,
);

/**
 * SQLite: moves an open trade to accepted, when it is still open and not expired: a conditional
 * update, so of concurrent transitions exactly one changes the row. False when it was no longer
 * open.
 */
export async function markAccepted(trx: Executor, tradeId: number, now: number, cutoff: number): Promise<boolean> {
  const opened = await MARK_ACCEPTED.run(trx, { tradeId, now, cutoff });
  return opened.numAffectedRows === 1n;
}

/** Marks a trade invalid (an item of it was no longer available). */
export async function markInvalid(trx: Executor, tradeId: number): Promise<void> {
  await trx.updateTable('trades').set({ status: TradeStatus.INVALID }).where('trade_id', '=', tradeId).execute();
}

/** One item changing hands in a trade, and the per-item data it carries before and after. */
export interface ItemMove {
  item_id: number;
  giver: number;
  receiver: number;
  /** As offered: the move happens only while the item still carries it. */
  expected: string | null;
  data: string;
}

/**
 * SQLite: moves the items, each only when still owned by its giver, and records each move in
 * the ledger (in ascending item id), in the caller's transaction. An item's trade lock becomes
 * `hold` seconds from `now`, or stays as it was when there is no hold. Answers how many items
 * moved.
 */
export async function moveItems(trx: Executor, tradeId: number, moves: ItemMove[], now: number, hold: number): Promise<number> {
  if (moves.length === 0) return 0;
  const sorted = [...moves].sort((a, b) => a.item_id - b.item_id);
  const update = hold > 0 ? MOVE_ITEMS.held : MOVE_ITEMS.free;
  const updated = await update.run(trx, {
    moves: sorted.map((m) => [m.item_id, m.giver, m.receiver, m.data]),
    now,
    canTrade: now + hold,
  });
  await RECORD_MOVES.run(trx, { tradeId, moves: sorted.map((m) => [m.item_id, m.giver, m.receiver]), now });
  return Number(updated.numAffectedRows ?? 0);
}

type MoveValues = { moves: [item_id: number, giver: number, receiver: number, data: string][]; now: number; canTrade: number };

/** Rows of values, each in parentheses, for a `values` list. */
const valueRows = (rows: readonly (readonly unknown[])[]) => sql.join(rows.map((row) => sql`(${sql.join(row)})`));

/** The items' update of moveItems: their trade lock `canTrade`, or (without a hold) as it was. */
const moveUpdate = (hold: boolean) =>
  new Statement<MoveValues>(({ moves, now, canTrade }) => {
    const tradeLock = hold ? sql`${canTrade}` : sql`items.ts_can_trade`;
    return sql`
      with m (item_id, giver, receiver, data) as (values ${valueRows(moves)})
      update items set user_id = m.receiver, ts_owned = ${now}, ts_can_trade = ${tradeLock}, data = m.data
      from m where items.item_id = m.item_id and items.user_id = m.giver and items.state = ${OWNED}`;
  });
const MOVE_ITEMS = { held: moveUpdate(true), free: moveUpdate(false) };

const RECORD_MOVES = new Statement<{ tradeId: number; moves: [item_id: number, giver: number, receiver: number][]; now: number }>(
  ({ tradeId, moves, now }) => sql`insert into trade_moves (trade_id, item_id, from_user_id, to_user_id, ts)
    values ${sql.join(moves.map((move) => sql`(${tradeId}, ${sql.join(move)}, ${now})`))}`,
);

/** What trade_accept answered: the trade's outcome, then the other trades it made invalid. */
export interface AcceptRow {
  /** `none`: no such trade of the caller's; `forbidden`: the caller is its sender. */
  kind: 'accepted' | 'invalid' | 'closed' | 'invalidated' | 'none' | 'forbidden';
  trade_id: number;
  user_id_from: number;
  user_id_to: number;
}

const ACCEPT_IN_ONE_STATEMENT = new Statement<
  { tradeId: number; callerId: number; now: number; cutoff: number; hold: number },
  { kind: AcceptRow['kind']; trade_id: string; user_id_from: string | null; user_id_to: string | null }
>(
  ({ tradeId, callerId, now, cutoff, hold }) => sql`
    select kind, trade_id, user_id_from, user_id_to from trade_accept(${tradeId}, ${callerId}, ${now}, ${cutoff}, ${hold})`,
);

/**
 * PostgreSQL: `callerId` accepts a trade in one statement (the function trade_accept of
 * migration 013; migration 011 describes its locks and answers), which reads the trade and its
 * items itself.
 */
export async function acceptInOneStatement(
  executor: Executor,
  tradeId: number,
  callerId: number,
  options: { now: number; cutoff: number; hold: number },
): Promise<AcceptRow[]> {
  const { rows } = await ACCEPT_IN_ONE_STATEMENT.run(executor, { tradeId, callerId, ...options });
  return rows.map((row) => ({
    kind: row.kind,
    trade_id: Number(row.trade_id),
    user_id_from: Number(row.user_id_from),
    user_id_to: Number(row.user_id_to),
  }));
}

const CREATE_IN_ONE_STATEMENT = new Statement<
  {
    fromId: number;
    toId: number;
    now: number;
    cutoff: number;
    maxOpen: number;
    since: number;
    maxRecent: number;
    friend: boolean;
    itemIds: number[];
    sides: number[];
    owners: number[];
  },
  { trade_id: string | null }
>(
  (v) => sql`
    select trade_create(${v.fromId}, ${v.toId}, ${v.now}, ${v.cutoff}, ${v.maxOpen}, ${v.since}, ${v.maxRecent}, ${v.friend},
      ${v.itemIds}::bigint[], ${v.sides}::integer[], ${v.owners}::bigint[]) as trade_id`,
);

/**
 * PostgreSQL: records a new trade in one statement (the function trade_create of migration 013),
 * when nothing refuses it: the sender has made fewer than `maxRecent` trades after `since` and
 * has fewer than `maxOpen` open, the receiver's settings admit it from a sender who is (or is
 * not) a `friend`, and every item is its owner's, owned, tradable and free. Undefined, nothing
 * written, when anything refuses it, and for a gift the receiver accepts at once.
 */
export async function createInOneStatement(
  executor: Executor,
  trade: { fromId: number; toId: number; items: { item_id: number; side: number; owner: number }[] },
  options: { now: number; cutoff: number; maxOpen: number; since: number; maxRecent: number; friend: boolean },
): Promise<number | undefined> {
  const items = [...trade.items].sort((a, b) => a.item_id - b.item_id);
  const { rows } = await CREATE_IN_ONE_STATEMENT.run(executor, {
    fromId: trade.fromId,
    toId: trade.toId,
    ...options,
    itemIds: items.map((i) => i.item_id),
    sides: items.map((i) => i.side),
    owners: items.map((i) => i.owner),
  });
  const tradeId = elementAt(rows, 0).trade_id;
  return tradeId === null ? undefined : Number(tradeId);
}

type TradeItemValues = [
  item_id: number,
  side: number,
  user_id: number,
  item_proto_id: number,
  ts_owned: number,
  ts_can_trade: number,
  data: string | null,
][];
type NewTradeValues = Pick<TradeRecord, 'user_id_from' | 'user_id_to' | 'status' | 'create_time' | 'reaction_time'>;

const tradeRecord = (t: Placeholders<NewTradeValues>) => sql<{
  trade_id: number | string;
}>`insert into trades (user_id_from, user_id_to, status, create_time, reaction_time)
    values (${t.user_id_from}, ${t.user_id_to}, ${t.status}, ${t.create_time}, ${t.reaction_time})
    returning trade_id`;
const tradeItemRows = (tradeId: unknown, items: Placeholders<{ items: TradeItemValues }>['items']) =>
  sql`insert into trade_items (trade_id, item_id, side, user_id, item_proto_id, ts_owned, ts_can_trade, data)
    values ${sql.join(items.map((item) => sql`(${tradeId}, ${sql.join(item)})`))}`;

const INSERT_TRADE = new Statement<NewTradeValues, { trade_id: number | string }>(tradeRecord);
const INSERT_TRADE_ITEMS = new Statement<{ tradeId: number; items: TradeItemValues }>(({ tradeId, items }) =>
  tradeItemRows(tradeId, items),
);
/** PostgreSQL: the trade and its items in one statement. */
const INSERT_TRADE_WITH_ITEMS = new Statement<NewTradeValues & { items: TradeItemValues }, { trade_id: number | string }>(
  (values) => sql`
    with created as (${tradeRecord(values)})
    ${tradeItemRows(sql`(select trade_id from created)`, values.items)}
    returning trade_id`,
);

/** Records a new trade and its items, in the caller's transaction (on PostgreSQL in one statement); answers its id. */
export async function insertTrade(
  trx: Executor,
  dialect: DialectName,
  trade: NewTradeValues,
  items: Omit<TradeItemsTable, 'trade_id'>[],
): Promise<number> {
  const rows: TradeItemValues = items.map((item) => [
    item.item_id,
    item.side,
    item.user_id,
    item.item_proto_id,
    item.ts_owned,
    item.ts_can_trade,
    item.data,
  ]);
  if (dialect === 'postgres' && rows.length > 0)
    return Number(elementAt((await INSERT_TRADE_WITH_ITEMS.run(trx, { ...trade, items: rows })).rows, 0).trade_id);
  const tradeId = Number(elementAt((await INSERT_TRADE.run(trx, trade)).rows, 0).trade_id);
  if (rows.length > 0) await INSERT_TRADE_ITEMS.run(trx, { tradeId, items: rows });
  return tradeId;
}

/** A trade by id; undefined when there is none. */
export function tradeById(executor: Executor, tradeId: number): Promise<TradeRecord | undefined> {
  return executor.selectFrom('trades').select(TRADE_COLUMNS).where('trade_id', '=', tradeId).executeTakeFirst();
}

/** A trade's status; undefined when there is no such trade. */
export async function tradeStatus(executor: Executor, tradeId: number): Promise<number | undefined> {
  const row = await executor.selectFrom('trades').select('status').where('trade_id', '=', tradeId).executeTakeFirst();
  return row?.status;
}

/**
 * Ends a trade still open (made after `cutoff`) with `status` and reaction time `now`: a
 * conditional update, so of concurrent transitions exactly one changes the row. False when it
 * was no longer open.
 */
export async function markEnded(
  executor: Executor,
  tradeId: number,
  status: typeof TradeStatus.DECLINED | typeof TradeStatus.REVOKED,
  now: number,
  cutoff: number,
): Promise<boolean> {
  const closed = await executor
    .updateTable('trades')
    .set({ status, reaction_time: now })
    .where('trade_id', '=', tradeId)
    .where('status', '=', OPEN)
    .where('create_time', '>', cutoff)
    .executeTakeFirst();
  return closed.numUpdatedRows === 1n;
}

/** A user's settings for the trades offered to them; undefined when there is no such user. */
export function tradePrivacy(executor: Executor, userId: number) {
  return executor.selectFrom('users').select(TRADE_PRIVACY_COLUMNS).where('user_id', '=', userId).executeTakeFirst();
}

/**
 * Up to `limit` open trades made at or before `cutoff`, oldest first (a walk of the index of
 * open trades, however many trades have ended). On PostgreSQL they stay locked until the
 * transaction ends, and trades locked by another transaction are skipped.
 */
export function expiredOpenTrades(db: QueryCreator<Tables>, dialect: DialectName, cutoff: number, limit: number) {
  const select = db
    .selectFrom('trades')
    .select('trade_id')
    .where('status', '=', OPEN)
    .where('create_time', '<=', cutoff)
    .orderBy('create_time')
    .orderBy('trade_id')
    .limit(limit);
  return dialect === 'postgres' ? select.forUpdate().skipLocked() : select;
}

/** The trades among `tradeIds` still open become expired, their reaction time `ttl` after they were made; answers them. */
export function markExpired(executor: Executor, tradeIds: number[], ttl: number) {
  return executor
    .updateTable('trades')
    .set({ status: TradeStatus.EXPIRED, reaction_time: sql<number>`create_time + ${ttl}` })
    .where('trade_id', 'in', tradeIds)
    .where('status', '=', OPEN)
    .returning(['trade_id', 'user_id_from', 'user_id_to'])
    .execute();
}

/** A trade made invalid, and its parties (the inventory's hooks name it: they end such trades). */
export type { InvalidatedTrade };

/**
 * The open trades made after `cutoff` that hold any of the items (at most IDS_PER_STATEMENT of
 * them), other than `except`, in id order; on PostgreSQL locked in that order until the
 * transaction ends. They are found from the items' entries in trade_items and then by id: the
 * status is compared as `status + 0`, which no index serves, so that the index of open trades
 * (trades_open_by_age) is never read for it. On PostgreSQL that index keeps an entry for every
 * trade that left `open` until the table is vacuumed, and a busy server would read thousands of
 * them on every craft, opening, revocation and acceptance.
 */
export function openTradesHolding(
  db: QueryCreator<Tables>,
  dialect: DialectName,
  itemIds: readonly number[],
  cutoff: number,
  except?: number,
) {
  let query = db
    .selectFrom('trades')
    .select(['trade_id', 'user_id_from', 'user_id_to'])
    .where(sql<number>`trades.status + 0`, '=', OPEN)
    .where('create_time', '>', cutoff)
    .where('trade_id', 'in', (eb) =>
      eb
        .selectFrom('trade_items')
        .select('trade_id')
        .where('item_id', 'in', [...itemIds]),
    )
    .orderBy('trade_id');
  if (except !== undefined) query = query.where('trade_id', '<>', except);
  if (dialect === 'postgres') query = query.forUpdate();
  return query;
}

/**
 * The open trades made after `cutoff` of `userId` (with `partnerId`, only those between the two),
 * in id order; on PostgreSQL locked in that order until the transaction ends.
 */
export function openTradesOf(db: QueryCreator<Tables>, dialect: DialectName, userId: number, cutoff: number, partnerId?: number) {
  const query = db
    .selectFrom('trades')
    .select(['trade_id', 'user_id_from', 'user_id_to'])
    .where('status', '=', OPEN)
    .where('create_time', '>', cutoff)
    .where((eb) =>
      partnerId === undefined
        ? eb.or([eb('user_id_from', '=', userId), eb('user_id_to', '=', userId)])
        : eb.or([
            eb.and([eb('user_id_from', '=', userId), eb('user_id_to', '=', partnerId)]),
            eb.and([eb('user_id_from', '=', partnerId), eb('user_id_to', '=', userId)]),
          ]),
    )
    .orderBy('trade_id');
  return dialect === 'postgres' ? query.forUpdate() : query;
}

/** Open trades found by openTradesHolding or openTradesOf (and locked, on PostgreSQL) become invalid. */
export async function closeInvalidated(trx: Executor, trades: readonly InvalidatedTrade[], now: number): Promise<void> {
  const ids = trades.map((t) => t.trade_id);
  for (let i = 0; i < ids.length; i += IDS_PER_STATEMENT)
    await trx
      .updateTable('trades')
      .set({ status: TradeStatus.INVALID, reaction_time: now })
      .where('trade_id', 'in', ids.slice(i, i + IDS_PER_STATEMENT))
      .where('status', '=', OPEN)
      .execute();
}

/** An item as a trade checks it: who owns it, whether it is still owned, tradable and free. */
export interface CheckedItem extends OwnedRow {
  state: string;
  /** 0: the stock class, which no one but the owner sees. */
  quality_id: number;
  equipped: unknown;
  /** Read to settle a trade: whether another open trade holds it. */
  held?: unknown;
}

/** Whether an item sits on a board or the profile. */
const IS_EQUIPPED = sql`exists (select equipped.item_id from equipped where equipped.item_id = items.item_id)`;

/** Whether an open trade made after `cutoff`, other than `except`, holds the item. */
const heldElsewhere = (except: unknown, cutoff: unknown) =>
  sql`exists (select trade_items.trade_id from trade_items inner join trades on trades.trade_id = trade_items.trade_id
    where trade_items.item_id = items.item_id and trade_items.trade_id <> ${except}
      and trades.status = ${OPEN} and trades.create_time > ${cutoff})`;

const CHECKED_SELECT = sql`item_id, user_id, item_proto_id, ts_owned, ts_can_trade, data, state, quality_id, ${IS_EQUIPPED} as equipped`;

type ItemLock = 'update' | 'share' | false;

/**
 * The row lock a read of items takes, on PostgreSQL only, in id order (writers of overlapping
 * items wait, never deadlock): `update` for a writer that moves them, `share` for one that only
 * needs them to stay where they are until it commits.
 */
function lockClause(lock: ItemLock) {
  if (!lock) return sql``;
  return lock === 'update' ? sql` for update` : sql` for share`;
}

/** The lock a statement's text says (none on SQLite, which takes no row locks). */
const lockFor = (options: { lock: ItemLock; postgres: boolean }): ItemLock => (options.postgres ? options.lock : false);

const ITEMS_TO_SETTLE = new Statement<{ ids: number[]; except: number; cutoff: number }, CheckedItem>(
  ({ ids, except, cutoff }) => sql`
    select ${CHECKED_SELECT}, ${heldElsewhere(except, cutoff)} as held
    from items where item_id in (${sql.join(ids)})
    order by item_id`,
);

/**
 * SQLite: the items of a trade being accepted, by id in ascending id, each saying whether an
 * open trade made after `cutoff` other than `except` holds it too.
 */
export async function readItemsToSettle(
  executor: Executor,
  ids: readonly number[],
  others: { except: number; cutoff: number },
): Promise<CheckedItem[]> {
  if (ids.length === 0) return [];
  return (await ITEMS_TO_SETTLE.run(executor, { ids: [...ids], ...others })).rows;
}

/** A count of the sender's trades, and when the oldest of them was made. */
export interface SentTrades {
  n: number;
  oldest: number | null;
}

/** What a new trade is checked against. */
export interface CreationReads {
  items: CheckedItem[];
  /** The sender's trades still open. */
  open: SentTrades;
  /** The sender's trades made in the window of creations a minute. */
  recent: SentTrades;
  /** The receiver's trade settings; undefined when there is no such user. */
  privacy: TradePrivacy | undefined;
  /** The receiver's inventory privacy; undefined when there is no such user. */
  inventoryPrivacy: InventoryPrivacy | undefined;
  /** One of the two has blocked the other. */
  blocked: boolean;
  /** Globally blocked accounts. */
  banned: { sender: boolean; receiver: boolean };
}

type CreationRow = Partial<CheckedItem> &
  Record<`${'open' | 'recent'}_${'n' | 'oldest'}`, number | string | null> &
  Record<(typeof TRADE_PRIVACY_COLUMNS)[number], number | null> & {
    inventory_privacy: InventoryPrivacy | null;
    global_ban: number | null;
    blocks_n: number | string;
    sender_ban: number | null;
  };

const sentTrades = (n: number | string | null, oldest: number | string | null): SentTrades => ({
  n: Number(n),
  oldest: oldest === null ? null : Number(oldest),
});

type CreationValues = { fromId: number; toId: number; cutoff: number; since: number };

/** The receiver's columns an offer is checked against. */
const RECEIVER_COLUMNS = [...TRADE_PRIVACY_COLUMNS, 'inventory_privacy', 'global_ban'] as const;

/** The sender's open and recent trades, the receiver's settings, blocks and bans, as columns (see readForCreation). */
function creationColumns({ fromId, toId, cutoff, since }: Placeholders<CreationValues>) {
  const open = sql`from trades where trades.user_id_from = ${fromId} and trades.status = ${OPEN} and trades.create_time > ${cutoff}`;
  const recent = sql`from trades where trades.user_id_from = ${fromId} and trades.create_time > ${since}`;
  const blocks = sql`from blocks where (blocks.user_id = ${fromId} and blocks.blocked_user_id = ${toId})
    or (blocks.user_id = ${toId} and blocks.blocked_user_id = ${fromId})`;
  return sql.join([
    sql`(select count(*) ${blocks}) as blocks_n`,
    sql`(select users.global_ban from users where users.user_id = ${fromId}) as sender_ban`,
    sql`(select count(*) ${open}) as open_n`,
    sql`(select min(trades.create_time) ${open}) as open_oldest`,
    sql`(select count(*) ${recent}) as recent_n`,
    sql`(select min(trades.create_time) ${recent}) as recent_oldest`,
    ...RECEIVER_COLUMNS.map(
      (column) => sql`(select users.${sql.ref(column)} from users where users.user_id = ${toId}) as ${sql.ref(column)}`,
    ),
  ]);
}

const itemsForCreation = (lock: ItemLock) =>
  new Statement<CreationValues & { itemIds: number[] }, CreationRow>(
    (values) => sql`
      select ${CHECKED_SELECT}, ${creationColumns(values)}
      from items where item_id in (${sql.join(values.itemIds)})
      order by item_id${lockClause(lock)}`,
  );
const ITEMS_FOR_CREATION = { update: itemsForCreation('update'), share: itemsForCreation('share'), none: itemsForCreation(false) };
/** The only row when none of the items exists. */
const CREATION_WITHOUT_ITEMS = new Statement<CreationValues, CreationRow>((values) => sql`select ${creationColumns(values)}`);

/**
 * What a new trade from `fromId` to `toId` is checked against, the items by id in ascending id
 * (`lock`: see lockClause): the sender's open trades (made after `cutoff`) and trades made after
 * `since`, and the receiver's settings, ride along with every item row, in one statement (a
 * second makes the only row when none of the items exists).
 */
export async function readForCreation(
  executor: Executor,
  trade: CreationValues & { itemIds: readonly number[] },
  options: { lock: ItemLock; postgres: boolean },
): Promise<CreationReads> {
  const { fromId, toId, cutoff, since } = trade;
  const values = { fromId, toId, cutoff, since };
  let { rows } = await ITEMS_FOR_CREATION[lockFor(options) || 'none'].run(executor, { ...values, itemIds: [...trade.itemIds] });
  // None of the items exists: the trade is refused, after the checks that come first.
  if (rows.length === 0) ({ rows } = await CREATION_WITHOUT_ITEMS.run(executor, values));
  const first = elementAt(rows, 0);
  const privacy =
    first.trades_income === null
      ? undefined
      : {
          trades_income: Number(first.trades_income),
          trades_income_from_friends: Number(first.trades_income_from_friends),
          trades_income_gifts: Number(first.trades_income_gifts),
          trades_income_gifts_autoaccept: Number(first.trades_income_gifts_autoaccept),
        };
  return {
    items: first.item_id === undefined ? [] : (rows as CheckedItem[]),
    open: sentTrades(first.open_n, first.open_oldest),
    recent: sentTrades(first.recent_n, first.recent_oldest),
    privacy,
    inventoryPrivacy: first.inventory_privacy ?? undefined,
    blocked: Number(first.blocks_n) > 0,
    banned: { sender: first.sender_ban === 1, receiver: first.global_ban === 1 },
  };
}

/**
 * A user's items that may change hands now, newest first: owned, not equipped, not
 * trade-locked (the prototype's status is checked by the caller against the catalogue).
 * Without `stock`, stock-class items are left out, as inventory.get leaves them out for
 * anyone but their owner.
 */
export async function tradableItemsOf(executor: Executor, userId: number, now: number, { stock }: { stock: boolean }): Promise<OwnedRow[]> {
  let query = executor
    .selectFrom('items')
    .select(['item_id', 'user_id', 'item_proto_id', 'ts_owned', 'ts_can_trade', 'data'])
    .where('user_id', '=', userId)
    .where('state', '=', OWNED)
    .where('ts_can_trade', '<>', -1)
    .where('ts_can_trade', '<=', now)
    .where(sql<boolean>`not ${IS_EQUIPPED}`);
  if (!stock) query = query.where('quality_id', '>', 0);
  return query.orderBy('ts_owned', 'desc').orderBy('item_id', 'desc').execute();
}

/** The items of these trades as they were when each was made, by trade and then item id. */
export function itemsOfTrades(executor: Executor, tradeIds: number[]) {
  return executor
    .selectFrom('trade_items')
    .select(['trade_id', 'item_id', 'side', 'user_id', 'item_proto_id', 'ts_owned', 'ts_can_trade', 'data'])
    .where('trade_id', 'in', tradeIds)
    .orderBy('trade_id')
    .orderBy('item_id')
    .execute();
}

export type TradeListKind = 'income' | 'outbound' | 'history' | 'all';

/** Which trades a list holds, at `cutoff`: offered to the user, offered by them, all of theirs, or no longer open (with one partner, when given). */
export interface TradeListQuery {
  kind: TradeListKind;
  userId: number;
  cutoff: number;
  partnerId?: number;
}

/** Open at `cutoff`: status 0 and not yet expired. */
const isOpen = (cutoff: number) => (eb: ExpressionBuilder<Tables, 'trades'>) =>
  eb.and([eb('status', '=', OPEN), eb('create_time', '>', cutoff)]);
const isClosed = (cutoff: number) => (eb: ExpressionBuilder<Tables, 'trades'>) =>
  eb.or([eb('status', '<>', OPEN), eb('create_time', '<=', cutoff)]);

function listCondition({ kind, userId, cutoff, partnerId }: TradeListQuery) {
  return (eb: ExpressionBuilder<Tables, 'trades'>) => {
    if (kind === 'income') return eb.and([eb('user_id_to', '=', userId), isOpen(cutoff)(eb)]);
    if (kind === 'outbound') return eb.and([eb('user_id_from', '=', userId), isOpen(cutoff)(eb)]);
    if (kind === 'all') return eb.or([eb('user_id_from', '=', userId), eb('user_id_to', '=', userId)]);
    const parties =
      partnerId === undefined
        ? eb.or([eb('user_id_from', '=', userId), eb('user_id_to', '=', userId)])
        : eb.or([
            eb.and([eb('user_id_from', '=', userId), eb('user_id_to', '=', partnerId)]),
            eb.and([eb('user_id_from', '=', partnerId), eb('user_id_to', '=', userId)]),
          ]);
    return eb.and([parties, isClosed(cutoff)(eb)]);
  };
}

/** One page of a list's trades, newest first. */
export function tradeListPage(executor: Executor, list: TradeListQuery, page: { offset: number; count: number }): Promise<TradeRecord[]> {
  return executor
    .selectFrom('trades')
    .select(TRADE_COLUMNS)
    .where(listCondition(list))
    .orderBy('trade_id', 'desc')
    .limit(page.count)
    .offset(page.offset)
    .execute();
}

/** How many trades a list holds. */
export async function countTradeList(executor: Executor, list: TradeListQuery): Promise<number> {
  const row = await executor
    .selectFrom('trades')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where(listCondition(list))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
