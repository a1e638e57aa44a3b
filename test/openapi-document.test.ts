import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kind, Type, type TSchema } from '@sinclair/typebox';
import { validate } from '@scalar/openapi-parser';
import { startTestServer } from './helpers.js';
import { allMethods } from '../src/domains.js';
import { defineMethod, type AnyMethod } from '../src/api/method.js';
import { P } from '../src/api/params.js';
import { Strict, Uint } from '../src/api/schema-types.js';
import { buildOpenApiDocument, GLOBAL_ERRORS } from '../src/api/openapi.js';
import { responseProblems } from './response-check.js';

/** A response of an operation, with a `$ref` to the components followed. */
function responseOf(document: any, operation: any, status: string): any {
  const response = operation.responses[status];
  return response.$ref ? document.components.responses[response.$ref.split('/').pop()] : response;
}

async function servedDocument(): Promise<any> {
  const server = await startTestServer();
  try {
    const response = await server.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    return response.json();
  } finally {
    await server.close();
  }
}

test('/openapi.json is a valid OpenAPI 3.1 document', async () => {
  const document = await servedDocument();
  assert.equal(document.openapi, '3.1.0');
  const result = await validate(document);
  assert.deepEqual(result.errors ?? [], [], JSON.stringify(result.errors?.slice(0, 5)));
  assert.equal(result.valid, true);
});

test('every method is described with both forms, its auth, bot rule, parameters and errors', async () => {
  const document = await servedDocument();
  const methods = allMethods();
  assert.equal(Object.keys(document.paths).length, methods.length);
  for (const method of methods) {
    const item = document.paths[`/api/${method.name}`];
    assert.ok(item, `${method.name} is missing`);
    assert.deepEqual(Object.keys(item).sort(), ['get', 'post']);
    const { get, post } = item;
    assert.equal(get.operationId, method.name);
    assert.equal(post.operationId, `${method.name}.post`);
    assert.ok(get.description.includes(method.summary), `${method.name}: summary`);
    if (method.description) assert.ok(get.description.includes(method.description), `${method.name}: description`);
    assert.equal(get['x-auth'], method.auth);
    assert.equal(get['x-extension'], method.extension === true);
    const botsMayCall = method.auth === 'none' || method.auth === 'optional' || (method.auth === 'required' && method.bots === true);
    assert.equal(get['x-bots'], botsMayCall, `${method.name}: bot allow-list`);
    if (method.auth === 'admin') assert.deepEqual(get.security, [{ adminKey: [] }]);
    if (method.auth === 'none') assert.deepEqual(get.security, []);
    if (method.auth === 'required') assert.ok(!get.security.some((s: object) => Object.keys(s).length === 0));
    if (method.auth === 'optional') assert.ok(get.security.some((s: object) => Object.keys(s).length === 0));

    const names = Object.keys(method.params.properties);
    assert.deepEqual(get.parameters.map((p: any) => p.name), names, `${method.name}: query parameters`);
    for (const parameter of get.parameters) {
      assert.equal(parameter.in, 'query');
      const declared = method.params.properties[parameter.name] as TSchema;
      assert.equal(parameter.schema['x-param'], declared['x-param']);
      if (declared.default !== undefined) assert.deepEqual(parameter.schema.default, declared.default);
      if (declared.description) assert.ok(parameter.description.includes(declared.description));
    }
    if (names.length > 0) {
      const body = post.requestBody.content['application/json'].schema;
      assert.deepEqual(Object.keys(body.properties), names);
      assert.deepEqual(post.requestBody.content['application/x-www-form-urlencoded'].schema, body);
      assert.deepEqual(body.required, get.parameters.filter((p: any) => p.required).map((p: any) => p.name));
    }

    const codes = get['x-error-codes'] as Record<string, string>;
    for (const [code, meaning] of Object.entries(method.errors ?? {})) {
      assert.equal(codes[code], meaning, `${method.name}: error ${code}`);
      assert.ok(get.description.includes(`| ${code} |`), `${method.name}: error ${code} in the description`);
    }
    for (const code of [2, 3, 7]) assert.ok(codes[code], `${method.name}: global error ${code}`);
    if (method.auth !== 'none') assert.ok(codes[1], `${method.name}: error 1`);
    else assert.equal(codes[1], method.errors?.[1], `${method.name}: error 1 only when it declares it`);

    const success = responseOf(document, get, '200').content['application/json'].schema.anyOf[0];
    assert.deepEqual(success.required, method.result ? ['code', 'data'] : ['code']);
    assert.equal(success.additionalProperties, false);
    assert.deepEqual(post.responses, get.responses);
    assert.deepEqual(responseOf(document, get, '429').content['application/json'].schema.properties.code, { const: 7, type: 'number' });
    assert.deepEqual(responseOf(document, get, '500').content['application/json'].schema.properties.code, { const: 3, type: 'number' });
  }
});

