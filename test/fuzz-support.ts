import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { TSchema } from '@sinclair/typebox';
import type { AnyMethod } from '../src/api/method.js';
import { MAX_UINT, type ParamKind } from '../src/api/params.js';
import type { Database } from '../src/db/connection.js';
import { responseProblems } from './response-check.js';

/**
 * Generators of hostile requests for any method, from its own parameter schema, and a
 * snapshot of the whole database to prove that a refused request changed nothing.
 */

/** Seed of every fuzz run; FUZZ_SEED replays a reported failure, FUZZ_RUNS scales the runs. */
export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20260121);
export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 24);

/** What a parameter value may be before it is put on the wire. */
export type Value = string | number | boolean | null | Value[] | { [key: string]: Value };

const HUGE = 'x'.repeat(100 * 1024);

/** Values that have broken parsers, validators and queries somewhere. */
export const hostileScalars: Value[] = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '%00',
  '\uD800',
  'ü日本語🎲',
  '\u202Eevil',
  "' OR 1=1 --",
  '1; DROP TABLE users; --',
  '1 UNION SELECT password_hash FROM users',
  '%',
  '_',
  '\\',
  '"',
  '{"code":0}',
  '"},"code":0,"x":{"',
  '__proto__',
  'constructor',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '0x10',
  '1.5',
  '-1',
  '-0',
  '00',
  '18446744073709551616',
  '9007199254740993',
  ' 7 ',
  '7,',
  ',7',
  '1,,2',
  '1,-2',
  'true',
  'false',
  0,
  -1,
  -0,
  0.5,
  2 ** 53,
  2 ** 64,
  -(2 ** 63),
  Number.MAX_SAFE_INTEGER,
  1e308,
  true,
  false,
  null,
];

/** Non-scalar values where scalars belong. */
export const hostileStructures: Value[] = [
  [],
  [1, 2],
  ['a', 'b'],
  [[1]],
  {},
  { a: 1 },
  JSON.parse('{"__proto__":{"polluted":1}}') as Value,
  { toString: 'x' },
];

/** JSON text of a value nested `depth` levels deep (written out: JSON.stringify itself runs out of stack on deep values). */
export function nested(depth: number): string {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    open += i % 2 === 0 ? '[' : '{"a":';
    close = (i % 2 === 0 ? ']' : '}') + close;
  }
  return `${open}1${close}`;
}

export interface Fixture {
  userIds: number[];
  domains: string[];
  itemIds: number[];
  protoIds: number[];
  emails: string[];
  password: string;
  msgIds: string[];
}

function scalarFor(kind: ParamKind | undefined, schema: TSchema, name: string, fixture: Fixture): fc.Arbitrary<Value> {
  const ids = fc.constantFrom(...fixture.userIds, ...fixture.itemIds, ...fixture.protoIds, 0, 1, 2, 999_999);
  switch (kind) {
    case 'uint':
    case 'int':
      return fc.oneof(ids, fc.integer({ min: -5, max: 100 }), fc.constant(MAX_UINT), fc.maxSafeNat(), ids.map(String));
    case 'bit':
      return fc.constantFrom<Value>(0, 1, true, false, '0', '1', 'true', 'false', 2, 'yes');
    case 'double':
      return fc.oneof(fc.double(), fc.double().map(String));
    case 'enum': {
      const allowed = ((schema.anyOf as { const: string }[] | undefined) ?? []).map((s) => s.const);
      return fc.oneof(fc.constantFrom<Value>(...allowed), fc.constantFrom<Value>(...allowed.map((a) => a.toUpperCase()), ` ${allowed[0]}`));
    }
    case 'idOrDomain':
      return fc.oneof(ids, ids.map(String), fc.constantFrom(...fixture.domains), fc.string({ maxLength: 20 }));
    case 'set': {
      const element: fc.Arbitrary<Value> = fc.oneof(ids, ids.map(String), fc.constantFrom(...fixture.domains, 'x', ' '));
      return fc.oneof(
        fc.array(element, { maxLength: 12 }).map((a) => a.join(',')),
        fc.array(element, { maxLength: 4 }),
        fc.constantFrom(...fixture.itemIds).map((first) => Array.from({ length: 10 }, (_, i) => first + i).join(',')),
        fc.integer({ min: 40, max: 60 }).map((n) => Array.from({ length: n }, (_, i) => i + 1).join(',')),
      );
    }
    case 'string':
    default: {
      const maxLength = (schema.maxLength as number | undefined) ?? 200;
      const near = Math.min(maxLength, 5000);
      const known: Value[] = [
        ...fixture.emails,
        fixture.password,
        ...fixture.msgIds,
        'short',
        'full',
        'time',
        'quality',
        'array',
        'tree',
        'merge',
        'replace',
      ];
      if (name === 'message') known.push('hello @1', ':smile:', '!command', 'hi @2 @3');
      if (name === 'item_proto' || name === 'world')
        known.push('{}', '[]', '{"item_proto_id":1,"type":0,"title":"t"}', '{"users":[{"user_id":1,"nick":"n"}]}');
      return fc.oneof(
        fc.constantFrom(...known),
        fc.string({ maxLength: 40 }),
        fc.string({ unit: 'grapheme', maxLength: 40 }),
        fc.constant('y'.repeat(near)),
        fc.constant('y'.repeat(near + 1)),
        fc.json({ maxDepth: 2 }),
      );
    }
  }
}

