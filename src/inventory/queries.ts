import { sql, type ExpressionBuilder, type Insertable, type SelectQueryBuilder } from 'kysely';
import type { DialectName, Executor } from '../db/connection.js';
import type { DrawsTable, InventoryPrivacy, ItemState, ItemsTable, Tables } from '../db/tables.js';
import type { Services } from '../services.js';
import { elementAt } from '../infra/elements.js';
import type { OwnedRow } from '../catalog/index.js';
import type { InvalidatedTrade } from './hooks.js';

export type InventoryOrder = 'time' | 'quality';

export interface ListOptions {
  includeStock: boolean;
  order: InventoryOrder;
  /** Absent: every item. */
  limit?: number;
  /**
   * How many stock-class items the user owns, when known: a walk of items_by_time that skips
   * them reads through them, so with no more of them than `limit` it is the cheaper plan.
   */
  stockOwned?: number;
}

const OWNED_COLUMNS = ['item_id', 'user_id', 'item_proto_id', 'ts_owned', 'ts_can_trade', 'data'] as const;

/**
 * `state = 'owned'` as a literal, as the indexes of owned items (items_by_time, items_by_quality)
 * name it: compared with a bound value, SQLite would compile the statement again on every run.
 */
export const OWNED = sql.lit<ItemState>('owned');

/**
 * A column compared by the statements that change items by id: SQLite would pick an index of
 * owned items (by user) over the primary key and walk the whole inventory; a unary plus keeps
 * the column out of its index choice.
 */
const notIndexedColumn = (dialect: DialectName, column: 'user_id' | 'state') =>
  dialect === 'postgres' ? sql.ref(column) : sql`+${sql.ref(column)}`;

function ownedBy(services: Services, userId: number) {
  return services.db.kysely.selectFrom('items').select(OWNED_COLUMNS).where('user_id', '=', userId).where('state', '=', OWNED);
}

/**
 * The classes above stock that a user's owned items have, highest first: a walk down
 * items_by_quality, one index seek per class, however large the inventory.
 */
export function ownedClassesQuery(userId: number) {
  return sql<{ quality_id: number }>`
    with recursive classes (quality_id) as (
      select max(quality_id) from items where user_id = ${userId} and state = 'owned'
      union all
      select (select max(i.quality_id) from items i where i.user_id = ${userId} and i.state = 'owned' and i.quality_id < c.quality_id)
      from classes c where c.quality_id > 0
    )
    select quality_id from classes where quality_id > 0`;
}

/**
 * A limited list by time without stock is merged from one walk per class: stock items sit
 * in items_by_time between the others, and a walk of it that skips them would read them all.
 */
export const mergesClasses = (options: ListOptions): options is ListOptions & { limit: number } =>
  options.order === 'time' &&
  !options.includeStock &&
  options.limit !== undefined &&
  !(options.stockOwned !== undefined && options.stockOwned <= options.limit);

/**
 * The query that lists a user's owned items (see listOwnedItems). `classes`: when
 * mergesClasses(options), the classes above stock the user owns (ownedClassesQuery), at
 * least one.
 */
export function ownedItemsQuery(services: Services, userId: number, options: ListOptions, classes: number[] = []) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a constraint on Kysely's builders, whose method signatures are generic
  const newestFirst = <Q extends { orderBy: (...args: any[]) => any }>(query: Q) =>
    query.orderBy('ts_owned', 'desc').orderBy('item_id', 'desc') as Q;
  if (mergesClasses(options)) {
    if (classes.length === 0) throw new Error('a list merged from classes needs at least one class');
    // The newest `limit` items of each class, a prefix of items_by_quality each, merged.
    const limit = options.limit;
    const perClass = classes.map((qualityId) =>
      services.db.kysely
        .selectFrom(
          newestFirst(ownedBy(services, userId).where('quality_id', '=', qualityId))
            .limit(limit)
            .as('newest'),
        )
        .selectAll(),
    );
    const merged = perClass.slice(1).reduce((all, next) => all.unionAll(next), elementAt(perClass, 0));
    return newestFirst(services.db.kysely.selectFrom(merged.as('merged')).selectAll()).limit(limit);
  }
  let query = ownedBy(services, userId);
  if (!options.includeStock) {
    // Every item by time: SQLite would otherwise walk items_by_quality for the filter and
    // sort the whole inventory; `+quality_id` keeps it on items_by_time, already in order.
    const quality = options.order === 'time' && services.db.dialect === 'sqlite' ? sql<number>`+quality_id` : sql<number>`quality_id`;
    query = query.where(quality, '>', 0);
  }
  if (options.order === 'quality') query = query.orderBy('quality_id', 'desc');
  query = newestFirst(query);
  if (options.limit !== undefined) query = query.limit(options.limit);
  return query;
}

