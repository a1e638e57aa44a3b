import { sql, type Insertable, type RawBuilder, type Selectable } from 'kysely';
import type { Database, Executor } from '../db/connection.js';
import type { AuditLogTable, DrawsTable, ItemProtosTable, UsersTable } from '../db/tables.js';

const ACCOUNT_COLUMNS = [
  'user_id',
  'email',
  'totp_secret',
  'domain',
  'nick',
  'nicks_old',
  'gender',
  'avatar',
  'avatar_key',
  'profile_cover',
  'approved',
  'vip',
  'moderator',
  'superadmin',
  'rank',
  'games',
  'games_wins',
  'xp',
  'xp_level',
  'global_ban',
  'inventory_privacy',
  'muted_until',
  'bot_owner_id',
  'created_at',
  'last_seen',
] as const;

export type AccountRow = Pick<Selectable<UsersTable>, (typeof ACCOUNT_COLUMNS)[number]>;

export async function loadAccount(executor: Executor, userId: number): Promise<AccountRow | undefined> {
  return executor.selectFrom('users').select(ACCOUNT_COLUMNS).where('user_id', '=', userId).executeTakeFirst();
}

/** What an operator's search compares: an id, an e-mail address's lookup key, the start of a nick or domain (lower case). */
export interface AccountQuery {
  userId?: number;
  email?: string;
  /** Start of a nick or domain, as users.search compares it. */
  prefix?: RawBuilder<boolean>;
}

/** A page of the accounts that match any part of the query, by nick (ties: by id), and how many match in all. */
export async function searchAccounts(
  db: Database,
  query: AccountQuery,
  window: { offset: number; count: number },
): Promise<{ total: number; rows: AccountRow[] }> {
  const matches = db.kysely.selectFrom('users').where((eb) => {
    const any = [];
    if (query.userId !== undefined) any.push(eb('user_id', '=', query.userId));
    if (query.email !== undefined) any.push(eb('email', '=', query.email));
    if (query.prefix !== undefined) any.push(query.prefix);
    return any.length > 0 ? eb.or(any) : sql<boolean>`1 = 0`;
  });
  const { n } = await matches.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  const total = Number(n);
  if (window.count === 0 || window.offset >= total) return { total, rows: [] };
  const rows = await matches
    .select(ACCOUNT_COLUMNS)
    .orderBy('nick_lower')
    .orderBy('user_id')
    .limit(window.count)
    .offset(window.offset)
    .execute();
  return { total, rows };
}

/** Whether an account other than `exceptUserId` has this e-mail address or domain. */
export async function isTaken(db: Executor, column: 'email' | 'domain', value: string, exceptUserId?: number): Promise<boolean> {
  let query = db.selectFrom('users').select('user_id').where(column, '=', value);
  if (exceptUserId !== undefined) query = query.where('user_id', '!=', exceptUserId);
  return (await query.executeTakeFirst()) !== undefined;
}

/** Adds an account; its id. */
export async function insertAccount(trx: Executor, values: Insertable<UsersTable>): Promise<number> {
  const row = await trx.insertInto('users').values(values).returning('user_id').executeTakeFirstOrThrow();
  return row.user_id;
}

/** Sets columns of a user's row; false when there is no such user. */
export async function updateAccountColumns(trx: Executor, userId: number, columns: Record<string, unknown>): Promise<boolean> {
  const updated = await trx.updateTable('users').set(columns).where('user_id', '=', userId).executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

export async function deleteRecoveryCodes(trx: Executor, userId: number): Promise<void> {
  await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
}

/** A page of the audit log, newest first, and how many entries there are; of one action, of one target, when given. */
export async function auditPage(
  db: Executor,
  page: { action?: string; target?: string; offset: number; count: number },
): Promise<{ total: number; entries: Selectable<AuditLogTable>[] }> {
  let rows = db.selectFrom('audit_log').selectAll();
  let total = db.selectFrom('audit_log').select((eb) => eb.fn.countAll<number | string>().as('n'));
  if (page.action !== undefined) {
    rows = rows.where('action', '=', page.action);
    total = total.where('action', '=', page.action);
  }
  if (page.target !== undefined) {
    rows = rows.where('target', '=', page.target);
    total = total.where('target', '=', page.target);
  }
  const [entries, counted] = await Promise.all([
    rows.orderBy('audit_id', 'desc').offset(page.offset).limit(page.count).execute(),
    total.executeTakeFirstOrThrow(),
  ]);
  return { total: Number(counted.n), entries };
}

/** Whether any item of this prototype exists. */
export async function protoHasItems(db: Executor, itemProtoId: number): Promise<boolean> {
  const item = await db.selectFrom('items').select('item_id').where('item_proto_id', '=', itemProtoId).limit(1).executeTakeFirst();
  return item !== undefined;
}

/** A prototype's type and class, the columns its items copy. */
export async function protoClass(db: Executor, itemProtoId: number): Promise<{ type: number; quality_id: number } | undefined> {
  return db.selectFrom('item_protos').select(['type', 'quality_id']).where('item_proto_id', '=', itemProtoId).executeTakeFirst();
}

export async function loadProto(db: Executor, itemProtoId: number): Promise<Selectable<ItemProtosTable>> {
  return db.selectFrom('item_protos').selectAll().where('item_proto_id', '=', itemProtoId).executeTakeFirstOrThrow();
}

/** Draws of an opener, of a prototype, in a time range: each given filter applies. */
export interface DrawMatch {
  userId?: number;
  caseItemProtoId?: number;
  since?: number;
  until?: number;
}

function matchingDraws(db: Executor, match: DrawMatch) {
  let query = db.selectFrom('draws');
  if (match.userId !== undefined) query = query.where('user_id', '=', match.userId);
  if (match.caseItemProtoId !== undefined) query = query.where('case_item_proto_id', '=', match.caseItemProtoId);
  if (match.since !== undefined) query = query.where('ts', '>=', match.since);
  if (match.until !== undefined) query = query.where('ts', '<', match.until);
  return query;
}

/** Matching draws, oldest first. */
export async function selectDraws(
  db: Executor,
  match: DrawMatch,
  page: { offset?: number; limit: number },
): Promise<Selectable<DrawsTable>[]> {
  let query = matchingDraws(db, match).selectAll().orderBy('draw_id');
  if (page.offset !== undefined) query = query.offset(page.offset);
  return query.limit(page.limit).execute();
}

export async function countDraws(db: Executor, match: DrawMatch): Promise<number> {
  const counted = await matchingDraws(db, match)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(counted.n);
}