/** One parameter's value: usually of its own type, often hostile, sometimes huge. */
function valueFor(name: string, schema: TSchema, fixture: Fixture): fc.Arbitrary<Value> {
  return fc.oneof(
    { weight: 30, arbitrary: scalarFor(schema['x-param'] as ParamKind | undefined, schema, name, fixture) },
    { weight: 15, arbitrary: fc.constantFrom(...hostileScalars) },
    { weight: 5, arbitrary: fc.constantFrom(...hostileStructures) },
    {
      weight: 5,
      arbitrary: fc
        .tuple(scalarFor(schema['x-param'] as ParamKind | undefined, schema, name, fixture), fc.constantFrom<Value>('', '1', 'x'))
        .map(([a, b]) => [a, b]),
    },
    { weight: 1, arbitrary: fc.constant(HUGE) },
  );
}

/** A parameter record for a method: each declared parameter absent or given, plus undeclared ones. */
export function paramsFor(method: AnyMethod, fixture: Fixture): fc.Arbitrary<Record<string, Value>> {
  const entries = Object.entries(method.params.properties as Record<string, TSchema>);
  const declared = Object.fromEntries(entries.map(([name, schema]) => [name, valueFor(name, schema, fixture)]));
  return fc
    .tuple(
      fc.record(declared, { requiredKeys: [] }),
      fc.dictionary(
        fc.constantFrom('__proto__', 'constructor', 'hasOwnProperty', 'code', 'data', 'extra', ''),
        fc.constantFrom<Value>(...hostileScalars),
        {
          maxKeys: 2,
        },
      ),
    )
    .map(([params, extra]) => ({ ...extra, ...params }) as Record<string, Value>);
}

export type Encoding =
  | 'get'
  | 'json'
  | 'form'
  | 'json-with-conflicting-query'
  | 'multipart'
  | 'text'
  | 'no-content-type'
  | 'malformed-json'
  | 'json-not-object'
  | 'json-odd-content-type'
  | 'get-with-body'
  | 'empty-post'
  | 'octet-stream'
  | 'xml'
  | 'form-as-json'
  | 'json-utf16';

export const encodings: Encoding[] = [
  'get',
  'json',
  'form',
  'json-with-conflicting-query',
  'multipart',
  'text',
  'no-content-type',
  'malformed-json',
  'json-not-object',
  'json-odd-content-type',
  'get-with-body',
  'empty-post',
  'octet-stream',
  'xml',
  'form-as-json',
  'json-utf16',
];

export type Credential = 'none' | 'user' | 'user-bearer' | 'bot' | 'invalid' | 'garbage' | 'admin' | 'admin-wrong' | 'admin-and-user';

export const credentials: Credential[] = [
  'none',
  'user',
  'user-bearer',
  'bot',
  'invalid',
  'garbage',
  'admin',
  'admin-wrong',
  'admin-and-user',
];

export interface FuzzRequest {
  params: Record<string, Value>;
  encoding: Encoding;
  credential: Credential;
  /** Values of the query string that conflict with the body. */
  conflicting: Record<string, Value>;
  /** Address the request comes from (spread, so per-address failure limits do not end the run). */
  ip: string;
}

export function requestFor(method: AnyMethod, fixture: Fixture): fc.Arbitrary<FuzzRequest> {
  return fc.record({
    params: paramsFor(method, fixture),
    encoding: fc.constantFrom(...encodings),
    credential: fc.constantFrom(...credentials),
    conflicting: paramsFor(method, fixture),
    ip: fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255)).map(([a, b, c]) => `10.${a}.${b}.${c}`),
  });
}