/** Objects in a result schema that let unknown fields through without saying so. */
function looseObjects(schema: unknown, path: string, out: string[] = []): string[] {
  if (Array.isArray(schema)) schema.forEach((s, i) => looseObjects(s, `${path}[${i}]`, out));
  else if (schema !== null && typeof schema === 'object') {
    const node = schema as Record<string | symbol, unknown>;
    if (node[Kind] === 'Object' && node.additionalProperties === undefined && node.patternProperties === undefined) out.push(path);
    for (const [key, value] of Object.entries(node)) looseObjects(value, `${path}.${key}`, out);
  }
  return out;
}

test('every result schema is strict: objects forbid fields they do not name', () => {
  const loose = allMethods().flatMap((m) => (m.result ? looseObjects(m.result, m.name) : []));
  assert.deepEqual(loose, []);
});

const sample = defineMethod({
  name: 'sample.read',
  summary: 'Reads samples',
  description: 'Used to check how declarations become the document.',
  auth: 'required',
  bots: true,
  params: P.object({
    user_id: P.optional(P.idOrDomain({ description: 'whose samples' })),
    ids: P.uintSet({ tooMany: 50, description: 'sample ids' }),
    names: P.optional(P.idOrDomainSet()),
    count: P.uint({ default: 20, tooMany: 50 }),
    verbose: P.bit({ default: 0 }),
    ratio: P.optional(P.double({ minimum: 0, maximum: 1 })),
    order: P.enum(['time', 'quality'], { default: 'time' }),
    text: P.string({ minLength: 2, maxLength: 30 }),
  }),
  result: Type.Object({ count: Uint, things: Type.Array(Type.Object({ id: Uint }, { ...Strict, $id: 'SampleThing' })) }, Strict),
  errors: { 101: 'user does not exist', 1203: 'chat restriction' },
  extension: true,
  handler: async () => ({ count: 0, things: [] }),
});

test('parameters carry their wire format, type, default, limits and description', () => {
  const document: any = buildOpenApiDocument([sample], { version: '1.2.3' });
  assert.equal(document.info.version, '1.2.3');
  const get = document.paths['/api/sample.read'].get;
  const byName = Object.fromEntries(get.parameters.map((p: any) => [p.name, p]));
  assert.deepEqual(byName.user_id.schema.anyOf.map((s: any) => s.type), ['integer', 'string']);
  assert.equal(byName.user_id.required, false);
  assert.match(byName.user_id.description, /whose samples/);
  assert.equal(byName.ids.required, true);
  assert.equal(byName.ids.schema.type, 'string');
  assert.equal(byName.ids.schema['x-item'], 'uint');
  assert.equal(byName.ids.schema['x-too-many'], 50);
  assert.match(byName.ids.description, /Comma-separated ids.*At most 50 elements; more answers code 6/);
  assert.match('4,5, 6', new RegExp(byName.ids.schema.pattern));
  assert.equal(byName.names.schema['x-item'], 'idOrDomain');
  assert.deepEqual(
    { type: byName.count.schema.type, minimum: byName.count.schema.minimum, maximum: byName.count.schema.maximum, default: byName.count.schema.default },
    { type: 'integer', minimum: 0, maximum: 50, default: 20 },
  );
  assert.equal(byName.count.required, false, 'a parameter with a default need not be sent');
  assert.deepEqual(byName.verbose.schema.enum, [0, 1]);
  assert.equal(byName.verbose.schema['x-param'], 'bit');
  assert.deepEqual([byName.ratio.schema.type, byName.ratio.schema.minimum, byName.ratio.schema.maximum], ['number', 0, 1]);
  assert.deepEqual([byName.order.schema.enum, byName.order.schema.default], [['time', 'quality'], 'time']);
  assert.deepEqual([byName.text.schema.minLength, byName.text.schema.maxLength, byName.text.required], [2, 30, true]);

  assert.deepEqual(get['x-error-codes'], {
    1: 'access token missing, unknown, expired, revoked, or used from another IP',
    2: GLOBAL_ERRORS[2],
    3: GLOBAL_ERRORS[3],
    6: 'too many objects requested (ids above 50, count above 50)',
    7: GLOBAL_ERRORS[7],
    101: 'user does not exist',
    1203: 'chat restriction',
  });
  assert.equal(get['x-bots'], true);
  assert.equal(get['x-extension'], true);
  assert.deepEqual(document.components.schemas.SampleThing, {
    type: 'object',
    additionalProperties: false,
    properties: { id: { type: 'integer', minimum: 0 } },
    required: ['id'],
  });
  const ok = responseOf(document, get, '200').content['application/json'].schema.anyOf;
  assert.deepEqual(ok[0].properties.data.properties.things.items, { $ref: '#/components/schemas/SampleThing' });
  const restricted = ok.find((s: any) => s.properties.code.const === 1203);
  assert.deepEqual(restricted.properties.data.properties.type.anyOf.map((s: any) => s.const), ['DISABLED', 'STRICT', 'EMOTES_ONLY', 'BOT_LIMITATIONS']);
});

