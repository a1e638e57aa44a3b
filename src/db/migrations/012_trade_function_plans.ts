import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../connection.js';

/**
 * PostgreSQL: the trade functions of migration 011 keep the plans of their statements for the
 * life of a connection instead of planning each statement on every call. Planning took more of
 * PostgreSQL's time than running: for a trade offered and accepted, one item for one, the two
 * calls took about 2.2 ms of its CPU planning anew and 1.3 ms with kept plans.
 *
 * A kept plan is made once, without the values of any call, from the statistics of that moment
 * (a new database's tables are empty): sequential scans are ruled out inside both functions, so
 * a plan made while a table was small reads it through its indexes however large it grows.
 * Every statement of the functions finds its rows by key.
 */
export function tradeFunctionPlansMigration(dialect: DialectName) {
  return {
    async up(db: Kysely<any>): Promise<void> {
      if (dialect !== 'postgres') return;
      for (const name of ['trade_create', 'trade_accept']) {
        await sql`alter function ${sql.id(name)} set plan_cache_mode = force_generic_plan`.execute(db);
        await sql`alter function ${sql.id(name)} set enable_seqscan = off`.execute(db);
      }
    },
  };
}
