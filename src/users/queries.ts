import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Database, Executor } from '../db/connection.js';
import type { Flag } from '../db/flags.js';
import type { InventoryPrivacy, UsersTable } from '../db/tables.js';
import type { Services } from '../services.js';

/** The columns of `users` a profile is made of. */
export type ProfileRow = Pick<
  Selectable<UsersTable>,
  | 'user_id'
  | 'domain'
  | 'approved'
  | 'nick'
  | 'nicks_old'
  | 'gender'
  | 'avatar'
  | 'avatar_key'
  | 'profile_cover'
  | 'rank'
  | 'games'
  | 'games_wins'
  | 'xp'
  | 'xp_level'
  | 'vip'
  | 'moderator'
  | 'superadmin'
  | 'global_ban'
  | 'muted_until'
  | 'bot_owner_id'
  | 'always_online'
  | 'last_seen'
>;

/**
 * `global_ban = 1` and `= 0` as literals: the index of blocked accounts (users_banned) is
 * defined by the first, and compared with a bound value SQLite would compile the statement
 * again on every run.
 */
export const BANNED = sql.lit<Flag>(1);
export const NOT_BANNED = sql.lit<Flag>(0);

/** The columns a profile is made of (src/users/profiles.ts). */
const PROFILE_COLUMNS = sql.raw(
  [
    'user_id',
    'domain',
    'approved',
    'nick',
    'nicks_old',
    'gender',
    'avatar',
    'avatar_key',
    'profile_cover',
    'rank',
    'games',
    'games_wins',
    'xp',
    'xp_level',
    'vip',
    'moderator',
    'superadmin',
    'global_ban',
    'muted_until',
    'bot_owner_id',
    'always_online',
    'last_seen',
  ].join(', '),
);

/**
 * The rows of the users named by id or domain, in no particular order (a user named both
 * ways comes once per way). The keys travel as one array parameter, so the statement's text
 * is the same whatever their number and is compiled once (SQLite keeps it prepared).
 */
export async function selectProfileRows(db: Database, ids: readonly number[], domains: readonly string[]): Promise<ProfileRow[]> {
  const byId =
    db.dialect === 'sqlite'
      ? sql<ProfileRow>`select ${PROFILE_COLUMNS} from users where user_id in (select value from json_each(${JSON.stringify(ids)}))`
      : sql<ProfileRow>`select ${PROFILE_COLUMNS} from users where user_id = any(${ids}::bigint[])`;
  const byDomain =
    db.dialect === 'sqlite'
      ? sql<ProfileRow>`select ${PROFILE_COLUMNS} from users where domain in (select value from json_each(${JSON.stringify(domains)}))`
      : sql<ProfileRow>`select ${PROFILE_COLUMNS} from users where domain = any(${domains}::text[])`;
  const query = domains.length === 0 ? byId : ids.length === 0 ? byDomain : sql<ProfileRow>`${byId} union all ${byDomain}`;
  return (await query.execute(db.kysely)).rows;
}

/** `%`, `_` and the escape character itself stand for themselves in a LIKE pattern. */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, '\\$&');

/**
 * The smallest string greater (in code point order) than every string that starts with
 * `prefix`: its last code point one higher. Undefined when there is none (only U+10FFFF left).
 */
export function prefixEnd(prefix: string): string | undefined {
  const points = [...prefix].map((c) => c.codePointAt(0)!);
  while (points.length > 0) {
    let last = points.pop()! + 1;
    if (last >= 0xd800 && last <= 0xdfff) last = 0xe000;
    if (last <= 0x10ffff) return String.fromCodePoint(...points, last);
  }
  return undefined;
}

/**
 * Users whose nick or domain starts with `key` (lower case), globally blocked accounts left
 * out. Each side is one range of its index (`users_nick_lower`; `users_domain_lower` on SQLite,
 * `users_domain_search` on PostgreSQL); the
 * LIKE says the same exactly, whatever the range's edges.
 */
export function searchMatches(services: Pick<Services, 'db'>, key: string) {
  return services.db.kysely.selectFrom('users').where('global_ban', '=', NOT_BANNED).where(nickOrDomainStarts(services.db, key));
}

