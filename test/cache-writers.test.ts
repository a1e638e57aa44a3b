import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/*
 * Every writer of a table some process keeps in memory announces the change through that
 * table's one helper, which forgets it in this process and tells every other one. The writers
 * are found in the source: any file that inserts into, updates or deletes from a cached table
 * must call the helper, or be listed below with the reason it need not.
 */

const root = new URL('..', import.meta.url).pathname;

/** Each cached table, and the helper its writers announce with. */
const HELPERS: Record<string, string> = {
  users: 'announceUsersChanged',
  friendships: 'announceRelationsChanged',
  friend_requests: 'announceRelationsChanged',
  blocks: 'announceRelationsChanged',
  items: 'announceInventoriesChanged',
  item_protos: 'announceCatalogChanged',
  collections: 'announceCatalogChanged',
  qualities: 'announceCatalogChanged',
  item_types: 'announceCatalogChanged',
  sessions: 'announceSessionsRevoked',
};

/** Writers that need not announce, by file and table, with the reason. */
const NEED_NOT: Record<string, Record<string, string>> = {
  'src/users/presence.ts': { users: 'last_seen only: profiles expire within 30 s, which bounds how stale `online` is' },
  'src/auth/signin.ts': { users: 'a password hash made again: no cached column' },
  'src/auth/second-factor.ts': { users: 'the last TOTP step used: no cached column' },
  'src/accounts/two-factor.ts': { users: 'TOTP secrets: no cached column' },
  'src/db/sealed-secrets.ts': { users: 'TOTP secrets sealed again under the secret key: no cached column' },
  'src/auth/tokens.ts': { sessions: 'last_used only: the cache keeps no copy of it' },
  'src/trades/settle.ts': {
    items: 'runs inside the transaction of src/trades/actions.ts, which announces the owners once it is committed',
  },
  'src/accounts/credentials.ts': { users: 'password hash, e-mail address: no cached column' },
  'src/accounts/reset.ts': { users: 'password hash, e-mail confirmation: no cached column' },
  'src/world/import.ts': {
    users: 'importWorld; every caller announces the import (checked below)',
    items: 'importWorld; every caller announces the import (checked below)',
    sessions: 'importWorld; every caller announces the import (checked below)',
  },
};

