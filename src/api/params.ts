import { OptionalKind, Type, type TSchema, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import { badParam, tooManyObjects } from './errors.js';
import { characterCountFor, unstorableTextProblem } from '../infra/text.js';

/**
 * Parameter types of the spec's notation. Each is a TypeBox schema of the value the handler
 * receives, annotated with `x-param` (how to read it from the wire: query strings and form
 * bodies carry only strings, JSON bodies carry numbers and booleans too) and its limits.
 * The same schemas feed the OpenAPI document.
 */
export type ParamKind = 'uint' | 'int' | 'bit' | 'double' | 'string' | 'enum' | 'set' | 'idOrDomain';

export interface ParamMeta {
  'x-param': ParamKind;
  /** set: the kind of each element */
  'x-item'?: 'uint' | 'idOrDomain' | 'string';
  /** uint and set: above this many, the answer is code 6 rather than 2 */
  'x-too-many'?: number;
}

interface Common {
  description?: string;
}

/** Largest integer accepted anywhere: ids and counts beyond it cannot name anything. */
export const MAX_UINT = Number.MAX_SAFE_INTEGER;

export const P = {
  uint: (o: Common & { default?: number; minimum?: number; maximum?: number; tooMany?: number } = {}) =>
    Type.Integer({
      minimum: o.minimum ?? 0,
      maximum: o.maximum ?? MAX_UINT,
      ...(o.default !== undefined ? { default: o.default } : {}),
      ...(o.description ? { description: o.description } : {}),
      'x-param': 'uint',
      ...(o.tooMany !== undefined ? { 'x-too-many': o.tooMany } : {}),
    }),
  int: (o: Common & { default?: number; minimum?: number; maximum?: number } = {}) =>
    Type.Integer({
      minimum: o.minimum ?? -MAX_UINT,
      maximum: o.maximum ?? MAX_UINT,
      ...(o.default !== undefined ? { default: o.default } : {}),
      ...(o.description ? { description: o.description } : {}),
      'x-param': 'int',
    }),
  bit: (o: Common & { default?: 0 | 1 } = {}) =>
    Type.Union([Type.Literal(0), Type.Literal(1)], {
      ...(o.default !== undefined ? { default: o.default } : {}),
      ...(o.description ? { description: o.description } : {}),
      'x-param': 'bit',
    }),
  double: (o: Common & { default?: number; minimum?: number; maximum?: number } = {}) =>
    Type.Number({
      ...(o.minimum !== undefined ? { minimum: o.minimum } : {}),
      ...(o.maximum !== undefined ? { maximum: o.maximum } : {}),
      ...(o.default !== undefined ? { default: o.default } : {}),
      ...(o.description ? { description: o.description } : {}),
      'x-param': 'double',
    }),
  string: (o: Common & { default?: string; minLength?: number; maxLength?: number; trim?: boolean } = {}) =>
    Type.String({
      ...(o.minLength !== undefined ? { minLength: o.minLength } : {}),
      maxLength: o.maxLength ?? 10_000,
      ...(o.default !== undefined ? { default: o.default } : {}),
      ...(o.description ? { description: o.description } : {}),
      'x-param': 'string',
    }),
  enum: <const V extends readonly [string, ...string[]]>(values: V, o: Common & { default?: V[number] } = {}) =>
    Type.Union(values.map((v) => Type.Literal(v)) as never as [ReturnType<typeof Type.Literal<V[number]>>], {
      ...(o.default !== undefined ? { default: o.default } : {}),
      ...(o.description ? { description: o.description } : {}),
      'x-param': 'enum',
    }),
  /** `set<uint>`: comma-separated ids. */
  uintSet: (o: Common & { maxItems?: number; tooMany?: number } = {}) =>
    Type.Array(Type.Integer({ minimum: 0, maximum: MAX_UINT }), {
      ...(o.maxItems !== undefined ? { maxItems: o.maxItems } : {}),
      ...(o.description ? { description: o.description } : {}),
      'x-param': 'set',
      'x-item': 'uint',
      ...(o.tooMany !== undefined ? { 'x-too-many': o.tooMany } : {}),
    }),
  /** `set<uint | string>`: comma-separated ids or domains. */
  idOrDomainSet: (o: Common & { tooMany?: number } = {}) =>
    Type.Array(Type.Union([Type.Integer({ minimum: 1, maximum: MAX_UINT }), Type.String({ maxLength: 100 })]), {
      ...(o.description ? { description: o.description } : {}),
      'x-param': 'set',
      'x-item': 'idOrDomain',
      ...(o.tooMany !== undefined ? { 'x-too-many': o.tooMany } : {}),
    }),
  /** `uint | string`: a numeric id (all digits) or a domain name (anything else). */
  idOrDomain: (o: Common = {}) =>
    Type.Union([Type.Integer({ minimum: 1, maximum: MAX_UINT }), Type.String({ minLength: 1, maxLength: 100 })], {
      ...(o.description ? { description: o.description } : {}),
      'x-param': 'idOrDomain',
    }),
  optional: Type.Optional,
  object: <T extends TProperties>(properties: T) => Type.Object(properties),
};

export type Params<T extends TSchema> = Static<T>;

type Raw = unknown;

function isPlainScalar(v: Raw): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

function readUint(name: string, raw: Raw, schema: TSchema): number {
  let value: number;
  if (typeof raw === 'number') value = raw;
  else if (typeof raw === 'string' && /^\s*\d+\s*$/.test(raw)) value = Number(raw.trim());
  else if (typeof raw === 'string' && /^\s*-\d+\s*$/.test(raw)) value = Number(raw.trim());
  else throw badParam(name, 'must be an unsigned integer');
  if (!Number.isSafeInteger(value)) throw badParam(name, 'must be an unsigned integer');
  const minimum = (schema.minimum as number | undefined) ?? 0;
  if (value < minimum) throw badParam(name, minimum > 0 ? `must be at least ${minimum}` : 'must be an unsigned integer');
  const tooMany = schema['x-too-many'] as number | undefined;
  if (tooMany !== undefined && value > tooMany) throw tooManyObjects(name, tooMany);
  const maximum = schema.maximum as number | undefined;
  if (maximum !== undefined && value > maximum) throw badParam(name, `must be at most ${maximum}`);
  return value;
}

function readInt(name: string, raw: Raw, schema: TSchema): number {
  let value: number;
  if (typeof raw === 'number') value = raw;
  else if (typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw)) value = Number(raw.trim());
  else throw badParam(name, 'must be an integer');
  if (!Number.isSafeInteger(value)) throw badParam(name, 'must be an integer');
  if (value < (schema.minimum as number)) throw badParam(name, `must be at least ${schema.minimum}`);
  if (value > (schema.maximum as number)) throw badParam(name, `must be at most ${schema.maximum}`);
  return value;
}

