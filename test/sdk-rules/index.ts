import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { ValueError } from '@sinclair/typebox/errors';
import { Type } from '@sinclair/typebox';
import { Num, Str, obj, opt, type Params, type SdkRules } from './shapes.js';
import { authRules } from './auth.js';
import { dataRules } from './data.js';
import { friendRules } from './friends.js';
import { gchatRules } from './gchat.js';
import { imRules } from './im.js';
import { inventoryRules } from './inventory.js';
import { privacyRules } from './privacy.js';
import { tradeRules } from './trades.js';
import { userRules } from './users.js';

/**
 * The reference client's rules for answers, by method: what its official SDK would refuse.
 * Rules for methods this server does not have yet wait for them. Add a domain's rules in a
 * file of its own and list them here.
 */
export const sdkRules: SdkRules = {
  ...authRules,
  ...dataRules,
  ...friendRules,
  ...gchatRules,
  ...imRules,
  ...inventoryRules,
  ...privacyRules,
  ...tradeRules,
  ...userRules,
};

/** Every error answer: a numeric code, a description, and `data` (if any) an object. */
const ErrorAnswer = obj({ code: Num, description: Str, data: opt(Type.Record(Str, Type.Unknown())) });

const compiled = new Map<TSchema, TypeCheck<TSchema>>();
function checkerOf(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

/** Where a value breaks a schema; for a union, the alternative that comes closest says what is wrong. */
function explain(errors: Iterable<ValueError>): string[] {
  const out: string[] = [];
  for (const error of errors) {
    const alternatives = (error.errors ?? []).map((iterator) => [...iterator]).filter((list) => list.length > 0);
    if (alternatives.length === 0) out.push(`${error.path || '/'}: ${error.message}`);
    else out.push(...explain(alternatives.reduce((best, list) => (list.length < best.length ? list : best))));
  }
  return out;
}

function mismatch(method: string, schema: TSchema, value: unknown, where: string): string[] {
  const check = checkerOf(schema);
  if (check.Check(value)) return [];
  const errors = explain(check.Errors(value)).slice(0, 5);
  return [
    `${method}: the reference client would refuse this answer (in ${where}: ${errors.join('; ')}): ${JSON.stringify(value).slice(0, 500)}`,
  ];
}

/** What the reference client would refuse in one answer to `method` called with `params` (empty when nothing). */
export function sdkRuleProblems(method: string, params: Params, body: unknown): string[] {
  const answer = body as { code?: unknown; data?: unknown } | null;
  if (answer === null || typeof answer !== 'object' || typeof answer.code !== 'number') return [];
  if (answer.code !== 0) return mismatch(method, ErrorAnswer, answer, 'the error envelope');
  const rule = sdkRules[method];
  if (!rule) return [];
  const expected = rule(params);
  const hasData = 'data' in answer;
  if (expected === 'void')
    return hasData
      ? [
          `${method}: the reference client would refuse this answer (a method without a result answers no data key): ${JSON.stringify(answer).slice(0, 300)}`,
        ]
      : [];
  if ('voidOr' in expected) return hasData ? mismatch(method, expected.voidOr, answer.data, 'data') : [];
  if (!hasData) return [`${method}: the reference client would refuse this answer (data is missing)`];
  return mismatch(method, expected, answer.data, 'data');
}