function wireString(value: Value): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** key=value pairs of a record: lists become repeated keys (duplicate parameters). */
function pairs(params: Record<string, Value>): [string, string][] {
  return Object.entries(params).flatMap(([k, v]) =>
    Array.isArray(v) ? v.map((e) => [k, wireString(e)] as [string, string]) : [[k, wireString(v)]],
  );
}

export interface WireRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

export interface Secrets {
  userToken: string;
  botToken: string;
  adminKey: string;
}

/** Puts a fuzz request on the wire: token, admin key, content type and body. */
export function encode(methodName: string, request: FuzzRequest, secrets: Secrets): WireRequest {
  const params: Record<string, Value> = { ...request.params };
  const headers: Record<string, string> = {};
  switch (request.credential) {
    case 'user':
      params.access_token = secrets.userToken;
      break;
    case 'user-bearer':
      headers.authorization = `Bearer ${secrets.userToken}`;
      break;
    case 'bot':
      params.access_token = secrets.botToken;
      break;
    case 'invalid':
      params.access_token = 'A'.repeat(43);
      break;
    case 'garbage':
      headers.authorization = 'Bearer \u00ff\u00fe';
      params.access_token = ['x', 'y'];
      break;
    case 'admin':
      headers['x-admin-key'] = secrets.adminKey;
      break;
    case 'admin-wrong':
      headers['x-admin-key'] = `${secrets.adminKey}x`;
      break;
    case 'admin-and-user':
      headers['x-admin-key'] = secrets.adminKey;
      params.access_token = secrets.userToken;
      break;
    case 'none':
      break;
  }
  const path = `/api/${methodName}`;
  const query = (record: Record<string, Value>) => new URLSearchParams(pairs(record)).toString();
  const json = JSON.stringify(params);
  switch (request.encoding) {
    case 'get':
      return { method: 'GET', url: `${path}?${query(params)}`, headers };
    case 'json':
      return { method: 'POST', url: path, headers: { ...headers, 'content-type': 'application/json' }, payload: json };
    case 'form':
      return {
        method: 'POST',
        url: path,
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
        payload: query(params),
      };
    case 'json-with-conflicting-query':
      return {
        method: 'POST',
        url: `${path}?${query(request.conflicting)}`,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: json,
      };
    case 'multipart': {
      const boundary = 'fuzzboundary7MA4YWxkTrZu0gW';
      const parts = pairs(params).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
      return {
        method: 'POST',
        url: path,
        headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
        payload: `${parts.join('')}--${boundary}--\r\n`,
      };
    }
    case 'text':
      return { method: 'POST', url: path, headers: { ...headers, 'content-type': 'text/plain' }, payload: json };
    case 'no-content-type':
      return { method: 'POST', url: path, headers, payload: json };
    case 'malformed-json':
      return {
        method: 'POST',
        url: path,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: `${json.slice(0, Math.max(1, json.length - 1))},NaN`,
      };
    case 'json-not-object':
      return {
        method: 'POST',
        url: `${path}?${query(params)}`,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: JSON.stringify(Object.values(params)),
      };
    case 'json-odd-content-type':
      return { method: 'POST', url: path, headers: { ...headers, 'content-type': 'Application/JSON; charset=latin1' }, payload: json };
    case 'get-with-body':
      return {
        method: 'GET',
        url: `${path}?${query(request.conflicting)}`,
        headers: { ...headers, 'content-type': 'application/json' },
        payload: json,
      };
    case 'empty-post':
      return { method: 'POST', url: `${path}?${query(params)}`, headers: { ...headers, 'content-type': 'application/json' }, payload: '' };
    case 'octet-stream':
      return {
        method: 'POST',
        url: `${path}?${query(request.conflicting)}`,
        headers: { ...headers, 'content-type': 'application/octet-stream' },
        payload: json,
      };
    case 'xml':
      return {
        method: 'POST',
        url: path,
        headers: { ...headers, 'content-type': 'application/xml' },
        payload: `<?xml version="1.0"?><params>${pairs(params)
          .map(([k, v]) => `<p n="${k}">${v}</p>`)
          .join('')}</params>`,
      };
    case 'form-as-json':
      return { method: 'POST', url: path, headers: { ...headers, 'content-type': 'application/json' }, payload: query(params) };
    case 'json-utf16':
      return {
        method: 'POST',
        url: path,
        headers: { ...headers, 'content-type': 'application/json; charset=utf-16le' },
        payload: Buffer.from(json, 'utf16le'),
      };
  }
}

/** A table's rows as sorted JSON lines, without the columns that change by design on any call. */
export type Snapshot = Map<string, string[]>;

