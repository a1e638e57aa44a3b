import { sql } from 'kysely';
import type { Database } from '../db/connection.js';
import type { ProfileRow } from './profiles.js';

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