function readBit(name: string, raw: Raw): 0 | 1 {
  if (raw === 1 || raw === true || raw === '1' || raw === 'true') return 1;
  if (raw === 0 || raw === false || raw === '0' || raw === 'false') return 0;
  throw badParam(name, 'must be 0 or 1');
}

function readDouble(name: string, raw: Raw, schema: TSchema): number {
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  if (!Number.isFinite(value)) throw badParam(name, 'must be a number');
  if (schema.minimum !== undefined && value < (schema.minimum as number)) throw badParam(name, `must be at least ${schema.minimum}`);
  if (schema.maximum !== undefined && value > (schema.maximum as number)) throw badParam(name, `must be at most ${schema.maximum}`);
  return value;
}

function readString(name: string, raw: Raw, schema: TSchema): string {
  if (typeof raw === 'number' && Number.isFinite(raw)) raw = String(raw);
  if (typeof raw !== 'string') throw badParam(name, 'must be a string');
  rejectUnstorable(name, raw);
  const { minLength, maxLength } = schema as { minLength?: number; maxLength?: number };
  const characters = characterCountFor(raw, { minLength, maxLength });
  if (minLength !== undefined && characters < minLength) throw badParam(name, `must be at least ${minLength} characters`);
  if (maxLength !== undefined && characters > maxLength) throw badParam(name, `must be at most ${maxLength} characters`);
  return raw;
}

function readIdOrDomain(name: string, raw: Raw): number | string {
  if (typeof raw === 'number') {
    if (!Number.isSafeInteger(raw) || raw <= 0) throw badParam(name, 'ids must be positive integers');
    return raw;
  }
  if (typeof raw !== 'string') throw badParam(name, 'must be an id or a domain');
  const value = raw.trim();
  if (value === '') throw badParam(name, 'must be an id or a domain');
  if (/^-?\d+$/.test(value)) {
    const id = Number(value);
    if (!Number.isSafeInteger(id) || id <= 0) throw badParam(name, 'ids must be positive integers');
    return id;
  }
  if (value.length > 100) throw badParam(name, 'domain is too long');
  rejectUnstorable(name, value);
  return value;
}

/** No text we keep or look up may be one the databases would not keep as it is. */
function rejectUnstorable(name: string, value: string): void {
  const problem = unstorableTextProblem(value);
  if (problem) throw badParam(name, problem);
}

const COMMA = 44;
const DIGIT_0 = 48;
const DIGIT_9 = 57;
/** Digits of the largest id read without `Number`: below 2^53 whatever they are. */
const PLAIN_ID_DIGITS = 15;

