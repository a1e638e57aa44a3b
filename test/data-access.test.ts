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

const SQL = /\b(?:selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto|selectNoFrom)\(|\bsql(?:`|\.\w+\()/;

const root = new URL('../src/', import.meta.url).pathname;

/** Every source file under src/, by its path from there. */
function sourceFiles(dir = ''): { path: string; text: string }[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [{ path, text: readFileSync(join(root, path), 'utf8') }] : [];
  });
}

/** The storage layer (connections, dialects, migrations) and the domains' data-access modules. */
const mayHoldSql = (path: string) => path.startsWith('db/') || /^[^/]+\/queries\.ts$/.test(path);

test('no method, logic or transport file holds SQL: it is in the data-access modules and the storage layer', () => {
  const withSql = sourceFiles()
    .filter(({ path, text }) => !mayHoldSql(path) && SQL.test(text))
    .map(({ path }) => `src/${path}`);
  assert.deepEqual(withSql, []);
});

test('the domains that store things have a data-access module with their SQL', () => {
  const modules = sourceFiles().filter(({ path }) => /^[^/]+\/queries\.ts$/.test(path));
  assert.deepEqual(modules.map(({ path }) => path.split('/')[0]).sort(), [
    'accounts',
    'admin',
    'api',
    'auth',
    'catalog',
    'chat',
    'friends',
    'game',
    'inventory',
    'market',
    'messages',
    'missions',
    'oauth',
    'promocodes',
    'rooms',
    'trades',
    'users',
    'world',
  ]);
  for (const { path, text } of modules) assert.ok(SQL.test(text), `src/${path} runs its domain's statements`);
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
