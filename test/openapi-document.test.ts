import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kind, Type, type TSchema } from '@sinclair/typebox';
import { validate } from '@scalar/openapi-parser';
import { startTestServer } from './helpers.js';
import { allMethods } from '../src/domains.js';
import { defineMethod, type AnyMethod } from '../src/api/method.js';
import { P } from '../src/api/params.js';
import { Strict, Uint } from '../src/api/schema-types.js';
import { buildOpenApiDocument, ERROR_DATA, GLOBAL_ERRORS } from '../src/api/openapi.js';
import { SCOPE_BITS } from '../src/api/oauth-scopes.js';
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

/** The methods the server must have, by where they come from (README "Methods"). */
const SPEC_METHODS = [
  'auth.signin',
  'auth.totpVerify',
  'bots.getToken',
  'users.get',
  'friends.add',
  'friends.delete',
  'friends.get',
  'inventory.get',
  'inventory.craft',
  'data.getItemProtos',
  'data.searchItemProtos',
  'gchat.get',
];
const REFERENCE_METHODS = [
  'games.resolve',
  'auth.refresh',
  'friends.getRequests',
  'gchat.send',
  'im.send',
  'im.dialogsGet',
  'im.historyGet',
  'im.sync',
  'wallet.promocodeActivate',
  'auth.signup',
  'account.info',
  'account.updateInfo',
  'account.updatePassword',
  'account.updateEmail',
  'privacy.get',
  'privacy.update',
  'blacklist.get',
  'blacklist.add',
  'blacklist.remove',
  'bots.create',
  'users.search',
  'trades.create',
  'trades.accept',
  'trades.decline',
  'trades.revoke',
  'trades.cancel',
  'trades.getIncome',
  'trades.getOutbound',
  'trades.history',
  'trades.historyWith',
  'trades.getById',
  'execute.prepareTrade',
  'oauth.exchangeCode',
  'execute.wallet',
  'wallet.getHistory',
  'market.sell',
  'market.buy',
  'market.getListing',
  'market.search',
  'market.getLastSellups',
  'rooms.create',
  'rooms.join',
  'rooms.leave',
  'rooms.delete',
  'rooms.invite',
  'rooms.kick',
  'rooms.settingsChange',
  'rooms.startGame',
  'rooms.get',
  'games.getLive',
  'missions.get',
  'seasonpass.get',
  'users.getTopWeek',
  'execute.games',
  'execute.profile',
];
const OUR_METHODS = [
  'inventory.open',
  'inventory.equip',
  'inventory.unequip',
  'im.delete',
  'auth.signout',
  'account.setPrivacy',
  'account.getPrivacy',
  'blacklist.delete',
  'account.verifyEmail',
  'auth.requestPasswordReset',
  'auth.resetPassword',
  'account.totpSetup',
  'account.totpEnable',
  'account.totpDisable',
  'account.sessionsGet',
  'account.sessionsRevoke',
  'account.appsGet',
  'account.appsRevoke',
  'market.cancel',
  'market.getMy',
  'market.quickSell',
  'shop.buy',
  'games.createVsComputer',
  'game.action',
  'games.getReplay',
  'games.my',
];
const ADMIN_METHODS = [
  'admin.getUser',
  'admin.searchUsers',
  'admin.getChatStatus',
  'admin.createUser',
  'admin.updateUser',
  'admin.setTotp',
  'admin.clearTotp',
  'admin.banUser',
  'admin.unbanUser',
  'admin.muteUser',
  'admin.setPrivacy',
  'admin.killSessions',
  'admin.createBot',
  'admin.upsertItemProto',
  'admin.upsertCollection',
  'admin.grantItems',
  'admin.imDelete',
  'admin.imHistory',
  'admin.revokeItem',
  'admin.makeFriends',
  'admin.endFriendship',
  'admin.addFriendRequest',
  'admin.block',
  'admin.unblock',
  'admin.setChatStatus',
  'admin.deleteMessage',
  'admin.postSystemMessage',
  'admin.listDraws',
  'admin.exportDraws',
  'admin.createPromocode',
  'admin.listPromocodes',
  'admin.disablePromocode',
  'admin.importWorld',
  'admin.exportWorld',
  'admin.auditLog',
  'admin.listTrades',
  'admin.getTrade',
  'admin.cancelTrade',
  'admin.createApp',
  'admin.updateApp',
  'admin.listApps',
  'admin.disableApp',
  'admin.grantMoney',
  'admin.revokeMoney',
  'admin.listListings',
  'admin.cancelListing',
  'admin.freezeMarket',
  'admin.missionCreate',
  'admin.missionUpdate',
  'admin.missionDelete',
  'admin.missionList',
];
/** Methods that need a token and that a bot's token may call; every other such method answers a bot 4. */
const BOT_ALLOWED = [
  'friends.add',
  'friends.delete',
  'friends.getRequests',
  'inventory.craft',
  'gchat.send',
  'im.send',
  'im.dialogsGet',
  'im.historyGet',
  'im.sync',
  'im.delete',
  'trades.accept',
  'trades.cancel',
  'trades.create',
  'trades.decline',
  'trades.getIncome',
  'trades.getOutbound',
  'trades.history',
  'games.createVsComputer',
  'game.action',
  'games.getReplay',
  'games.my',
  'rooms.create',
  'rooms.join',
  'rooms.leave',
  'rooms.delete',
  'rooms.invite',
  'rooms.kick',
  'rooms.settingsChange',
  'rooms.startGame',
];