test('a bot-forbidden method lists code 4; two schemas under one name are refused', () => {
  const forbidden = { ...sample, bots: false } as AnyMethod;
  const document: any = buildOpenApiDocument([forbidden]);
  assert.equal(document.paths['/api/sample.read'].get['x-error-codes'][4], 'bots may not call this method');
  assert.equal(document.paths['/api/sample.read'].get['x-bots'], false);
  const clash = { ...sample, name: 'sample.other', result: Type.Object({ id: Type.String() }, { ...Strict, $id: 'SampleThing' }) } as AnyMethod;
  assert.throws(() => buildOpenApiDocument([sample, clash]), /two different schemas are named SampleThing/);
});

test('the response check rejects answers the published schema does not allow', () => {
  assert.deepEqual(responseProblems(sample, 200, { code: 0, data: { count: 1, things: [{ id: 4 }] } }), []);
  assert.deepEqual(responseProblems(sample, 200, { code: 101, description: 'user does not exist' }), []);
  assert.deepEqual(responseProblems(sample, 429, { code: 7, description: 'slow down', data: { retry_after: 3 } }), []);

  const extra = responseProblems(sample, 200, { code: 0, data: { count: 1, things: [{ id: 4, secret: 'x' }] } });
  assert.match(extra.join(), /does not allow.*things\/0/);
  assert.notDeepEqual(responseProblems(sample, 200, { code: 0, data: { count: -1, things: [] } }), []);
  assert.notDeepEqual(responseProblems(sample, 200, { code: 0 }), [], 'data is required');
  assert.match(responseProblems(sample, 200, { code: 412, description: 'banned' }).join(), /code 412, which it does not declare/);
  assert.notDeepEqual(responseProblems(sample, 200, { code: 101, description: 'x', data: { extra: 1 } }), []);
  assert.match(responseProblems(sample, 200, { code: 7, description: 'x', data: { retry_after: 1 } }).join(), /HTTP status 200, expected 429/);
  assert.notDeepEqual(responseProblems(sample, 200, { code: 1203, description: 'x', data: { type: 'LOUD' } }), []);

  // A schema that forgot additionalProperties: false is still checked strictly.
  const loose = { ...sample, result: Type.Object({ count: Uint }) } as AnyMethod;
  assert.notDeepEqual(responseProblems(loose, 200, { code: 0, data: { count: 1, more: 2 } }), []);
  const codeOnly = { ...sample, result: undefined } as AnyMethod;
  assert.deepEqual(responseProblems(codeOnly, 200, { code: 0 }), []);
  assert.deepEqual(responseProblems(undefined, 200, { code: 5, description: 'unknown method' }), []);
  assert.notDeepEqual(responseProblems(undefined, 200, { code: 5 }), []);
});

test('a method that answers data must declare its result', () => {
  const undeclared = { ...sample, result: undefined } as AnyMethod;
  assert.match(responseProblems(undeclared, 200, { code: 0, data: { count: 1 } }).join(), /answers data but declares no result schema/);
});