/**
 * `1,2,3` read in one pass: the common form of id lists (users.get, getItemProtos...), which
 * can hold dozens of ids. Undefined for anything else (spaces, domains, empty elements, zero,
 * very long numbers), which the general reading handles with its error messages.
 */
function plainIdList(raw: string): number[] | undefined {
  const ids: number[] = [];
  let value = 0;
  let digits = 0;
  for (let i = 0; i <= raw.length; i++) {
    const c = i === raw.length ? COMMA : raw.charCodeAt(i);
    if (c >= DIGIT_0 && c <= DIGIT_9) {
      value = value * 10 + (c - DIGIT_0);
      if (++digits > PLAIN_ID_DIGITS) return undefined;
    } else if (c === COMMA && value > 0) {
      ids.push(value);
      value = 0;
      digits = 0;
    } else return undefined;
  }
  return ids;
}

function readSet(name: string, raw: Raw, schema: TSchema): unknown[] | undefined {
  let parts: Raw[];
  const item = schema['x-item'] as ParamMeta['x-item'];
  const tooMany = schema['x-too-many'] as number | undefined;
  if (typeof raw === 'string' && (item === 'uint' || item === 'idOrDomain')) {
    const ids = plainIdList(raw);
    const within = (limit: unknown) => limit === undefined || ids!.length <= (limit as number);
    if (ids !== undefined && within(tooMany) && within(schema.maxItems)) return ids;
  }
  if (typeof raw === 'string') {
    if (raw.trim() === '') return undefined;
    parts = raw.split(',');
  } else if (typeof raw === 'number') parts = [raw];
  else if (Array.isArray(raw)) {
    if (raw.length === 0) return undefined;
    parts = raw.flatMap((p) => (typeof p === 'string' ? p.split(',') : [p]));
  } else throw badParam(name, 'must be a comma-separated list');
  if (tooMany !== undefined && parts.length > tooMany) throw tooManyObjects(name, tooMany);
  if (schema.maxItems !== undefined && parts.length > (schema.maxItems as number))
    throw badParam(name, `must have at most ${schema.maxItems} elements`);
  return parts.map((part) => {
    if (!isPlainScalar(part) || (typeof part === 'string' && part.trim() === '')) throw badParam(name, 'has an empty or invalid element');
    if (item === 'uint') return readUint(name, typeof part === 'string' ? part.trim() : part, { minimum: 0, maximum: MAX_UINT } as never);
    if (item === 'idOrDomain') return readIdOrDomain(name, part);
    return readString(name, String(part).trim(), { maxLength: 1000 } as never);
  });
}

function readEnum(name: string, raw: Raw, schema: TSchema): string {
  const allowed = (schema.anyOf as { const: string }[]).map((s) => s.const);
  if (typeof raw !== 'string' || !allowed.includes(raw)) throw badParam(name, `must be one of ${allowed.join(', ')}`);
  return raw;
}

function readOne(name: string, raw: Raw, schema: TSchema): unknown {
  const kind = schema['x-param'] as ParamKind | undefined;
  if (kind !== 'set' && Array.isArray(raw)) throw badParam(name, 'was given more than once or as a list');
  if (kind !== 'set' && raw !== null && typeof raw === 'object') throw badParam(name, 'must be a scalar value');
  switch (kind) {
    case 'uint':
      return readUint(name, raw, schema);
    case 'int':
      return readInt(name, raw, schema);
    case 'bit':
      return readBit(name, raw);
    case 'double':
      return readDouble(name, raw, schema);
    case 'string':
      return readString(name, raw, schema);
    case 'enum':
      return readEnum(name, raw, schema);
    case 'idOrDomain':
      return readIdOrDomain(name, raw);
    case 'set':
      return readSet(name, raw, schema);
    default:
      throw new Error(`parameter ${name} has no x-param kind`);
  }
}

/**
 * Reads a method's parameters from the merged raw input: coerces each declared parameter,
 * applies defaults, rejects missing required ones (code 2) and ignores undeclared ones.
 */
export function readParams<T extends TObject>(schema: T, raw: Record<string, unknown>): Static<T> {
  const out: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties) as [string, TSchema][]) {
    const value = Object.prototype.hasOwnProperty.call(raw, name) ? raw[name] : undefined;
    const absent = value === undefined || value === null || (value === '' && property['x-param'] !== 'string');
    let parsed = absent ? undefined : readOne(name, value, property);
    if (parsed === undefined && property.default !== undefined) parsed = property.default;
    if (parsed === undefined) {
      if (OptionalKind in property) continue;
      throw badParam(name, 'is required');
    }
    out[name] = parsed;
  }
  return out as Static<T>;
}
