import { Readable } from 'node:stream';
import { CloneType, Kind, Type, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { ValueError } from '@sinclair/typebox/errors';
import type { FastifyInstance } from 'fastify';
import type { AnyMethod } from '../src/api/method.js';
import { anyErrorSchema, errorCodesOf, errorEnvelopeSchemas, successEnvelopeSchema } from '../src/api/openapi.js';
import { httpStatusFor } from '../src/api/errors.js';
import { noteAnswer } from './response-coverage.js';
import { sdkRuleProblems } from './sdk-rules/index.js';

/**
 * Checks /api answers against the published schemas (src/api/openapi.ts): success `data`
 * against the method's `result`, errors against its error envelopes. Objects are checked
 * strictly: a field the schema does not name is a failure, even where a schema forgot to
 * say `additionalProperties: false`. Each answer is also held to the reference client's
 * rules for its method and parameters (test/sdk-rules/).
 */

/** Makes every plain object schema reject unknown fields (intersections are left alone). */
function strict(schema: TSchema): TSchema {
  const copy = CloneType(schema);
  const visit = (node: any): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== 'object') return;
    if (node[Kind] === 'Intersect' || Array.isArray(node.allOf)) return;
    if (node[Kind] === 'Object' && node.additionalProperties === undefined && node.patternProperties === undefined)
      node.additionalProperties = false;
    for (const value of Object.values(node)) visit(value);
  };
  visit(copy);
  return copy;
}

interface Checkers {
  success: TypeCheck<TSchema>;
  error: TypeCheck<TSchema>;
}

// Compiled once per method per process, however many servers the tests start.
const compiled = new WeakMap<AnyMethod, Checkers>();
let anyError: TypeCheck<TSchema> | undefined;

function checkersOf(method: AnyMethod): Checkers {
  let checkers = compiled.get(method);
  if (!checkers) {
    const codes = Object.keys(errorCodesOf(method)).map(Number);
    checkers = {
      success: TypeCompiler.Compile(strict(successEnvelopeSchema(method))),
      error: TypeCompiler.Compile(strict(Type.Union(errorEnvelopeSchemas(codes)))),
    };
    compiled.set(method, checkers);
  }
  return checkers;
}

/**
 * Where a value breaks a schema. A union reports only that no alternative matched; the
 * alternative that comes closest (fewest errors) says what is actually wrong.
 */
function explain(errors: Iterable<ValueError>): string[] {
  const out: string[] = [];
  for (const error of errors) {
    const alternatives = (error.errors ?? []).map((iterator) => [...iterator]).filter((list) => list.length > 0);
    if (alternatives.length === 0) out.push(`${error.path || '/'}: ${error.message}`);
    else out.push(...explain(alternatives.reduce((best, list) => (list.length < best.length ? list : best))));
  }
  return out;
}

/** Problems with one answer (empty when it matches the schema and the reference client's rules). */
export function responseProblems(method: AnyMethod | undefined, status: number, body: unknown, params?: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const code = (body as { code?: unknown } | null)?.code;
  if (typeof code !== 'number') return [`the body has no numeric code: ${JSON.stringify(body)?.slice(0, 300)}`];
  const expectedStatus = httpStatusFor(code);
  if (status !== expectedStatus && !(code === 2 && status === 413))
    problems.push(`code ${code} came with HTTP status ${status}, expected ${expectedStatus}`);

  if (method && code === 0 && !method.result && (body as { data?: unknown }).data !== undefined) {
    problems.push(`${method.name} answers data but declares no result schema`);
    return problems;
  }

  if (method && code !== 0 && !(code in errorCodesOf(method)))
    problems.push(
      `${method.name} answered code ${code}, which it does not declare (it declares ${Object.keys(errorCodesOf(method)).join(', ')})`,
    );
  const check = !method
    ? (anyError ??= TypeCompiler.Compile(strict(anyErrorSchema())))
    : code === 0
      ? checkersOf(method).success
      : checkersOf(method).error;
  if (!check.Check(body)) {
    const errors = explain(check.Errors(body)).slice(0, 5);
    const what = method ? method.name : 'an answer naming no method';
    problems.push(
      `${what} answered a body its published schema does not allow (${errors.join('; ')}): ${JSON.stringify(body).slice(0, 500)}`,
    );
  }
  // The reference client's rules depend on the parameters: without them, only the published schema is checked.
  if (method && params) problems.push(...sdkRuleProblems(method.name, params, body));
  return problems;
}

/** A request's parameters as the transport merges them: the query string, then the body's fields. */
function paramsOf(request: { query?: unknown; body?: unknown }): Record<string, unknown> {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const body = request.body;
  return body !== null && typeof body === 'object' && !Array.isArray(body)
    ? { ...query, ...(body as Record<string, unknown>) }
    : { ...query };
}

export interface ResponseWatch {
  /** Problems found in the answer to this request; they count as reported. */
  take(requestId: string): string[];
  /** Problems found in answers nobody took (requests made over real HTTP). */
  unreported(): string[];
}

/** Checks every /api answer the server sends, whoever made the request. */
export function watchResponses(app: FastifyInstance, methods: AnyMethod[]): ResponseWatch {
  const byName = new Map(methods.map((m) => [m.name, m]));
  const found = new Map<string, string[]>();
  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.url.startsWith('/api/')) return payload;
    // A CORS preflight's answer (with an allow-list configured) is headers alone, not an API answer.
    if (request.method === 'OPTIONS' && reply.statusCode === 204 && reply.getHeader('access-control-allow-methods')) return payload;
    // A streamed answer (a large inventory) is read whole here to be checked, then streamed on.
    let text: string | undefined;
    if (payload instanceof Readable) {
      const chunks: Buffer[] = [];
      for await (const chunk of payload) chunks.push(Buffer.from(chunk));
      const whole = Buffer.concat(chunks);
      text = whole.toString('utf8');
      payload = Readable.from([whole], { objectMode: false });
    } else text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
    let problems: string[];
    if (text === undefined) problems = ['the answer is not a JSON text'];
    else {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const name = (request.params as { method?: string } | undefined)?.method;
      const method = name === undefined ? undefined : byName.get(name);
      problems = responseProblems(method, reply.statusCode, body, paramsOf(request));
      if (method && problems.length === 0) noteAnswer(method, body as { code: number }, paramsOf(request));
    }
    if (problems.length > 0)
      found.set(
        String(request.id),
        problems.map((p) => `${request.method} ${request.url.split('?')[0]}: ${p}`),
      );
    return payload;
  });
  return {
    take(requestId) {
      const problems = found.get(requestId) ?? [];
      found.delete(requestId);
      return problems;
    },
    unreported() {
      const all = [...found.values()].flat();
      found.clear();
      return all;
    },
  };
}