/**
 * A user's owned items, newest first (`time`) or highest class first, then newest (`quality`);
 * ties on time fall to the higher item_id. Each order walks its own index (items_by_time,
 * items_by_quality), so a small limit reads only about that many rows.
 */
export async function listOwnedItems(services: Services, userId: number, options: ListOptions): Promise<OwnedRow[]> {
  if (options.limit === 0) return [];
  let classes: number[] = [];
  if (mergesClasses(options)) {
    classes = (await ownedClassesQuery(userId).execute(services.db.kysely)).rows.map((r) => Number(r.quality_id));
    if (classes.length === 0) return [];
  }
  return ownedItemsQuery(services, userId, options, classes).execute();
}

export interface OwnedCounts {
  owned: number;
  /** of them stock class */
  stock: number;
}

/** How many items a user owns, and how many of them are stock class: one row of inventory_counts. */
export async function countOwnedItems(services: Services, userId: number): Promise<OwnedCounts> {
  const row = await services.db.kysely
    .selectFrom('inventory_counts')
    .select(['owned', 'stock'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row ? { owned: Number(row.owned), stock: Number(row.stock) } : { owned: 0, stock: 0 };
}

export interface EquippedRow {
  item_id: number;
  slot: string;
  game: string | null;
  monopoly_id: number | null;
}

/** Equipped items of a user that are still owned, in ascending item_id. */
export async function loadEquipped(services: Services, userId: number): Promise<EquippedRow[]> {
  return services.db.kysely
    .selectFrom('equipped')
    .innerJoin('items', 'items.item_id', 'equipped.item_id')
    .select(['equipped.item_id', 'equipped.slot', 'equipped.game', 'equipped.monopoly_id'])
    .where('equipped.user_id', '=', userId)
    .where('items.user_id', '=', userId)
    .where('items.state', '=', OWNED)
    .orderBy('equipped.item_id')
    .execute();
}

export interface EquippedBoard {
  cards: Record<string, number[]>;
  generator: number;
  joke: number;
}

export interface EquippedTree {
  game: Record<string, EquippedBoard>;
  profile?: { badges: number[] };
}

/**
 * `{ game: { <board>: { cards: { <monopoly_id>: [ids] }, generator, joke } }, profile?: { badges } }`.
 * Every board carries all three slots, as clients expect: no card is `{}`, no generator or
 * taunt is 0 (no item has that id).
 */
export function equippedTree(rows: EquippedRow[]): EquippedTree {
  const tree: EquippedTree = { game: {} };
  for (const row of rows) {
    if (row.slot === 'badge') {
      (tree.profile ??= { badges: [] }).badges.push(row.item_id);
      continue;
    }
    if (row.game === null) continue;
    const board = (tree.game[row.game] ??= { cards: {}, generator: 0, joke: 0 });
    if (row.slot === 'cards') {
      (board.cards[String(row.monopoly_id ?? 0)] ??= []).push(row.item_id);
    } else if (row.slot === 'generator') board.generator = row.item_id;
    else if (row.slot === 'joke') board.joke = row.item_id;
  }
  return tree;
}

/** Whether an item sits on a board or the profile. */
const isEquipped = (eb: ExpressionBuilder<Tables, 'items'>) =>
  eb.exists(eb.selectFrom('equipped').select('equipped.item_id').whereRef('equipped.item_id', '=', 'items.item_id'));

/** An item as a craft checks it before consuming it. */
export interface CraftInput {
  item_id: number;
  user_id: number;
  item_proto_id: number;
  type: number;
  quality_id: number;
  ts_can_trade: number;
  state: string;
  equipped: unknown;
}

/** The items by id, in ascending id, with what decides whether a craft may consume them. */
export function readCraftInputs(executor: Executor, ids: number[]): Promise<CraftInput[]> {
  return executor
    .selectFrom('items')
    .select(['item_id', 'user_id', 'item_proto_id', 'type', 'quality_id', 'ts_can_trade', 'state'])
    .select((eb) => isEquipped(eb).as('equipped'))
    .where('item_id', 'in', ids)
    .orderBy('item_id')
    .execute();
}

/** An item a craft consumed: what decides the result. */
export interface ConsumedInput {
  item_id: number;
  item_proto_id: number;
  type: number;
  quality_id: number;
}

/** The conditions under which a craft consumes an item: the caller's, owned, tradable now, not equipped. */
function consumable(dialect: DialectName, userId: number, now: number) {
  return sql`${notIndexedColumn(dialect, 'user_id')} = ${userId} and ${notIndexedColumn(dialect, 'state')} = ${OWNED} and ts_can_trade <> -1 and ts_can_trade <= ${now}
    and not exists (select 1 from equipped where equipped.item_id = items.item_id)`;
}

/**
 * Records a craft and consumes those of its items that are the user's, owned, tradable now
 * and not equipped, in the caller's transaction; answers the craft's id and the items
 * consumed (fewer than asked when some were not usable, and then possibly no craft id).
 * On PostgreSQL the items are locked in id order before any of them changes, in the same
 * statement, so overlapping crafts wait for each other instead of deadlocking. Written as
 * SQL text: crafts run many times a second, and building the statements with the query
 * builder cost more than running them.
 */
export async function recordCraftConsuming(
  trx: Executor,
  dialect: DialectName,
  userId: number,
  ids: number[],
  now: number,
): Promise<{ craftId: number | undefined; consumed: ConsumedInput[] }> {
  const idList = sql.join(ids);
  const consumedIds = JSON.stringify(ids);
  if (dialect !== 'postgres') {
    const { rows } = await sql<{ craft_id: number }>`
      insert into crafts (user_id, ts, result_item_id, consumed_item_ids) values (${userId}, ${now}, null, ${consumedIds})
      returning craft_id`.execute(trx);
    const craftId = elementAt(rows, 0).craft_id;
    const consumed = await sql<ConsumedInput>`
      update items set state = 'consumed', ended_at = ${now}, craft_id = ${craftId}
      where item_id in (${idList}) and ${consumable(dialect, userId, now)}
      returning item_id, item_proto_id, type, quality_id`.execute(trx);
    return { craftId, consumed: consumed.rows };
  }
  // One round trip locks the items, records the craft and consumes them (data-modifying CTEs).
  const { rows } = await sql<ConsumedInput & { craft_id: number }>`
    with locked as (select item_id from items where item_id in (${idList}) order by item_id for update),
    craft as (
      insert into crafts (user_id, ts, result_item_id, consumed_item_ids) values (${userId}, ${now}, null, ${consumedIds})
      returning craft_id
    ),
    consumed as (
      update items set state = 'consumed', ended_at = ${now}, craft_id = (select craft_id from craft)
      where item_id in (select item_id from locked) and ${consumable(dialect, userId, now)}
      returning item_id, item_proto_id, type, quality_id
    )
    select item_id, item_proto_id, type, quality_id, (select craft_id from craft) as craft_id from consumed`.execute(trx);
  const first = rows[0];
  return {
    craftId: first === undefined ? undefined : Number(first.craft_id),
    consumed: rows.map(({ item_id, item_proto_id, type, quality_id }) => ({ item_id, item_proto_id, type, quality_id })),
  };
}

/** The item a craft made. */
export interface CraftResultItem {
  protoId: number;
  type: number;
  qualityId: number;
}

/**
 * Creates a craft's result for the user and links it to the craft, in the caller's
 * transaction, and finds the open trades holding any of the consumed items (`holding`, from
 * the inventory's hooks), which the caller makes invalid; on PostgreSQL in one statement, which
 * locks those trades in id order (after the consume step has locked the items and the user's
 * counts).
 */
export async function createCraftResult(
  trx: Executor,
  dialect: DialectName,
  craft: { userId: number; craftId: number },
  result: CraftResultItem,
  now: number,
  holding: SelectQueryBuilder<Tables, 'trades', InvalidatedTrade>,
): Promise<{ row: OwnedRow; holding: InvalidatedTrade[] }> {
  const { userId, craftId } = craft;
  const create = sql<OwnedRow>`
    insert into items (user_id, item_proto_id, type, quality_id, ts_owned, ts_can_trade, state, created_by_craft_id)
    values (${userId}, ${result.protoId}, ${result.type}, ${result.qualityId}, ${now}, 0, ${OWNED}, ${craftId})
    returning item_id, user_id, item_proto_id, ts_owned, ts_can_trade, data`;
  if (dialect === 'postgres') {
    const { rows } = await sql<OwnedRow & { holding: InvalidatedTrade[] }>`
      with created as (${create}),
      linked as (update crafts set result_item_id = (select item_id from created) where craft_id = ${craftId} returning craft_id),
      holding as (${holding})
      select item_id, user_id, item_proto_id, ts_owned, ts_can_trade, data,
        (select coalesce(json_agg(json_build_object('trade_id', trade_id, 'user_id_from', user_id_from, 'user_id_to', user_id_to) order by trade_id), '[]') from holding) as holding
      from created`.execute(trx);
    const { holding: found, ...row } = elementAt(rows, 0);
    return {
      row,
      holding: found.map((t) => ({ trade_id: Number(t.trade_id), user_id_from: Number(t.user_id_from), user_id_to: Number(t.user_id_to) })),
    };
  }
  const found = await holding.execute();
  const row = elementAt((await create.execute(trx)).rows, 0);
  await sql`update crafts set result_item_id = ${row.item_id} where craft_id = ${craftId}`.execute(trx);
  return { row, holding: found };
}

/** Whether the user exists. */
export async function userExists(executor: Executor, userId: number): Promise<boolean> {
  const user = await executor.selectFrom('users').select('user_id').where('user_id', '=', userId).executeTakeFirst();
  return user !== undefined;
}

/**
 * Whether `friendId` is among the user's friends. With `lock` (in a transaction, on PostgreSQL),
 * the friendship cannot end before the transaction does.
 */
export async function isFriend(executor: Executor, userId: number, friendId: number, lock?: DialectName): Promise<boolean> {
  let query = executor.selectFrom('friendships').select('friend_id').where('user_id', '=', userId).where('friend_id', '=', friendId);
  if (lock === 'postgres') query = query.forShare();
  return (await query.executeTakeFirst()) !== undefined;
}

/** Who may read the user's inventory; undefined when the user does not exist. */
export async function readInventoryPrivacy(executor: Executor, userId: number): Promise<InventoryPrivacy | undefined> {
  const user = await executor.selectFrom('users').select('inventory_privacy').where('user_id', '=', userId).executeTakeFirst();
  return user?.inventory_privacy;
}

/** What a new item copies from its prototype; undefined when the prototype does not exist. */
export function readProtoClass(executor: Executor, itemProtoId: number): Promise<{ type: number; quality_id: number } | undefined> {
  return executor.selectFrom('item_protos').select(['type', 'quality_id']).where('item_proto_id', '=', itemProtoId).executeTakeFirst();
}

/** Inserts items in one statement; answers their ids in the order the database returns them. */
export async function insertItems(executor: Executor, rows: Insertable<ItemsTable>[]): Promise<number[]> {
  const inserted = await executor.insertInto('items').values(rows).returning('item_id').execute();
  return inserted.map((r) => r.item_id);
}

/** Marks an owned item revoked; answers its owner, or undefined when it does not exist or is no longer owned. */
export async function revokeOwnedItem(executor: Executor, itemId: number, now: number): Promise<number | undefined> {
  const revoked = await executor
    .updateTable('items')
    .set({ state: 'revoked', ended_at: now })
    .where('item_id', '=', itemId)
    .where('state', '=', OWNED)
    .returning('user_id')
    .executeTakeFirst();
  return revoked?.user_id;
}

/** Records why an item was revoked. */
export async function recordRevocation(
  executor: Executor,
  revocation: { itemId: number; userId: number; now: number; reason: string | null },
): Promise<void> {
  await executor
    .insertInto('revocations')
    .values({ item_id: revocation.itemId, user_id: revocation.userId, ts: revocation.now, reason: revocation.reason })
    .execute();
}

/** Takes items off the boards or profile they are equipped on. */
export async function unequipItems(executor: Executor, itemIds: number[]): Promise<void> {
  await sql`delete from equipped where item_id in (${sql.join(itemIds)})`.execute(executor);
}

/** The answer stored for an opening by this user with this request id. */
export async function readDrawAnswer(executor: Executor, userId: number, requestId: string): Promise<string | undefined> {
  const row = await executor
    .selectFrom('draws')
    .select('answer')
    .where('user_id', '=', userId)
    .where('request_id', '=', requestId)
    .executeTakeFirst();
  return row?.answer;
}

/** An item as an opening checks it. */
export interface OpeningInput {
  item_id: number;
  user_id: number;
  item_proto_id: number;
  state: string;
  ts_can_trade: number;
}

/** The items by id, in ascending id; on PostgreSQL locked until the transaction ends. */
export async function readOpeningInputs(executor: Executor, dialect: DialectName, ids: number[]): Promise<OpeningInput[]> {
  const lock = dialect === 'postgres' ? sql` for update` : sql``;
  const { rows } = await sql<OpeningInput>`
    select item_id, user_id, item_proto_id, state, ts_can_trade from items where item_id in (${sql.join(ids)}) order by item_id${lock}`.execute(
    executor,
  );
  return rows;
}

/** Marks those of the items that are the user's and owned consumed; answers how many changed. */
export async function consumeOwnedItems(
  executor: Executor,
  dialect: DialectName,
  userId: number,
  itemIds: number[],
  now: number,
): Promise<bigint> {
  const update = await sql`
    update items set state = 'consumed', ended_at = ${now}
    where item_id in (${sql.join(itemIds)}) and ${notIndexedColumn(dialect, 'user_id')} = ${userId}
      and ${notIndexedColumn(dialect, 'state')} = ${OWNED}`.execute(executor);
  return update.numAffectedRows ?? 0n;
}

/** An opening's received items, all of one owner, made now. */
export interface ReceivedItem {
  item_proto_id: number;
  type: number;
  quality_id: number;
}

/**
 * Inserts an opening's items, owned, with the trade lock `tsCanTrade` and the per-item `data`
 * given (a gift's provenance); answers them as owned-item rows, in the order the database
 * returns them.
 */
export async function insertReceivedItems(
  executor: Executor,
  owner: number,
  items: ReceivedItem[],
  received: { now: number; tsCanTrade: number; data: string | null },
): Promise<OwnedRow[]> {
  const { now, tsCanTrade, data } = received;
  const values = items.map(
    (item) => sql`(${owner}, ${item.item_proto_id}, ${item.type}, ${item.quality_id}, ${now}, ${tsCanTrade}, ${OWNED}, ${data})`,
  );
  const { rows } = await sql<OwnedRow>`
    insert into items (user_id, item_proto_id, type, quality_id, ts_owned, ts_can_trade, state, data) values ${sql.join(values)}
    returning item_id, user_id, item_proto_id, ts_owned, ts_can_trade, data`.execute(executor);
  return rows;
}

/** Records an opening: what it consumed and gave, the odds it used, and its answer. */
export async function recordDraw(executor: Executor, draw: Insertable<DrawsTable>): Promise<void> {
  await sql`
    insert into draws (ts, user_id, receiver_user_id, kind, case_item_id, case_item_proto_id, key_item_id, key_item_proto_id,
      result_item_ids, result_item_proto_ids, odds_version, odds, request_id, answer)
    values (${draw.ts}, ${draw.user_id}, ${draw.receiver_user_id}, ${draw.kind}, ${draw.case_item_id}, ${draw.case_item_proto_id},
      ${draw.key_item_id ?? null}, ${draw.key_item_proto_id ?? null}, ${draw.result_item_ids}, ${draw.result_item_proto_ids},
      ${draw.odds_version}, ${draw.odds}, ${draw.request_id ?? null}, ${draw.answer})`.execute(executor);
}

/** An item as equipping reads it: its owner, state and prototype, and where it is equipped. */
export interface EquipInput {
  item_id: number;
  user_id: number;
  item_proto_id: number;
  state: string;
  slot: string | null;
  game: string | null;
}

/**
 * Locks the user's row until the transaction ends (on PostgreSQL; SQLite runs one write
 * transaction at a time), so that one user's equips and unequips run one after the other and
 * a slot never ends up holding two items.
 */
export async function lockEquipment(trx: Executor, dialect: DialectName, userId: number): Promise<void> {
  if (dialect === 'postgres') await sql`select user_id from users where user_id = ${userId} for update`.execute(trx);
}

/** The item and where it is equipped; on PostgreSQL its row is locked until the transaction ends. */
export async function readEquipInput(trx: Executor, dialect: DialectName, itemId: number): Promise<EquipInput | undefined> {
  const lock = dialect === 'postgres' ? sql` for update of items` : sql``;
  const { rows } = await sql<EquipInput>`
    select items.item_id, items.user_id, items.item_proto_id, items.state, equipped.slot, equipped.game
    from items left join equipped on equipped.item_id = items.item_id
    where items.item_id = ${itemId}${lock}`.execute(trx);
  return rows[0];
}

/** The user's items equipped in one slot: of a board (game), or on the profile (game null); `current` when still theirs and owned. */
export async function equippedInSlot(
  trx: Executor,
  userId: number,
  slot: string,
  game: string | null,
): Promise<{ item_id: number; item_proto_id: number; current: boolean }[]> {
  let query = trx
    .selectFrom('equipped')
    .innerJoin('items', 'items.item_id', 'equipped.item_id')
    .select(['equipped.item_id', 'items.item_proto_id', 'items.user_id', 'items.state'])
    .where('equipped.user_id', '=', userId)
    .where('equipped.slot', '=', slot as 'cards')
    .orderBy('equipped.item_id');
  query = game === null ? query.where('equipped.game', 'is', null) : query.where('equipped.game', '=', game);
  const rows = await query.execute();
  // A row of an item that has left the user since (no writer leaves one, world files may) holds no place.
  return rows.map((row) => ({
    item_id: row.item_id,
    item_proto_id: row.item_proto_id,
    current: Number(row.user_id) === userId && row.state === 'owned',
  }));
}

export async function insertEquipped(
  trx: Executor,
  row: {
    item_id: number;
    user_id: number;
    slot: 'cards' | 'generator' | 'joke' | 'badge';
    game: string | null;
    monopoly_id: number | null;
  },
): Promise<void> {
  await trx.insertInto('equipped').values(row).execute();
}

/** The items of `userIds` equipped on the board `board` and still owned by them, with their class's rent coefficient, in ascending item_id. */
export async function selectGameEquipment(trx: Executor, userIds: readonly number[], board: string) {
  return trx
    .selectFrom('equipped')
    .innerJoin('items', 'items.item_id', 'equipped.item_id')
    .leftJoin('qualities', 'qualities.quality_id', 'items.quality_id')
    .select([
      'equipped.user_id',
      'equipped.item_id',
      'equipped.slot',
      'equipped.monopoly_id',
      'items.item_proto_id',
      'qualities.coeff_rent',
    ])
    .where('equipped.user_id', 'in', userIds)
    .where('equipped.game', '=', board)
    .whereRef('items.user_id', '=', 'equipped.user_id')
    .where('items.state', '=', OWNED)
    .orderBy('equipped.item_id')
    .execute();
}
