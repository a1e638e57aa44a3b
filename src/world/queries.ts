import { sql, type Insertable, type Updateable } from 'kysely';
import type { DialectName, Executor } from '../db/connection.js';
import type { ChatStateTable, ItemsTable, Tables } from '../db/tables.js';
import { elementAt } from '../infra/elements.js';
import { classicBoard } from '../game/index.js';
import type { World } from './schema.js';
import type { WorldGame, WorldRoom } from './schema-lobby.js';
import { bit, playerSetup } from './lobby.js';

/** Every table of the world, read at once, in the order of the file. */
export async function readStoredWorld(db: Executor) {
  return awaitAll({
    collections: db.selectFrom('collections').selectAll().orderBy('collection_id').execute(),
    qualities: db.selectFrom('qualities').selectAll().orderBy('quality_id').execute(),
    itemTypes: db.selectFrom('item_types').selectAll().orderBy('type').execute(),
    protos: db.selectFrom('item_protos').selectAll().orderBy('item_proto_id').execute(),
    users: db.selectFrom('users').selectAll().orderBy('user_id').execute(),
    recoveryCodes: db
      .selectFrom('recovery_codes')
      .select(['user_id', 'code_hash'])
      .where('used_at', 'is', null)
      .orderBy('user_id')
      .orderBy('code_hash')
      .execute(),
    items: db.selectFrom('items').selectAll().where('state', 'in', ['owned', 'listed']).orderBy('item_id').execute(),
    equipped: db.selectFrom('equipped').selectAll().execute(),
    friendships: db
      .selectFrom('friendships')
      .selectAll()
      .whereRef('user_id', '<', 'friend_id')
      .orderBy('user_id')
      .orderBy('friend_id')
      .execute(),
    requests: db.selectFrom('friend_requests').selectAll().orderBy('from_user_id').orderBy('to_user_id').execute(),
    blocks: db.selectFrom('blocks').selectAll().orderBy('user_id').orderBy('blocked_user_id').execute(),
    chatState: db.selectFrom('chat_state').selectAll().where('id', '=', 1).executeTakeFirst(),
    messages: db.selectFrom('chat_messages').selectAll().where('deleted_at', 'is', null).orderBy('msg_seq').execute(),
    promocodes: db.selectFrom('promocodes').selectAll().orderBy('code').execute(),
    apps: db
      .selectFrom('oauth_apps')
      .select(['app_id', 'name', 'redirect_uris', 'scopes', 'public_client', 'active'])
      .orderBy('app_id')
      .execute(),
    promocodeUses: db.selectFrom('promocode_uses').selectAll().orderBy('code').orderBy('ts').orderBy('user_id').execute(),
    trades: db.selectFrom('trades').selectAll().orderBy('trade_id').execute(),
    tradeItems: db.selectFrom('trade_items').selectAll().orderBy('trade_id').orderBy('item_id').execute(),
    moves: db.selectFrom('trade_moves').selectAll().orderBy('move_id').execute(),
    privateMessages: db.selectFrom('im_messages').selectAll().where('deleted_at', 'is', null).orderBy('msg_id').execute(),
    balances: db.selectFrom('balances').selectAll().orderBy('user_id').execute(),
    transfers: db.selectFrom('ledger_transfers').selectAll().orderBy('transfer_id').execute(),
    entries: db.selectFrom('ledger_entries').selectAll().orderBy('entry_id').execute(),
    listings: db.selectFrom('market_listings').selectAll().orderBy('listing_id').execute(),
    sales: db.selectFrom('market_sales').selectAll().orderBy('sale_id').execute(),
    freezes: db.selectFrom('market_freezes').selectAll().orderBy('user_id').execute(),
    missions: db.selectFrom('missions').selectAll().orderBy('mission_id').execute(),
    missionProgress: db.selectFrom('mission_progress').selectAll().orderBy('mission_id').orderBy('week').orderBy('user_id').execute(),
  });
}