test("the document has every method: the spec's, the reference service's, ours and the admin API", async () => {
  const document = await servedDocument();
  const all = [...SPEC_METHODS, ...REFERENCE_METHODS, ...OUR_METHODS, ...ADMIN_METHODS];
  assert.deepEqual(Object.keys(document.paths).sort(), all.map((name) => `/api/${name}`).sort());
  for (const name of [...SPEC_METHODS, ...REFERENCE_METHODS]) assert.equal(document.paths[`/api/${name}`].get['x-extension'], false, name);
  for (const name of [...OUR_METHODS, ...ADMIN_METHODS]) {
    const get = document.paths[`/api/${name}`].get;
    assert.equal(get['x-extension'], true, name);
    assert.match(get.description, /An extension of this server/, name);
  }
  for (const name of ADMIN_METHODS) assert.equal(document.paths[`/api/${name}`].get['x-auth'], 'admin', name);
  for (const name of all) {
    const get = document.paths[`/api/${name}`].get;
    const expected = get['x-auth'] === 'none' || get['x-auth'] === 'optional' || BOT_ALLOWED.includes(name);
    assert.equal(get['x-bots'], expected, `${name}: bot allow-list`);
  }
  const allowList = [...BOT_ALLOWED]
    .sort()
    .map((name) => `\`${name}\``)
    .join(', ');
  assert.ok(
    document.info.description.includes(`of the methods that require a token only ${allowList}; any other method answers a bot code 4`),
  );
  assert.ok(
    document.info.description.includes(
      'or optional without a scope, and the methods its scopes open: `offline` (1) brings a refresh token and opens no method; ' +
        '`games` (2) opens `games.getReplay`, `games.my`; `stat` (8) opens `missions.get`, `seasonpass.get`, `users.getTopWeek`. Any other method answers it code 4.',
    ),
  );
  for (const name of ['games.getReplay', 'games.my']) assert.equal(document.paths[`/api/${name}`].get['x-oauth-scope'], 'games');
});

/** A copy of a schema with every `$ref` into the document's components replaced by what it names. */
function inline(document: any, node: unknown): any {
  if (Array.isArray(node)) return node.map((n) => inline(document, n));
  if (node === null || typeof node !== 'object') return node;
  const { $ref, ...rest } = node as Record<string, unknown>;
  if (typeof $ref === 'string') {
    assert.equal(Object.keys(rest).length, 0, `a $ref with siblings: ${$ref}`);
    const [, , kind, name] = $ref.split('/');
    return inline(document, document.components[kind][name]);
  }
  return Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, inline(document, value)]));
}

