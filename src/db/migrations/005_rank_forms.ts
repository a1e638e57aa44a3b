import type { Kysely } from 'kysely';
import { rankColumn, storedRank } from '../../users/rank.js';

/**
 * Ranks hold one of the reference service's four forms ({hidden: 1}, {qual}, {expired: 1},
 * {id, pts}) or nothing. Earlier databases kept `{hidden: 0 | 1}` plus any keys a world
 * file brought: each stored rank becomes the form it shows, `{hidden: 0}` (a visible rank
 * with no id or points) none.
 */
export function rankFormsMigration() {
  return {
    async up(db: Kysely<any>): Promise<void> {
      const rows: { user_id: number; rank: string }[] = await db
        .selectFrom('users')
        .select(['user_id', 'rank'])
        .where('rank', 'is not', null)
        .execute();
      for (const row of rows) {
        const rank = rankColumn(storedRank(row.rank));
        if (rank !== row.rank) await db.updateTable('users').set({ rank }).where('user_id', '=', row.user_id).execute();
      }
    },
  };
}