/** Awaits every promise of a record at once: the record of their values. */
async function awaitAll<T extends Record<string, Promise<unknown>>>(promises: T): Promise<{ [K in keyof T]: Awaited<T[K]> }> {
  const entries = await Promise.all(Object.entries(promises).map(async ([name, promise]) => [name, await promise] as const));
  return Object.fromEntries(entries) as { [K in keyof T]: Awaited<T[K]> };
}

/**
 * Writes rows in batches (parameters per statement stay under every driver's limit); on a key
 * conflict, updates the stored row (but its `keep` columns) or keeps it.
 */
export async function insertBatched<T extends keyof Tables & string>(
  trx: Executor,
  table: T,
  rows: Record<string, unknown>[],
  conflict?: { keys: string[]; ignore?: boolean; keep?: string[] },
): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(elementAt(rows, 0));
  const batch = Math.max(1, Math.floor(8000 / columns.length));
  for (let i = 0; i < rows.length; i += batch) {
    let query = trx.insertInto(table).values(rows.slice(i, i + batch) as never);
    if (conflict) {
      const { keys, keep = [] } = conflict;
      const update = columns.filter((c) => !keys.includes(c) && !keep.includes(c));
      query = query.onConflict((oc) =>
        update.length === 0 || conflict.ignore
          ? oc.columns(keys as never).doNothing()
          : oc.columns(keys as never).doUpdateSet(Object.fromEntries(update.map((c) => [c, sql.ref(`excluded.${c}`)])) as never),
      );
    }
    await query.execute();
  }
}

/**
 * Everything a world replaces. The audit log is not part of the world and survives, and so do
 * the OAuth apps (the operator's registrations, with their secrets); what players gave them
 * (consents, codes) goes with the players.
 */
const WORLD_TABLES = [
  'mission_progress',
  'missions',
  'oauth_codes',
  'oauth_consents',
  'im_dialogs',
  'im_messages',
  'im_events',
  // Shop purchases by request id are not carried: a retry after a replace buys again.
  'market_listings',
  'market_sales',
  'market_freezes',
  'shop_purchases',
  'ledger_entries',
  'ledger_transfers',
  'balances',
  'trade_moves',
  'trade_items',
  'trades',
  'promocode_uses',
  'promocodes',
  'chat_messages',
  'blocks',
  'friend_requests',
  'friendships',
  'revocations',
  'crafts',
  'equipped',
  'items',
  'inventory_counts',
  'item_protos',
  'item_types',
  'qualities',
  'collections',
  'totp_challenges',
  'sessions',
  'signin_sources',
  'account_tokens',
  'recovery_codes',
  'users',
] as const;

/** Removes the stored progress of the missions. */
export async function deleteMissionProgress(trx: Executor, missionIds: number[]): Promise<void> {
  for (let i = 0; i < missionIds.length; i += 1000)
    await trx
      .deleteFrom('mission_progress')
      .where('mission_id', 'in', missionIds.slice(i, i + 1000))
      .execute();
}

/** Empties every table of the world. */
export async function emptyWorldTables(trx: Executor): Promise<void> {
  for (const table of WORLD_TABLES) await trx.deleteFrom(table).execute();
}

/**
 * After explicit ids were inserted, PostgreSQL's sequences must move past them. A sequence never
 * moves back (its next value is taken, then given again): the values it gave stay in use when
 * the import rolls back, and the sequence does not roll back with it.
 */
export async function advanceSequences(trx: Executor, dialect: DialectName): Promise<void> {
  if (dialect !== 'postgres') return;
  for (const [table, column] of [
    ['users', 'user_id'],
    ['items', 'item_id'],
    ['chat_messages', 'msg_seq'],
    ['trades', 'trade_id'],
    ['im_events', 'event_id'],
    ['trade_moves', 'move_id'],
    ['oauth_apps', 'app_id'],
    ['ledger_transfers', 'transfer_id'],
    ['ledger_entries', 'entry_id'],
    ['market_listings', 'listing_id'],
    ['market_sales', 'sale_id'],
    ['missions', 'mission_id'],
  ] as const) {
    const sequence = sql`pg_get_serial_sequence(${table}, ${column})`;
    const pastStored = sql`(select coalesce(max(${sql.ref(column)}), 0) + 1 from ${sql.table(table)})`;
    await sql`select setval(${sequence}, greatest(${pastStored}, nextval(${sequence})), false)`.execute(trx);
  }
}