/** A TypeBox schema as plain JSON Schema, without the `$id` names the document turns into components. */
function plain(schema: unknown): any {
  return JSON.parse(JSON.stringify(schema), (key, value) => (key === '$id' ? undefined : value));
}

/** The wire schema a declared parameter must be published with (the rules of src/api/params.ts). */
function expectedWire(declared: TSchema): Record<string, unknown> {
  const tooMany = declared['x-too-many'] as number | undefined;
  const kind = declared['x-param'] as string;
  const wire: Record<string, unknown> = { 'x-param': kind };
  const copy = (...keys: string[]) => keys.forEach((key) => declared[key] !== undefined && (wire[key] = declared[key]));
  switch (kind) {
    case 'uint':
    case 'int':
      Object.assign(wire, { type: 'integer', minimum: declared.minimum, maximum: Math.min(declared.maximum, tooMany ?? Infinity) });
      break;
    case 'bit':
      Object.assign(wire, { type: 'integer', enum: [0, 1] });
      break;
    case 'double':
      wire.type = 'number';
      copy('minimum', 'maximum');
      break;
    case 'string':
      wire.type = 'string';
      copy('minLength', 'maxLength');
      break;
    case 'enum':
      Object.assign(wire, { type: 'string', enum: declared.anyOf.map((s: { const: string }) => s.const) });
      break;
    case 'idOrDomain':
      wire.anyOf = [
        { type: 'integer', minimum: 1, description: 'numeric id' },
        { type: 'string', minLength: 1, maxLength: 100, description: 'domain (short name)' },
      ];
      break;
    case 'set':
      wire.type = 'string';
      wire['x-item'] = declared['x-item'] ?? 'string';
      if (wire['x-item'] === 'uint') wire.pattern = '^\\s*\\d+\\s*(,\\s*\\d+\\s*)*$';
      if (tooMany !== undefined) wire['x-too-many'] = tooMany;
      if (declared.maxItems !== undefined) wire['x-max-items'] = declared.maxItems;
      break;
    default:
      assert.fail(`parameter kind ${kind}`);
  }
  copy('default');
  return wire;
}

/** Every code a method can answer besides 0: the transport's rules, then the method's own. */
function expectedCodes(method: AnyMethod): number[] {
  const codes = new Set([2, 3, 7, ...Object.keys(method.errors ?? {}).map(Number)]);
  if (method.auth !== 'none') codes.add(1);
  // Bots are refused where the method does not allow them, sessions of OAuth apps every required method and every scoped one.
  if (method.auth === 'admin' || method.auth === 'required' || method.scope) codes.add(4);
  if (Object.values(method.params.properties).some((s) => (s as TSchema)['x-too-many'] !== undefined)) codes.add(6);
  return [...codes].sort((a, b) => a - b);
}

const AUTH_WORDS: Record<AnyMethod['auth'], RegExp> = {
  none: /\*\*Authentication:\*\* None/,
  optional: /\*\*Authentication:\*\* Optional/,
  required: /\*\*Authentication:\*\* Required/,
  admin: /\*\*Authentication:\*\* Admin: send the operator key in the `X-Admin-Key` header/,
};

