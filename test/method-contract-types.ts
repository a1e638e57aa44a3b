/**
 * Compile-time checks of the method contract, run by `npm run typecheck`: every
 * `@ts-expect-error` below must meet an error, so a contract that stopped checking handlers'
 * parameters or answers fails the typecheck.
 */
import { Type } from '@sinclair/typebox';
import { SerializedData, SerializedList, StreamedData, defineMethod } from '../src/api/method.js';
import { P } from '../src/api/params.js';

const Result = Type.Object({ count: Type.Integer(), names: Type.Array(Type.String()) });
const declared = { summary: 'a method of the compile-time checks', params: P.object({ n: P.uint(), tag: P.optional(P.string()) }) };

export const acceptedAnswers = [
  defineMethod({
    ...declared,
    name: 'check.value',
    auth: 'none',
    result: Result,
    handler: async (_ctx, params) => ({ count: params.n, names: params.tag === undefined ? [] : [params.tag] }),
  }),
  defineMethod({ ...declared, name: 'check.serializedData', auth: 'none', result: Result, handler: async () => new SerializedData('{}') }),
  defineMethod({ ...declared, name: 'check.serializedList', auth: 'none', result: Result, handler: async () => new SerializedList([]) }),
  defineMethod({ ...declared, name: 'check.streamed', auth: 'none', result: Result, handler: async () => new StreamedData(() => []) }),
  defineMethod({
    ...declared,
    name: 'check.signedIn',
    auth: 'required',
    result: Result,
    handler: async (ctx) => ({ count: ctx.caller.userId, names: [] }),
  }),
  defineMethod({ ...declared, name: 'check.nothing', auth: 'none', handler: async () => {} }),
  defineMethod({ ...declared, name: 'check.undefined', auth: 'admin', handler: async () => undefined }),
];

export const refusedAnswers = [
  defineMethod({
    ...declared,
    name: 'check.wrongType',
    auth: 'none',
    result: Result,
    // @ts-expect-error: count is a number
    handler: async () => ({ count: 'one', names: [] }),
  }),
  defineMethod({
    ...declared,
    name: 'check.missingField',
    auth: 'none',
    result: Result,
    // @ts-expect-error: names is required
    handler: async () => ({ count: 1 }),
  }),
  defineMethod({
    ...declared,
    name: 'check.lookalike',
    auth: 'none',
    result: Result,
    // @ts-expect-error: only an instance of SerializedData is ready-made JSON, not an object of its shape
    handler: async () => ({ json: '{}' }),
  }),
  defineMethod({
    ...declared,
    name: 'check.lookalikeList',
    auth: 'none',
    result: Result,
    // @ts-expect-error: only an instance of SerializedList is ready-made JSON
    handler: async () => ({ elements: [], open: '[', close: ']' }),
  }),
  defineMethod({
    ...declared,
    name: 'check.answerWithoutSchema',
    auth: 'none',
    // @ts-expect-error: a method without a result schema answers nothing
    handler: async () => ({ count: 1, names: [] }),
  }),
  defineMethod({
    ...declared,
    name: 'check.readyWithoutSchema',
    auth: 'none',
    // @ts-expect-error: not even ready-made JSON
    handler: async () => new SerializedData('{}'),
  }),
  defineMethod({
    ...declared,
    name: 'check.optionalCaller',
    auth: 'optional',
    result: Result,
    // @ts-expect-error: with auth optional the caller may be absent
    handler: async (ctx) => ({ count: ctx.caller.userId, names: [] }),
  }),
  defineMethod({
    ...declared,
    name: 'check.undeclaredParam',
    auth: 'none',
    result: Result,
    // @ts-expect-error: the parameter schema has no `m`
    handler: async (_ctx, params) => ({ count: params.m, names: [] }),
  }),
  defineMethod({
    ...declared,
    name: 'check.optionalParam',
    auth: 'none',
    result: Result,
    // @ts-expect-error: tag is optional, so it may be undefined
    handler: async (_ctx, params) => ({ count: params.n, names: [params.tag] }),
  }),
];
