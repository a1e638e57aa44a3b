import type pg from 'pg';

/** Statements longer than this (bulk writes, run once) are not kept prepared. */
const MAX_PREPARED_SQL_LENGTH = 4096;
/** Statements kept prepared per connection; past this, others are sent unnamed, parsed and planned each time. */
const MAX_PREPARED_PER_CONNECTION = 500;

/**
 * Has a connection of the pool keep the statements with parameters it runs prepared, named by
 * their text: PostgreSQL then parses each once per connection and, after a few runs, keeps a
 * plan for it when that plan costs no more than planning anew (for the short statements of a
 * request, planning costs more than running them). The first MAX_PREPARED_PER_CONNECTION texts
 * a connection runs are kept for its lifetime; others go unnamed, as every statement did.
 */
export function keepStatementsPrepared(client: pg.PoolClient): void {
  const names = new Map<string, string>();
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((text: unknown, values?: unknown, callback?: unknown) => {
    // Statements without parameters (schema changes, scripts of several statements) go as simple queries, as before.
    if (typeof text !== 'string' || !Array.isArray(values) || values.length === 0 || text.length > MAX_PREPARED_SQL_LENGTH)
      return query(text, values, callback);
    let name = names.get(text);
    if (name === undefined) {
      if (names.size >= MAX_PREPARED_PER_CONNECTION) return query(text, values, callback);
      name = `gp_${names.size}`;
      names.set(text, name);
    }
    return query({ name, text, values }, callback);
  }) as typeof client.query;
}