/**
 * The condition that a user's nick or domain starts with `key` (lower case, see nickKey), each
 * side one range of its index, as searchMatches uses it; for operators, who find blocked
 * accounts too.
 */
export function nickOrDomainStarts(db: Pick<Database, 'dialect'>, key: string): RawBuilder<boolean> {
  const end = prefixEnd(key);
  const pattern = `${escapeLike(key)}%`;
  const startsWith = (column: RawBuilder<unknown>) =>
    end === undefined
      ? sql`(${column} >= ${key} and ${column} like ${pattern} escape '\\')`
      : sql`(${column} >= ${key} and ${column} < ${end} and ${column} like ${pattern} escape '\\')`;
  const domain = db.dialect === 'postgres' ? sql`lower(domain) collate "C"` : sql`lower(domain)`;
  return sql<boolean>`(${startsWith(sql`nick_lower`)} or ${startsWith(domain)})`;
}

/** A page of the users `searchMatches` finds, by nick (ties: by id), and how many it finds in all. */
export async function searchPage(
  db: Database,
  key: string,
  window: { offset: number; count: number },
): Promise<{ total: number; ids: number[] }> {
  const matches = searchMatches({ db }, key);
  const { n } = await matches.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const total = Number(n);
  if (window.count === 0 || window.offset >= total) return { total, ids: [] };
  const page = await matches.select('user_id').orderBy('nick_lower').orderBy('user_id').limit(window.count).offset(window.offset).execute();
  return { total, ids: page.map((row) => row.user_id) };
}

/** The privacy settings as stored, each one a column of users. */
export interface PrivacyColumns {
  inventory_privacy: InventoryPrivacy;
  trades_income: Flag;
  trades_income_from_friends: Flag;
  trades_income_gifts: Flag;
  trades_income_gifts_autoaccept: Flag;
  im_privacy: InventoryPrivacy;
}

export function selectPrivacy(db: Database, userId: number): Promise<PrivacyColumns> {
  return db.kysely
    .selectFrom('users')
    .select([
      'inventory_privacy',
      'trades_income',
      'trades_income_from_friends',
      'trades_income_gifts',
      'trades_income_gifts_autoaccept',
      'im_privacy',
    ])
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
}

export async function updatePrivacyColumns(db: Database, userId: number, changes: Partial<PrivacyColumns>): Promise<void> {
  await db.kysely.updateTable('users').set(changes).where('user_id', '=', userId).execute();
}

/**
 * Records when users were last active, seconds, by user id, in one statement whatever their
 * number. A time earlier than the one a row holds (written by another process) is left out.
 */
export async function updateLastSeen(db: Database, lastSeen: ReadonlyMap<number, number>): Promise<void> {
  const seen = [...lastSeen].sort((a, b) => a[0] - b[0]);
  if (db.dialect === 'sqlite') {
    await sql`update users set last_seen = seen.t
      from (select value ->> 0 as id, value ->> 1 as t from json_each(${JSON.stringify(seen)})) as seen
      where users.user_id = seen.id and users.last_seen < seen.t`.execute(db.kysely);
    return;
  }
  const ids = seen.map(([id]) => id);
  await db.kysely.transaction().execute(async (trx) => {
    // The rows are locked in user id order first, as every writer of several users' rows locks
    // them (a trade's parties, a pair of friends): an update takes its rows in the order it
    // finds them, and would deadlock with those.
    await sql`select user_id from users where user_id = any(${ids}::bigint[]) order by user_id for update`.execute(trx);
    await sql`update users set last_seen = seen.t
      from unnest(${ids}::bigint[], ${seen.map(([, t]) => t)}::bigint[]) as seen(id, t)
      where users.user_id = seen.id and users.last_seen < seen.t`.execute(trx);
  });
}

/** Of these ids, those of stored users. */
export async function storedUserIds(k: Executor, ids: number[]): Promise<number[]> {
  return (await k.selectFrom('users').select('user_id').where('user_id', 'in', ids).execute()).map((row) => row.user_id);
}

/** What a realtime connection's `auth` frame tells the user of their own account beside the profile. */
export function selectAccountFacts(db: Database, userId: number) {
  return db.kysely
    .selectFrom('users')
    .select(['moderator', 'superadmin', 'muted_until', 'email_verified'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
}