test('every method: both forms, auth, bot rule, every parameter, every answer and every error code', async () => {
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

    // Who may call it.
    assert.equal(get['x-auth'], method.auth);
    assert.match(get.description, AUTH_WORDS[method.auth], `${method.name}: auth in words`);
    assert.equal(get['x-extension'], method.extension === true);
    const botsMayCall = method.auth === 'none' || method.auth === 'optional' || (method.auth === 'required' && method.bots === true);
    assert.equal(get['x-bots'], botsMayCall, `${method.name}: bot allow-list`);
    assert.match(
      get.description,
      botsMayCall ? /\*\*Bot tokens:\*\* Allowed/ : /\*\*Bot tokens:\*\* Not/,
      `${method.name}: bot rule in words`,
    );
    const appsMayCall = method.auth === 'none' || method.auth === 'optional' || method.scope !== undefined;
    assert.equal(get['x-oauth-apps'], appsMayCall, `${method.name}: OAuth apps`);
    assert.equal(get['x-oauth-scope'], method.scope, `${method.name}: OAuth scope`);
    const appWords = method.scope
      ? `**Sessions of OAuth apps:** Allowed with the \`${method.scope}\` scope (${SCOPE_BITS[method.scope]}); without it the answer is code 4.`
      : method.auth === 'required'
        ? '**Sessions of OAuth apps:** Not allowed'
        : method.auth === 'optional'
          ? '**Sessions of OAuth apps:** Allowed'
          : '**Sessions of OAuth apps:** Not applicable';
    assert.ok(get.description.includes(appWords), `${method.name}: OAuth rule in words`);
    const security = {
      none: [],
      optional: [{}, { accessToken: [] }, { bearerAuth: [] }],
      required: [{ accessToken: [] }, { bearerAuth: [] }],
      admin: [{ adminKey: [] }],
    };
    assert.deepEqual(get.security, security[method.auth], `${method.name}: security`);
    assert.deepEqual(post.security, get.security);

    // Every parameter: wire type, limits, default, whether it is required, and a description.
    const names = Object.keys(method.params.properties);
    assert.deepEqual(
      get.parameters.map((p: any) => p.name),
      names,
      `${method.name}: query parameters`,
    );
    for (const parameter of get.parameters) {
      const where = `${method.name}(${parameter.name})`;
      const declared = method.params.properties[parameter.name] as TSchema;
      assert.equal(parameter.in, 'query');
      assert.ok(typeof declared.description === 'string' && declared.description.length > 0, `${where} has no description`);
      assert.ok(parameter.description.startsWith(declared.description), `${where}: description`);
      assert.deepEqual(parameter.schema, expectedWire(declared), `${where}: schema`);
      const required = (method.params.required ?? []).includes(parameter.name) && declared.default === undefined;
      assert.equal(parameter.required, required, `${where}: required`);
    }
    if (names.length > 0) {
      const body = post.requestBody.content['application/json'].schema;
      assert.deepEqual(Object.keys(body.properties), names);
      for (const parameter of get.parameters)
        assert.deepEqual(
          body.properties[parameter.name],
          { ...parameter.schema, description: parameter.description },
          `${method.name}(${parameter.name}) in the body`,
        );
      assert.deepEqual(post.requestBody.content['application/x-www-form-urlencoded'].schema, body);
      assert.deepEqual(
        body.required,
        get.parameters.filter((p: any) => p.required).map((p: any) => p.name),
      );
    } else assert.equal(post.requestBody, undefined);

    // Every error code, in the extension field, in the description's table and as an envelope.
    const codes = expectedCodes(method);
    assert.deepEqual(Object.keys(get['x-error-codes']).map(Number), codes, `${method.name}: error codes`);
    for (const [code, meaning] of Object.entries(method.errors ?? {}))
      assert.equal(get['x-error-codes'][code], meaning, `${method.name}: error ${code}`);
    for (const code of codes)
      assert.ok(
        get.description.includes(`| ${code} | ${get['x-error-codes'][code]} |`),
        `${method.name}: error ${code} in the description`,
      );

    // Every answer: the success envelope carries exactly the declared result schema, the
    // error envelopes exactly the codes above (3 and 7 under their own HTTP statuses).
    assert.deepEqual(post.responses, get.responses);
    const [success, ...errors] = inline(document, get.responses['200']).content['application/json'].schema.anyOf;
    if (method.result) {
      const key = method.resultKey ?? 'data';
      assert.deepEqual(success.required, ['code', key]);
      assert.deepEqual(success.properties[key], plain(method.result), `${method.name}: ${key} schema`);
    } else {
      assert.deepEqual(success.required, ['code']);
      assert.deepEqual(Object.keys(success.properties), ['code']);
    }
    assert.equal(success.additionalProperties, false);
    const answered = errors
      .flatMap((e: any) => (e.properties.code.anyOf ?? [e.properties.code]).map((c: any) => c.const))
      .sort((a: number, b: number) => a - b);
    assert.deepEqual(
      answered,
      codes.filter((c) => c !== 3 && c !== 7),
      `${method.name}: error envelopes`,
    );
    for (const envelope of errors) {
      assert.deepEqual(envelope.required, envelope.properties.data ? ['code', 'description', 'data'] : ['code', 'description']);
      const code = envelope.properties.code.const;
      if (ERROR_DATA[code]) assert.deepEqual(envelope.properties.data, plain(ERROR_DATA[code]), `${method.name}: data of error ${code}`);
      else assert.equal(envelope.properties.data, undefined);
    }
    const rateLimited = inline(document, get.responses['429']);
    assert.deepEqual(rateLimited.content['application/json'].schema.properties.code, { const: 7, type: 'number' });
    assert.deepEqual(rateLimited.content['application/json'].schema.properties.data, plain(ERROR_DATA[7]));
    assert.ok(rateLimited.headers['Retry-After']);
    assert.deepEqual(inline(document, get.responses['500']).content['application/json'].schema.properties.code, {
      const: 3,
      type: 'number',
    });
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
  assert.deepEqual(
    byName.user_id.schema.anyOf.map((s: any) => s.type),
    ['integer', 'string'],
  );
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
    {
      type: byName.count.schema.type,
      minimum: byName.count.schema.minimum,
      maximum: byName.count.schema.maximum,
      default: byName.count.schema.default,
    },
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
    4: 'sessions of OAuth apps may not call this method',
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
  assert.deepEqual(
    restricted.properties.data.properties.type.anyOf.map((s: any) => s.const),
    ['DISABLED', 'STRICT', 'EMOTES_ONLY', 'BOT_LIMITATIONS'],
  );
});

