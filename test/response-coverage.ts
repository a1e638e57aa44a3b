import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Kind, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { AnyMethod } from '../src/api/method.js';
import { errorCodesOf } from '../src/api/openapi.js';

/**
 * Which answers the suite has produced, to show that the response check (response-check.ts)
 * saw every method's answers: with RESPONSE_COVERAGE_DIR set, every checked /api answer is
 * noted there (its method, its code and, for success, which alternative of every union in
 * the result it took: legacy or not, short or full form, each message type...). Then
 *
 *   RESPONSE_COVERAGE_DIR=/tmp/answers npm test
 *   npx tsx test/response-coverage.ts /tmp/answers
 *
 * lists the methods, codes and alternatives no test produced.
 */

const DIR = process.env.RESPONSE_COVERAGE_DIR;

interface Noted {
  method: string;
  code: number;
  alternatives: string[];
}

function labelOf(alternative: TSchema, index: number): string {
  return (alternative.title as string | undefined) ?? (alternative.$id as string | undefined) ?? `#${index}`;
}

/** A union of shapes (objects), not of values such as 0 | 1 or an enum. */
const isShapeUnion = (schema: TSchema) => schema[Kind] === 'Union' && (schema.anyOf as TSchema[]).some((s) => s[Kind] === 'Object');

/** Every alternative of every union of shapes in a schema, as `path|label`. */
export function alternativesOf(schema: TSchema, path = '', out: string[] = []): string[] {
  if (isShapeUnion(schema)) {
    (schema.anyOf as TSchema[]).forEach((alternative, i) => {
      out.push(`${path}|${labelOf(alternative, i)}`);
      alternativesOf(alternative, path, out);
    });
  } else if (schema[Kind] === 'Object') {
    for (const [name, property] of Object.entries(schema.properties as Record<string, TSchema>))
      alternativesOf(property, `${path}.${name}`, out);
  } else if (schema[Kind] === 'Array') alternativesOf(schema.items as TSchema, `${path}[]`, out);
  else if (schema[Kind] === 'Record')
    for (const inner of Object.values(schema.patternProperties as Record<string, TSchema>)) alternativesOf(inner, `${path}{}`, out);
  return out;
}

/** The alternatives of unions of shapes a value takes, as `path|label` (the first alternative that matches). */
export function alternativesTaken(schema: TSchema, value: unknown, path = '', out = new Set<string>()): Set<string> {
  if (isShapeUnion(schema)) {
    const alternatives = schema.anyOf as TSchema[];
    const index = alternatives.findIndex((alternative) => Value.Check(alternative, value));
    if (index >= 0) {
      out.add(`${path}|${labelOf(alternatives[index], index)}`);
      alternativesTaken(alternatives[index], value, path, out);
    }
  } else if (schema[Kind] === 'Object' && value !== null && typeof value === 'object') {
    for (const [name, property] of Object.entries(schema.properties as Record<string, TSchema>)) {
      const inner = (value as Record<string, unknown>)[name];
      if (inner !== undefined) alternativesTaken(property, inner, `${path}.${name}`, out);
    }
  } else if (schema[Kind] === 'Array' && Array.isArray(value)) {
    for (const element of value) alternativesTaken(schema.items as TSchema, element, `${path}[]`, out);
  } else if (schema[Kind] === 'Record' && value !== null && typeof value === 'object') {
    const [inner] = Object.values(schema.patternProperties as Record<string, TSchema>);
    for (const element of Object.values(value)) alternativesTaken(inner, element, `${path}{}`, out);
  }
  return out;
}

/**
 * Notes one checked answer (only when RESPONSE_COVERAGE_DIR is set). With RESPONSE_BODIES=1
 * too, each answer is also written whole with its parameters (`bodies-<pid>.jsonl`), for
 * checking the suite's answers with other tools, such as a client's own validation.
 */
export function noteAnswer(method: AnyMethod, body: { code: number; data?: unknown }, params: Record<string, unknown> = {}): void {
  if (!DIR) return;
  if (process.env.RESPONSE_BODIES === '1')
    appendFileSync(join(DIR, `bodies-${process.pid}.jsonl`), `${JSON.stringify({ method: method.name, params, body })}\n`);
  const alternatives = body.code === 0 && method.result ? [...alternativesTaken(method.result, body.data)] : [];
  const noted: Noted = { method: method.name, code: body.code, alternatives };
  appendFileSync(join(DIR, `answers-${process.pid}.jsonl`), `${JSON.stringify(noted)}\n`);
}

/** What no answer in the directory showed: per method, success, declared codes and union alternatives. */
export function missingAnswers(methods: AnyMethod[], dir: string): string[] {
  const seen = new Map<string, { codes: Set<number>; alternatives: Set<string> }>();
  for (const file of readdirSync(dir).filter((f) => f.startsWith('answers-') && f.endsWith('.jsonl')))
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      if (!line) continue;
      const noted = JSON.parse(line) as Noted;
      const entry = seen.get(noted.method) ?? { codes: new Set(), alternatives: new Set() };
      entry.codes.add(noted.code);
      noted.alternatives.forEach((a) => entry.alternatives.add(a));
      seen.set(noted.method, entry);
    }
  const missing: string[] = [];
  for (const method of methods) {
    const entry = seen.get(method.name);
    if (!entry) {
      missing.push(`${method.name}: no answer at all`);
      continue;
    }
    const codes = [0, ...Object.keys(errorCodesOf(method)).map(Number)].filter((c) => !entry.codes.has(c));
    if (codes.length > 0) missing.push(`${method.name}: no answer with code ${codes.join(', ')}`);
    const alternatives = method.result ? alternativesOf(method.result).filter((a) => !entry.alternatives.has(a)) : [];
    if (alternatives.length > 0) missing.push(`${method.name}: no success answer with ${alternatives.join(', ')}`);
  }
  return missing;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: npx tsx test/response-coverage.ts DIR');
  const { allMethods } = await import('../src/domains.js');
  const missing = missingAnswers(allMethods(), dir);
  console.log(missing.length === 0 ? 'every method, code and alternative was answered' : missing.join('\n'));
}
