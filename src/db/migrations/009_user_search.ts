import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../connection.js';
import { nickKey } from '../../users/search-keys.js';

/**
 * users.search finds users by the start of their nick or domain, in any case. SQLite's
 * lower() folds only ASCII, so the nick's lower-case form is kept beside it (`nick_lower`,
 * written with the nick by the application); domains are ASCII, found through an index on
 * lower(domain). On PostgreSQL both compare in the "C" collation (code point order), where
 * the strings that start with a prefix are exactly one range of the index.
 */
export function userSearchMigration(dialect: DialectName) {
  const collate = dialect === 'postgres' ? sql` collate "C"` : sql``;
  return {
    async up(db: Kysely<any>): Promise<void> {
      await sql`alter table users add column nick_lower text${collate} not null default ''`.execute(db);
      const rows = await db.selectFrom('users').select(['user_id', 'nick']).execute();
      for (const row of rows as { user_id: number; nick: string }[])
        await db
          .updateTable('users')
          .set({ nick_lower: nickKey(row.nick) })
          .where('user_id', '=', row.user_id)
          .execute();
      await sql`create index users_nick_lower on users (nick_lower)`.execute(db);
      // SQLite's range on lower(domain) uses users_domain_lower (006), which compares the same way.
      if (dialect === 'postgres') await sql`create index users_domain_search on users ((lower(domain) collate "C"))`.execute(db);
    },
  };
}