/** Tables a refused request may write by design: the admin audit log records refused admin calls too. */
const LOG_TABLES = new Set(['audit_log']);
/** Columns any authenticated request may write: presence. */
const VOLATILE_COLUMNS: Record<string, string[]> = { users: ['last_seen'] };

async function tableNames(db: Database): Promise<string[]> {
  const rows =
    db.dialect === 'sqlite'
      ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(db.kysely)).rows
      : (
          await sql<{
            name: string;
          }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(db.kysely)
        ).rows;
  return rows
    .map((r) => r.name)
    .filter((name) => !name.startsWith('sqlite_') && !name.startsWith('kysely_') && !LOG_TABLES.has(name))
    .sort();
}

/** Every row of every table of the platform. */
export async function snapshot(db: Database): Promise<Snapshot> {
  const out: Snapshot = new Map();
  for (const table of await tableNames(db)) {
    const rows = (await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db.kysely)).rows;
    const volatile = VOLATILE_COLUMNS[table] ?? [];
    out.set(
      table,
      rows
        .map((row) => {
          for (const column of volatile) delete row[column];
          return JSON.stringify(row);
        })
        .sort(),
    );
  }
  return out;
}

/** What changed between two snapshots, for the failure message (empty when nothing did). */
export function differences(before: Snapshot, after: Snapshot): string[] {
  const problems: string[] = [];
  for (const table of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(table) ?? [];
    const b = after.get(table) ?? [];
    if (digest(a) === digest(b)) continue;
    const setA = new Set(a);
    const setB = new Set(b);
    const gone = a.filter((r) => !setB.has(r)).slice(0, 3);
    const added = b.filter((r) => !setA.has(r)).slice(0, 3);
    problems.push(`${table}: ${a.length} -> ${b.length} rows; removed ${gone.join(' ')}; added ${added.join(' ')}`.slice(0, 1500));
  }
  return problems;
}

function digest(rows: string[]): string {
  return createHash('sha256').update(rows.join('\n')).digest('hex');
}

/** The checks every answer must pass, whatever was sent. */
export function assertSaneAnswer(method: AnyMethod, status: number, text: string, context: string): { code: number } {
  assert.ok(status < 500, `HTTP ${status} ${context}: ${text.slice(0, 300)}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    assert.fail(`not JSON (HTTP ${status}) ${context}: ${text.slice(0, 300)}`);
  }
  const code = (body as { code?: unknown }).code;
  assert.equal(typeof code, 'number', `no numeric code ${context}: ${text.slice(0, 300)}`);
  assert.notEqual(code, 3, `code 3 ${context}: ${text.slice(0, 300)}`);
  const problems = responseProblems(method, status, body);
  assert.deepEqual(problems, [], `answer outside the published schema ${context}`);
  return { code: code as number };
}

/** Everything a fuzz run needs from its server. */
export interface FuzzTarget {
  inject(wire: WireRequest, ip: string): Promise<{ status: number; text: string }>;
  db: Database;
  /** Brings the fixture back (accounts, tokens) after a method's run, which may have undone it. */
  restore(): Promise<Secrets>;
}

/**
 * Runs FUZZ_RUNS generated requests against one method: every answer must be sane, and a
 * refused one must leave every table as it was.
 */
export async function fuzzMethod(
  target: FuzzTarget,
  method: AnyMethod,
  fixture: Fixture,
  seed: number,
  numRuns = FUZZ_RUNS,
): Promise<void> {
  const secrets = await target.restore();
  const codes = new Map<number, number>();
  let before = await snapshot(target.db);
  await fc
    .assert(
      fc.asyncProperty(requestFor(method, fixture), async (request) => {
        const wire = encode(method.name, request, secrets);
        const { status, text } = await target.inject(wire, request.ip);
        const context = `for ${wire.method} ${wire.url.slice(0, 300)} ${JSON.stringify(wire.headers)} ${String(wire.payload ?? '').slice(0, 300)}`;
        const { code } = assertSaneAnswer(method, status, text, context);
        codes.set(code, (codes.get(code) ?? 0) + 1);
        const after = await snapshot(target.db);
        if (code !== 0) assert.deepEqual(differences(before, after), [], `refused with code ${code} but changed the database ${context}`);
        before = after;
      }),
      { seed, numRuns, endOnFailure: true },
    )
    .catch((error: Error) => {
      error.message = `${error.message}\nReplay with FUZZ_SEED=${FUZZ_SEED} (method ${method.name}, run seed ${seed})`;
      throw error;
    });
  if (process.env.FUZZ_STATS) console.log(`${method.name}: codes ${JSON.stringify(Object.fromEntries(codes))}`);
}
