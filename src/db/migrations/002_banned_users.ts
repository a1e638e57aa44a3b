import { sql, type Kysely } from 'kysely';

/**
 * The globally blocked accounts, a handful among many: lists that leave them out (friends,
 * for one) test their members against this small index instead of reading every member's row.
 */
export function bannedUsersMigration() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      await sql`create index users_banned on users (user_id) where global_ban = 1`.execute(db);
    },
  };
}