/** Callers of importWorld announce the import as a whole; a merge of catalogue entries alone, as a catalogue change. */
const IMPORT_HELPERS = ['announceWorldImported', 'announceCatalogChanged'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const WRITE = /\b(?:updateTable|insertInto|deleteFrom|replaceInto)\(\s*'(\w+)'/g;
const RAW_WRITE = /\b(?:update|insert\s+into|delete\s+from)\s+"?(\w+)"?\s/gi;

/** The cached tables a source text writes to. */
function cachedTablesWritten(text: string): Set<string> {
  const tables = new Set<string>();
  for (const match of text.matchAll(WRITE)) if (match[1]! in HELPERS) tables.add(match[1]!);
  for (const template of text.matchAll(/sql`[^`]*`/g))
    for (const match of template[0].matchAll(RAW_WRITE)) if (match[1]! in HELPERS) tables.add(match[1]!);
  return tables;
}

const files = sourceFiles(join(root, 'src')).map((path) => ({ path: relative(root, path), text: readFileSync(path, 'utf8') }));

/*
 * A domain's data-access module (src/<domain>/queries.ts) runs the statements; the logic that
 * calls it announces. So a write in a data-access function counts as a write of each file
 * that imports the module and calls the function.
 */
const isDataAccess = (path: string) => /^src\/\w+\/queries\.ts$/.test(path);

/** The text of a data-access module before its first exported function, and each exported function's text by name. */
function exportedFunctions(text: string): { preamble: string; functions: Map<string, string> } {
  const [preamble, ...parts] = text.split(/^export (?:async )?function (?=\w)/m);
  return { preamble: preamble!, functions: new Map(parts.map((part) => [/^\w+/.exec(part)![0], part])) };
}

const dataAccessWrites = new Map(
  files
    .filter(({ path }) => isDataAccess(path))
    .map(({ path, text }) => [
      path,
      new Map([...exportedFunctions(text).functions].map(([name, body]) => [name, cachedTablesWritten(body)] as const)),
    ]),
);

/** The cached tables a file writes, itself or through the data-access functions it calls. */
function tablesWrittenBy(path: string, text: string): Set<string> {
  const tables = cachedTablesWritten(text);
  for (const [, specifier] of text.matchAll(/from '(\.\.?\/[^']*queries\.js)'/g)) {
    const module = relative(root, join(root, dirname(path), specifier!.replace(/\.js$/, '.ts')));
    for (const [name, written] of dataAccessWrites.get(module) ?? [])
      if (new RegExp(`\\b${name}\\(`).test(text)) for (const table of written) tables.add(table);
  }
  return tables;
}

test('every writer of a cached table announces through the table’s helper', () => {
  const writers: string[] = [];
  const silent: string[] = [];
  for (const { path, text } of files) {
    if (isDataAccess(path)) continue;
    for (const table of tablesWrittenBy(path, text)) {
      writers.push(`${path}: ${table}`);
      if (NEED_NOT[path]?.[table] !== undefined) continue;
      if (!text.includes(`${HELPERS[table]}(`)) silent.push(`${path} writes ${table} without ${HELPERS[table]}`);
    }
  }
  assert.deepEqual(silent, []);
  // The scan finds the writers it is meant to (a scan that found nothing would pass anything).
  for (const writer of [
    'src/admin/accounts.ts: users',
    'src/friends/graph.ts: friendships',
    'src/inventory/grants.ts: items',
    'src/auth/sessions.ts: sessions',
    'src/promocodes/codes.ts: items',
  ])
    assert.ok(writers.includes(writer), writer);
});

test('every exemption is of a file that writes that table', () => {
  for (const [path, tables] of Object.entries(NEED_NOT)) {
    const text = files.find((file) => file.path === path)?.text;
    assert.ok(text !== undefined, `${path} exists`);
    const written = tablesWrittenBy(path, text);
    for (const table of Object.keys(tables)) assert.ok(written.has(table), `${path} still writes ${table}`);
  }
});

test('every write of a data-access module is in one of its exported functions, so its callers are found', () => {
  assert.ok(dataAccessWrites.size > 0, 'the scan finds the data-access modules');
  for (const { path, text } of files.filter((file) => isDataAccess(file.path)))
    assert.deepEqual([...cachedTablesWritten(exportedFunctions(text).preamble)], [], `${path} writes before its first exported function`);
});

test('only the world import (through its data-access module) writes to tables it names at run time', () => {
  const dynamic = files
    .filter(({ text }) => /\b(?:updateTable|insertInto|deleteFrom|replaceInto)\(\s*[^'\s)]/.test(text))
    .map((f) => f.path);
  assert.deepEqual(dynamic, ['src/world/queries.ts']);
});

test('every caller of importWorld announces the import', () => {
  const callers = files.filter(({ path, text }) => path !== 'src/world/import.ts' && /\bimportWorld\(/.test(text));
  assert.ok(callers.length >= 3, 'the admin methods and the import command');
  for (const { path, text } of callers)
    assert.ok(
      IMPORT_HELPERS.some((helper) => text.includes(`${helper}(`)),
      `${path} imports a world without ${IMPORT_HELPERS.join(' or ')}`,
    );
});

test('the scan sees writes in every form the code uses', () => {
  assert.deepEqual([...cachedTablesWritten(`trx.updateTable('users').set({ nick })`)], ['users']);
  assert.deepEqual([...cachedTablesWritten(`db.insertInto( 'items' ).values(rows)`)], ['items']);
  assert.deepEqual([...cachedTablesWritten('await sql`delete from friendships where user_id = ${id}`.execute(db)')], ['friendships']);
  assert.deepEqual([...cachedTablesWritten(`trx.deleteFrom('audit_log')`)], []);
});