test('a bot-forbidden or scoped method lists code 4; two schemas under one name are refused', () => {
  const forbidden = { ...sample, bots: false } as AnyMethod;
  const document: any = buildOpenApiDocument([forbidden]);
  assert.equal(document.paths['/api/sample.read'].get['x-error-codes'][4], 'bots, and sessions of OAuth apps, may not call this method');
  assert.equal(document.paths['/api/sample.read'].get['x-bots'], false);
  const readOf = (method: AnyMethod) => (buildOpenApiDocument([method]) as any).paths['/api/sample.read'].get;
  const scoped = readOf({ ...sample, bots: false, scope: 'stat' } as AnyMethod);
  assert.equal(scoped['x-error-codes'][4], 'bots, and sessions of OAuth apps without the `stat` scope, may not call this method');
  assert.deepEqual([scoped['x-oauth-apps'], scoped['x-oauth-scope']], [true, 'stat']);
  const botsToo = readOf({ ...sample, scope: 'games' } as AnyMethod);
  assert.equal(botsToo['x-error-codes'][4], 'sessions of OAuth apps without the `games` scope may not call this method');
  const optional = readOf({ ...sample, auth: 'optional', scope: 'stat' } as AnyMethod);
  assert.equal(optional['x-error-codes'][4], 'sessions of OAuth apps without the `stat` scope may not call this method');
  assert.match(
    optional.description,
    /\*\*Sessions of OAuth apps:\*\* Allowed with the `stat` scope \(8\); without it the answer is code 4\./,
  );
  assert.equal(readOf({ ...sample, auth: 'optional' } as AnyMethod)['x-error-codes'][4], undefined);
  const clash = {
    ...sample,
    name: 'sample.other',
    result: Type.Object({ id: Type.String() }, { ...Strict, $id: 'SampleThing' }),
  } as AnyMethod;
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
  assert.match(
    responseProblems(sample, 200, { code: 7, description: 'x', data: { retry_after: 1 } }).join(),
    /HTTP status 200, expected 429/,
  );
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
