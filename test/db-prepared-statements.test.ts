import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { DB_KIND, newDatabaseLocation, type DatabaseLocation } from './helpers.js';
import { openDatabase, type Database } from '../src/db/connection.js';
import type { Tables } from '../src/db/tables.js';

/*
 * On PostgreSQL each connection keeps the statements with parameters it runs prepared (parsed
 * once, planned once PostgreSQL finds a kept plan no dearer), the first 500 texts of each
 * connection; `--no-prepared-statements` sends every statement to be parsed and planned anew.
 */

const postgresOnly = { skip: DB_KIND !== 'postgres' && 'PostgreSQL only: SQLite statements are kept by the driver' };

const opened: { db: Database; location: DatabaseLocation }[] = [];
after(async () => {
  for (const { db, location } of opened) {
    await db.close();
    await location.dispose();
  }
});

async function open(preparedStatements?: boolean): Promise<Database> {
  const location = await newDatabaseLocation();
  const db = await openDatabase(location.url, { schema: location.schema, poolSize: 2, secretKey: location.secretKey, preparedStatements });
  opened.push({ db, location });
  return db;
}

/** How many times each prepared statement of this connection whose text is one of `texts` was run. */
async function runsOf(executor: Kysely<Tables>, texts: string[]): Promise<Map<string, number>> {
  const { rows } = await sql<{ statement: string; runs: number }>`
    select statement, (generic_plans + custom_plans)::int as runs from pg_prepared_statements
    where not from_sql and statement = any(${texts}::text[])`.execute(executor);
  return new Map(rows.map((row) => [row.statement, row.runs]));
}

const SUM = (n: number) => sql<{ n: number }>`select ${n}::int + 1 as n`;
const SUM_TEXT = 'select $1::int + 1 as n';

test('a statement with parameters is prepared once on its connection and run from there; one without is not', postgresOnly, async () => {
  const db = await open();
  await db.kysely.connection().execute(async (connection) => {
    for (const n of [1, 2, 3]) assert.deepEqual((await SUM(n).execute(connection)).rows, [{ n: n + 1 }]);
    await sql`select 40 + 2 as n`.execute(connection);
    const runs = await runsOf(connection, [SUM_TEXT, 'select 40 + 2 as n']);
    assert.deepEqual([...runs], [[SUM_TEXT, 3]]);
  });
});

test('a connection keeps its first 500 statement texts prepared and runs the others unprepared', postgresOnly, async () => {
  const db = await open();
  await db.kysely.connection().execute(async (connection) => {
    const texts: string[] = [];
    for (let k = 0; k < 520; k++) {
      const statement = sql<{ n: number }>`select ${sql.lit(k)} + ${k}::int as n`;
      texts.push(statement.compile(connection).sql);
      assert.deepEqual((await statement.execute(connection)).rows, [{ n: 2 * k }]);
    }
    const { rows } = await sql<{ kept: number }>`select count(*)::int as kept from pg_prepared_statements where not from_sql`.execute(
      connection,
    );
    assert.equal(rows[0]!.kept, 500);
    const runs = await runsOf(connection, texts);
    assert.equal(runs.get(texts[0]!), 1, 'the first texts are kept');
    assert.equal(runs.get(texts[519]!), undefined, 'the last ones are not');
  });
});

test('--no-prepared-statements: every statement is parsed and planned anew', postgresOnly, async () => {
  const db = await open(false);
  await db.kysely.connection().execute(async (connection) => {
    for (const n of [1, 2, 3]) assert.deepEqual((await SUM(n).execute(connection)).rows, [{ n: n + 1 }]);
    const { rows } = await sql<{ kept: number }>`select count(*)::int as kept from pg_prepared_statements`.execute(connection);
    assert.equal(rows[0]!.kept, 0);
  });
});

test('a statement that fails to prepare (in a transaction already failed) is prepared when run again', postgresOnly, async () => {
  const db = await open();
  await db.kysely.connection().execute(async (connection) => {
    await sql`begin`.execute(connection);
    await assert.rejects(sql`select ${1}::int / 0 as n`.execute(connection), /division by zero/);
    await assert.rejects(SUM(1).execute(connection), /current transaction is aborted/);
    await sql`rollback`.execute(connection);
    assert.deepEqual((await SUM(5).execute(connection)).rows, [{ n: 6 }]);
    assert.deepEqual([...(await runsOf(connection, [SUM_TEXT]))], [[SUM_TEXT, 1]]);
  });
});
