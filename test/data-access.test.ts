import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/*
 * A domain's SQL (query builders, raw statements, literals the indexes name, dialect branches)
 * lives in its data-access module, src/<domain>/queries.ts: functions taking the executor (the
 * connection or the transaction the logic opened) and returning typed rows. Its methods and
 * logic files call them and hold no SQL.
 */

/** The domains held to it so far; the others still have SQL in their logic files. */
const DOMAINS = ['promocodes', 'admin', 'accounts', 'auth', 'world', 'catalog', 'chat', 'users', 'friends', 'trades', 'inventory'];

const SQL = /\b(?:selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto|selectNoFrom)\(|\bsql(?:`|\.\w+\()/;

const root = new URL('../src/', import.meta.url).pathname;

function domainFiles(domain: string): { name: string; text: string }[] {
  return readdirSync(join(root, domain))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => ({ name, text: readFileSync(join(root, domain, name), 'utf8') }));
}

test('the methods and logic of these domains hold no SQL: it is in their data-access modules', () => {
  const withSql = DOMAINS.flatMap((domain) =>
    domainFiles(domain)
      .filter(({ name, text }) => name !== 'queries.ts' && SQL.test(text))
      .map(({ name }) => `src/${domain}/${name}`),
  );
  assert.deepEqual(withSql, []);
});

test('each of these domains has a data-access module with its SQL', () => {
  for (const domain of DOMAINS) {
    const queries = domainFiles(domain).find(({ name }) => name === 'queries.ts');
    assert.ok(queries && SQL.test(queries.text), `src/${domain}/queries.ts runs the statements of ${domain}`);
  }
});

test('the scan sees SQL in every form the code uses', () => {
  for (const text of [
    `trx.selectFrom('users')`,
    `db.insertInto('items')`,
    `k.updateTable('promocodes')`,
    `trx.deleteFrom('sessions')`,
    'sql`uses + 1`',
    `sql.lit('owned')`,
    `sql.raw('indexed by items_by_time')`,
  ])
    assert.ok(SQL.test(text), text);
  for (const text of [`import { sql } from 'kysely';`, `const selectFromCache = 1`, `mysql\``]) assert.ok(!SQL.test(text), text);
});