/** Arbitrary key of the PostgreSQL advisory lock held while a new installation imports its world. */
const WORLD_IMPORT_LOCK = 7_164_019_224;

/** On PostgreSQL, waits for any other process importing into a new installation (SQLite runs one writer at a time). */
export async function lockWorldImport(trx: Executor, dialect: DialectName): Promise<void> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${WORLD_IMPORT_LOCK})`.execute(trx);
}

/** Whether the database holds users or prototypes. */
export async function hasUsersOrProtos(db: Executor): Promise<boolean> {
  const users = await db.selectFrom('users').select('user_id').limit(1).execute();
  const protos = await db.selectFrom('item_protos').select('item_proto_id').limit(1).execute();
  return users.length > 0 || protos.length > 0;
}

/** Of these ids, those of stored collections. */
export async function storedCollectionIds(trx: Executor, ids: number[]): Promise<number[]> {
  return (await trx.selectFrom('collections').select('collection_id').where('collection_id', 'in', ids).execute()).map(
    (r) => r.collection_id,
  );
}

/** The stored users whose e-mail address or domain is one of these. */
export async function usersWith(trx: Executor, field: 'email' | 'domain', values: string[]): Promise<{ user_id: number; value: string }[]> {
  const rows = await trx.selectFrom('users').select(['user_id', field]).where(field, 'in', values).execute();
  return rows.map((row) => ({ user_id: row.user_id, value: row[field] as string }));
}

/**
 * Writes rows keyed by `keys`; on a conflict each updates the stored row but for the columns it
 * keeps (its `keep`). Rows keeping the same columns go together, one batch of statements each.
 */
export async function upsertKeeping<T extends keyof Tables & string>(
  trx: Executor,
  table: T,
  rows: { row: Record<string, unknown>; keep: string[] }[],
  keys: string[],
): Promise<void> {
  const byKept = new Map<string, { keep: string[]; rows: Record<string, unknown>[] }>();
  for (const { row, keep } of rows) {
    const group = byKept.get(keep.join());
    if (group) group.rows.push(row);
    else byKept.set(keep.join(), { keep, rows: [row] });
  }
  for (const group of byKept.values()) await insertBatched(trx, table, group.rows, { keys, keep: group.keep });
}

/** Of these users, the stored ones that are bots, with their owners. */
export async function storedBots(trx: Executor, userIds: number[]): Promise<{ user_id: number; bot_owner_id: number }[]> {
  const rows = await trx
    .selectFrom('users')
    .select(['user_id', 'bot_owner_id'])
    .where('user_id', 'in', userIds)
    .where('bot_owner_id', 'is not', null)
    .execute();
  return rows.map((r) => ({ user_id: r.user_id, bot_owner_id: r.bot_owner_id! }));
}

/** The stored bots these users own. */
export async function storedBotsOf(trx: Executor, ownerIds: number[]): Promise<{ user_id: number; bot_owner_id: number }[]> {
  const rows = await trx.selectFrom('users').select(['user_id', 'bot_owner_id']).where('bot_owner_id', 'in', ownerIds).execute();
  return rows.map((r) => ({ user_id: r.user_id, bot_owner_id: r.bot_owner_id! }));
}

/** The stored TOTP secrets (sealed) of these users that have one. */
export async function storedTotpSecrets(trx: Executor, userIds: number[]): Promise<{ user_id: number; totp_secret: string }[]> {
  const rows = await trx
    .selectFrom('users')
    .select(['user_id', 'totp_secret'])
    .where('user_id', 'in', userIds)
    .where('totp_secret', 'is not', null)
    .execute();
  return rows.map((r) => ({ user_id: r.user_id, totp_secret: r.totp_secret! }));
}

/** Removes the recovery codes of these users not yet used (a used one stays, so it is never accepted again). */
export async function deleteUnusedRecoveryCodes(trx: Executor, userIds: number[]): Promise<void> {
  await trx.deleteFrom('recovery_codes').where('user_id', 'in', userIds).where('used_at', 'is', null).execute();
}

/** Raises a user's last used TOTP step to `step`; an equal or later stored one stays. */
export async function raiseTotpLastStep(trx: Executor, userId: number, step: number): Promise<void> {
  await trx
    .updateTable('users')
    .set({ totp_last_step: step })
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .execute();
}

/** Removes the items and moves of these trades. */
export async function deleteTradeContents(trx: Executor, tradeIds: number[]): Promise<void> {
  await trx.deleteFrom('trade_items').where('trade_id', 'in', tradeIds).execute();
  await trx.deleteFrom('trade_moves').where('trade_id', 'in', tradeIds).execute();
}

/** Raises each of these codes' uses to the number of its recorded redemptions, when below it. */
export async function raiseUsesToRedemptions(trx: Executor, codes: string[]): Promise<void> {
  const redemptions = sql<number>`(select count(*) from promocode_uses where promocode_uses.code = promocodes.code)`;
  await trx.updateTable('promocodes').set({ uses: redemptions }).where('code', 'in', codes).where('uses', '<', redemptions).execute();
}

/** The users with a session not revoked: every one, or those of `userIds`. */
export async function usersWithOpenSessions(trx: Executor, userIds?: number[]): Promise<number[]> {
  let query = trx.selectFrom('sessions').select('user_id').distinct().where('revoked_at', 'is', null);
  if (userIds !== undefined) query = query.where('user_id', 'in', userIds);
  return (await query.execute()).map((s) => s.user_id);
}

/** Revokes every session of these users. */
export async function revokeSessionsOf(trx: Executor, userIds: number[], now: number): Promise<void> {
  await trx.updateTable('sessions').set({ revoked_at: now }).where('user_id', 'in', userIds).where('revoked_at', 'is', null).execute();
}

/** Every stored prototype's type, class and monopoly: what items and equipment copy or check. */
export async function protoClasses(trx: Executor) {
  return trx.selectFrom('item_protos').select(['item_proto_id', 'type', 'quality_id', 'monopoly_id']).execute();
}

/** Removes these items and their equipment. */
export async function deleteItemsAndEquipment(trx: Executor, itemIds: number[]): Promise<void> {
  await trx.deleteFrom('equipped').where('item_id', 'in', itemIds).execute();
  await trx.deleteFrom('items').where('item_id', 'in', itemIds).execute();
}

/** Adds items; their ids. */
export async function insertItems(trx: Executor, rows: Insertable<ItemsTable>[]): Promise<number[]> {
  return (await trx.insertInto('items').values(rows).returning('item_id').execute()).map((r) => r.item_id);
}

export async function setChatState(trx: Executor, state: Updateable<ChatStateTable>): Promise<void> {
  await trx.updateTable('chat_state').set(state).where('id', '=', 1).execute();
}

/** An ordered pair of users: the first column's user, then the second's. */
export type UserPair = readonly [number, number];

/** The tables of the social graph, with their two user columns. */
const RELATION_COLUMNS = {
  friendships: ['user_id', 'friend_id'],
  blocks: ['user_id', 'blocked_user_id'],
  friend_requests: ['from_user_id', 'to_user_id'],
} as const;

/** Of these ordered pairs, those the table holds (one query for each thousand pairs). */
export async function storedPairs(trx: Executor, table: keyof typeof RELATION_COLUMNS, pairs: UserPair[]): Promise<UserPair[]> {
  const [first, second] = RELATION_COLUMNS[table].map((column) => sql.ref(column));
  const found: UserPair[] = [];
  for (let i = 0; i < pairs.length; i += 1000) {
    // SQLite takes a list of row values only from a subquery, hence VALUES; PostgreSQL needs their type.
    const values = sql.join(pairs.slice(i, i + 1000).map(([a, b]) => sql`(cast(${a} as bigint), cast(${b} as bigint))`));
    const { rows } = await sql<{ a: number | string; b: number | string }>`
      select ${first} as a, ${second} as b from ${sql.table(table)} where (${first}, ${second}) in (values ${values})`.execute(trx);
    for (const row of rows) found.push([Number(row.a), Number(row.b)]);
  }
  return found;
}

/** The stored prototypes that name a key or list cases, with those fields (the list as stored JSON). */
export async function storedKeysAndCases(trx: Executor) {
  return trx
    .selectFrom('item_protos')
    .select(['item_proto_id', 'key_item_proto_id', 'case_item_proto_ids'])
    .where((eb) => eb.or([eb('key_item_proto_id', 'is not', null), eb('case_item_proto_ids', 'is not', null)]))
    .execute();
}

/**
 * Makes every user's side of every conversation agree with the messages: its newest message
 * left and the count of the partner's unread messages.
 */
export async function rebuildPrivateDialogs(trx: Executor): Promise<void> {
  await trx.deleteFrom('im_dialogs').execute();
  await sql`
    insert into im_dialogs (user_id, partner_id, last_msg_id, new_counter)
    select user_id, partner_id, max(msg_id), sum(unread) from (
      select sender_id as user_id, receiver_id as partner_id, msg_id, 0 as unread from im_messages where deleted_at is null
      union all
      select receiver_id, sender_id, msg_id, case when is_read = 0 then 1 else 0 end from im_messages where deleted_at is null
    ) sides
    group by user_id, partner_id`.execute(trx);
}

// ---- the market ----

/** Ends the stored listings of these items, their items back in their owners' inventories (a merge replacing them). */
export async function endListingsOf(trx: Executor, itemIds: number[]): Promise<void> {
  for (let i = 0; i < itemIds.length; i += 1000) {
    const ids = itemIds.slice(i, i + 1000);
    await trx.deleteFrom('market_listings').where('item_id', 'in', ids).execute();
    await trx.updateTable('items').set({ state: 'owned' }).where('item_id', 'in', ids).where('state', '=', 'listed').execute();
  }
}

/** These items as a listing needs them: owner, prototype, class, state and whether equipped. */
export async function itemsToList(trx: Executor, itemIds: number[]) {
  const rows: {
    item_id: number;
    user_id: number;
    item_proto_id: number;
    type: number;
    quality_id: number;
    state: string;
    equipped: boolean;
  }[] = [];
  for (let i = 0; i < itemIds.length; i += 1000) {
    const found = await trx
      .selectFrom('items')
      .select(['item_id', 'user_id', 'item_proto_id', 'type', 'quality_id', 'state'])
      .select((eb) =>
        eb.exists(eb.selectFrom('equipped').select('equipped.item_id').whereRef('equipped.item_id', '=', 'items.item_id')).as('equipped'),
      )
      .where('item_id', 'in', itemIds.slice(i, i + 1000))
      .execute();
    for (const r of found)
      rows.push({
        item_id: Number(r.item_id),
        user_id: Number(r.user_id),
        item_proto_id: Number(r.item_proto_id),
        type: r.type,
        quality_id: r.quality_id,
        state: r.state,
        equipped: Boolean(r.equipped),
      });
  }
  return rows;
}

/** Puts these owned items on sale (state `listed`). */
export async function markItemsListed(trx: Executor, itemIds: number[]): Promise<void> {
  for (let i = 0; i < itemIds.length; i += 1000)
    await trx
      .updateTable('items')
      .set({ state: 'listed' })
      .where('item_id', 'in', itemIds.slice(i, i + 1000))
      .where('state', '=', 'owned')
      .execute();
}

/** Removes the entries of these transfers (a merge replaces a transfer as a whole). */
export async function deleteEntriesOf(trx: Executor, transferIds: number[]): Promise<void> {
  for (let i = 0; i < transferIds.length; i += 1000)
    await trx
      .deleteFrom('ledger_entries')
      .where('transfer_id', 'in', transferIds.slice(i, i + 1000))
      .execute();
}

// The lobby's sections (rooms and finished games; their checks inside the file are lobby.ts's).
const CLASSIC_CONFIG = JSON.stringify(classicBoard);
/** Rooms waiting for players: the only ones a file carries (a started room is its live game's). */
const WAITING = sql.lit(0);
const OVER = sql.lit<'over'>('over');

const chunks = <T>(list: T[], size = 500): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
};

/**
 * In a merge, what the stored lobby says against the file: a room the file replaces must not
 * have started, a player must not sit in a stored room the file leaves or play a live game, and
 * a game the file replaces must not be live.
 */
export async function storedLobbyProblems(trx: Executor, dialect: DialectName, world: World): Promise<string[]> {
  const problems: string[] = [];
  const rooms = world.rooms ?? [];
  const fileRoomIds = new Set(rooms.map((r) => r.room_id));
  for (const ids of chunks([...fileRoomIds].sort((a, b) => a - b))) {
    let query = trx.selectFrom('rooms').select(['room_id', 'status', 'game_id']).where('room_id', 'in', ids).orderBy('room_id');
    if (dialect === 'postgres') query = query.forUpdate();
    for (const row of await query.execute()) {
      if (Number(row.status) === 0) continue;
      const index = rooms.findIndex((r) => r.room_id === Number(row.room_id));
      problems.push(`rooms[${index}].room_id: room ${row.room_id} has started (game ${row.game_id}); a started room is not replaced`);
    }
  }
  const seatOf = new Map<number, string>();
  rooms.forEach((room, i) => room.players.forEach((id, j) => seatOf.set(id, `rooms[${i}].players[${j}]`)));
  for (const ids of chunks([...seatOf.keys()])) {
    const members = await trx.selectFrom('room_members').select(['user_id', 'room_id']).where('user_id', 'in', ids).execute();
    for (const m of members)
      if (!fileRoomIds.has(Number(m.room_id))) problems.push(`${seatOf.get(Number(m.user_id))}: user ${m.user_id} is in room ${m.room_id}`);
    const live = await trx.selectFrom('game_live_players').select(['user_id', 'game_id']).where('user_id', 'in', ids).execute();
    for (const l of live) problems.push(`${seatOf.get(Number(l.user_id))}: user ${l.user_id} plays the live game ${l.game_id}`);
  }
  const games = world.games ?? [];
  for (const ids of chunks(games.map((g) => g.game_id))) {
    const rows = await trx.selectFrom('games').select('game_id').where('game_id', 'in', ids).where('status', '!=', OVER).execute();
    for (const row of rows) {
      const index = games.findIndex((g) => g.game_id === Number(row.game_id));
      problems.push(`games[${index}].game_id: game ${row.game_id} is live; only finished games are replaced`);
    }
  }
  return problems.sort();
}

/** Everything of the lobby and the games (live ones too) a replace empties. */
const LOBBY_TABLES = [
  'room_members',
  'room_invites',
  'room_bans',
  'rooms',
  'game_live_players',
  'game_actions',
  'game_players',
  'games',
] as const;

/**
 * Writes the file's rooms and games: each replaces as a whole the stored one with its id (its
 * players, invitations and kicks; its seats and actions). A replace first empties the lobby and
 * every game, live ones included.
 */
export async function importLobby(trx: Executor, dialect: DialectName, world: World, now: number, replace: boolean): Promise<void> {
  if (replace) for (const table of LOBBY_TABLES) await trx.deleteFrom(table).execute();
  await importRooms(trx, world.rooms ?? [], now, replace);
  await importGames(trx, world.games ?? []);
  if (dialect === 'postgres')
    for (const [table, column] of [
      ['rooms', 'room_id'],
      ['games', 'game_id'],
    ] as const) {
      const sequence = sql`pg_get_serial_sequence(${table}, ${column})`;
      const pastStored = sql`(select coalesce(max(${sql.ref(column)}), 0) + 1 from ${sql.table(table)})`;
      await sql`select setval(${sequence}, greatest(${pastStored}, nextval(${sequence})), false)`.execute(trx);
    }
}

async function importRooms(trx: Executor, rooms: WorldRoom[], now: number, replace: boolean): Promise<void> {
  if (rooms.length === 0) return;
  const storedVersion = new Map<number, number>();
  for (const ids of chunks(rooms.map((r) => r.room_id))) {
    if (!replace)
      for (const row of await trx.selectFrom('rooms').select(['room_id', 'v']).where('room_id', 'in', ids).execute())
        storedVersion.set(Number(row.room_id), Number(row.v));
    for (const table of ['room_members', 'room_invites', 'room_bans', 'rooms'] as const)
      await trx.deleteFrom(table).where('room_id', 'in', ids).execute();
  }
  await insertBatched(
    trx,
    'rooms',
    rooms.map((room) => {
      const stored = storedVersion.get(room.room_id);
      return {
        room_id: room.room_id,
        status: 0,
        admin_id: room.admin_id,
        game_submode: 0,
        maxplayers: room.maxplayers,
        private: bit(room.private),
        autostart: bit(room.autostart),
        game_timers: 1,
        br_corner: 0,
        // Clients ignore a patch whose version is not above what they hold: a replaced room goes past it.
        v: Math.max(room.v ?? 1, stored === undefined ? 1 : stored + 1),
        ts_created: room.ts_created ?? now,
        players: null,
        game_id: null,
        gs_id: null,
      };
    }),
  );
  const members = rooms.flatMap((room) =>
    room.players.map((user_id, seat) => ({ user_id, room_id: room.room_id, seat, ts_joined: room.ts_created ?? now })),
  );
  await insertBatched(trx, 'room_members', members);
  const invites = rooms.flatMap((room) =>
    (room.invites ?? []).map((invite) => ({
      room_id: room.room_id,
      user_id: invite.user_id,
      inviter_id: invite.inviter_id ?? room.admin_id,
      ts: invite.ts ?? now,
    })),
  );
  await insertBatched(trx, 'room_invites', invites);
  const bans = rooms.flatMap((room) => (room.bans ?? []).map((user_id) => ({ room_id: room.room_id, user_id })));
  await insertBatched(trx, 'room_bans', bans);
}

async function importGames(trx: Executor, games: WorldGame[]): Promise<void> {
  if (games.length === 0) return;
  for (const ids of chunks(games.map((g) => g.game_id)))
    for (const table of ['game_actions', 'game_players', 'games'] as const)
      await trx.deleteFrom(table).where('game_id', 'in', ids).execute();
  for (const game of games) {
    await trx
      .insertInto('games')
      .values({
        game_id: game.game_id,
        status: 'over',
        config: game.config === undefined ? CLASSIC_CONFIG : JSON.stringify(game.config),
        players: JSON.stringify(game.players.map(playerSetup)),
        options: JSON.stringify(game.options ?? {}),
        seed: game.seed,
        ts_start: game.ts_start_ms,
        ts_end: game.ts_end_ms,
        winner_user_id: game.winner_user_id,
        deadline: null,
        actions: game.actions.length,
      })
      .execute();
    const humans = [...new Set(game.players.filter((p) => p.user_id > 0).map((p) => p.user_id))];
    if (humans.length > 0)
      await trx
        .insertInto('game_players')
        .values(humans.map((user_id) => ({ game_id: game.game_id, user_id })))
        .execute();
    await insertBatched(
      trx,
      'game_actions',
      game.actions.map((a, seq) => ({
        game_id: game.game_id,
        seq,
        user_id: a.user_id ?? null,
        action: JSON.stringify(a.action),
        ts: a.ts_ms,
      })),
    );
  }
}

/** The waiting rooms and the finished games, as a file carries them. */
export async function exportLobby(db: Executor): Promise<Pick<World, 'rooms' | 'games'>> {
  const [rooms, members, invites, bans, games, actions] = await Promise.all([
    db.selectFrom('rooms').selectAll().where('status', '=', WAITING).orderBy('room_id').execute(),
    db.selectFrom('room_members').selectAll().orderBy('room_id').orderBy('seat').execute(),
    db.selectFrom('room_invites').selectAll().orderBy('room_id').orderBy('ts').orderBy('user_id').execute(),
    db.selectFrom('room_bans').selectAll().orderBy('room_id').orderBy('user_id').execute(),
    db.selectFrom('games').selectAll().where('status', '=', OVER).orderBy('game_id').execute(),
    db
      .selectFrom('game_actions')
      .innerJoin('games', 'games.game_id', 'game_actions.game_id')
      .select(['game_actions.game_id', 'game_actions.user_id', 'game_actions.action', 'game_actions.ts'])
      .where('games.status', '=', OVER)
      .orderBy('game_actions.game_id')
      .orderBy('game_actions.seq')
      .execute(),
  ]);
  const by = <T extends { room_id?: unknown; game_id?: unknown }>(rows: T[], key: 'room_id' | 'game_id') => {
    const map = new Map<number, T[]>();
    for (const row of rows) {
      const id = Number(row[key]);
      const list = map.get(id);
      if (list) list.push(row);
      else map.set(id, [row]);
    }
    return map;
  };
  const membersOf = by(members, 'room_id');
  const invitesOf = by(invites, 'room_id');
  const bansOf = by(bans, 'room_id');
  const actionsOf = by(actions, 'game_id');
  return {
    rooms: rooms.map((r) => {
      const roomInvites = invitesOf.get(Number(r.room_id)) ?? [];
      const roomBans = bansOf.get(Number(r.room_id)) ?? [];
      return {
        room_id: Number(r.room_id),
        admin_id: Number(r.admin_id),
        players: (membersOf.get(Number(r.room_id)) ?? []).map((m) => Number(m.user_id)),
        maxplayers: Number(r.maxplayers),
        private: Number(r.private) === 1 ? 1 : 0,
        autostart: Number(r.autostart) === 1 ? 1 : 0,
        ...(roomInvites.length > 0
          ? { invites: roomInvites.map((i) => ({ user_id: Number(i.user_id), inviter_id: Number(i.inviter_id), ts: Number(i.ts) })) }
          : {}),
        ...(roomBans.length > 0 ? { bans: roomBans.map((b) => Number(b.user_id)) } : {}),
        ts_created: Number(r.ts_created),
        v: Number(r.v),
      };
    }),
    games: games.map((g) => {
      const options = JSON.parse(g.options) as Record<string, unknown>;
      return {
        game_id: Number(g.game_id),
        players: JSON.parse(g.players) as WorldGame['players'],
        seed: g.seed,
        ...(g.config === CLASSIC_CONFIG ? {} : { config: JSON.parse(g.config) as Record<string, unknown> }),
        ...(Object.keys(options).length > 0 ? { options } : {}),
        ts_start_ms: Number(g.ts_start),
        ts_end_ms: Number(g.ts_end),
        winner_user_id: Number(g.winner_user_id),
        actions: (actionsOf.get(Number(g.game_id)) ?? []).map((a) => ({
          ...(a.user_id === null ? {} : { user_id: Number(a.user_id) }),
          action: JSON.parse(a.action) as WorldGame['actions'][number]['action'],
          ts_ms: Number(a.ts),
        })),
      };
    }),
  };
}
