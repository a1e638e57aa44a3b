import { sql } from 'kysely';
import type { DialectName, Executor } from './connection.js';

/**
 * Where SQLite and PostgreSQL differ. SQLite runs one transaction at a time (Kysely holds
 * its single connection for the whole transaction), so row locks are only needed on
 * PostgreSQL.
 */
export const dialectAdapter = {
  /** Locks the given users' rows for the rest of the transaction, in id order (no deadlocks). */
  async lockUsers(trx: Executor, dialect: DialectName, userIds: number[]): Promise<void> {
    if (dialect !== 'postgres' || userIds.length === 0) return;
    const ids = [...new Set(userIds)].sort((a, b) => a - b);
    await sql`select user_id from users where user_id in (${sql.join(ids)}) order by user_id for update`.execute(trx);
  },

  /** Row-lock clause for a SELECT that must hold its rows until commit. */
  async lockRows(
    trx: Executor,
    dialect: DialectName,
    table: 'items' | 'sessions',
    column: string,
    ids: (number | string)[],
  ): Promise<void> {
    if (dialect !== 'postgres' || ids.length === 0) return;
    await sql`select 1 from ${sql.table(table)} where ${sql.ref(column)} in (${sql.join(ids)}) order by ${sql.ref(column)} for update`.execute(
      trx,
    );
  },
};
