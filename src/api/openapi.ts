import { readFileSync } from 'node:fs';
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { Code } from './errors.js';
import type { AnyMethod } from './method.js';
import { SCOPE_BITS } from './oauth-scopes.js';
import type { ParamKind } from './params.js';
import { Strict, Ts } from './schema-types.js';

/**
 * The OpenAPI 3.1 document of the API, generated from the method declarations: the same
 * TypeBox schemas that read the parameters and describe each method's `data`.
 */

type Json = Record<string, unknown>;

/** Result codes any method may answer, as the reference service defines them. */
export const GLOBAL_ERRORS = {
  [Code.AUTH]: 'authorization error: token missing where required, unknown, expired, revoked, or used from another IP',
  [Code.BAD_PARAM]: 'a required parameter is missing, or a parameter is invalid (the description names it)',
  [Code.INTERNAL]: 'internal server error',
  [Code.FORBIDDEN]: 'no rights to perform this request (e.g. a bot calling a method bots may not call)',
  [Code.UNKNOWN_METHOD]: 'unknown API method',
  [Code.TOO_MANY_OBJECTS]: 'too many objects requested',
  [Code.RATE_LIMIT]: 'request limit exceeded; data.retry_after = seconds until it lifts',
  [Code.CAPTCHA]: 'captcha required',
  [Code.UNAVAILABLE]: 'the server cannot process the request right now',
  [Code.TOTP_REQUIRED]: 'an authenticator (TOTP) code is required',
  [Code.DISABLED]: 'method temporarily disabled (maintenance)',
  [Code.UNKNOWN]: 'unknown error',
} satisfies Record<number, string>;

/** The `data` an error carries, for the codes that carry one. */
export const ERROR_DATA: Record<number, TObject> = {
  [Code.RATE_LIMIT]: Type.Object({ retry_after: Type.Integer({ minimum: 0, description: 'seconds until the limit lifts' }) }, Strict),
  [Code.MUTED]: Type.Object({ muted_until: Ts }, Strict),
  [Code.OAUTH_BAD_REDIRECT_URI]: Type.Object({ details: Type.String({ description: 'why the address is not valid' }) }, Strict),
  [Code.IN_A_ROOM]: Type.Object({ room_id: Type.String({ description: 'the room the user is in' }) }, Strict),
  [Code.MARKET_PRICE_CHANGED]: Type.Object({ price: Type.Number({ description: "the listing's price now, in units" }) }, Strict),
  [Code.ALREADY_IN_GAME]: Type.Object(
    {
      user_id: Type.Integer({ description: 'the player already in a game' }),
      gs_id: Type.String({ description: 'the game server of that game' }),
      gs_game_id: Type.Integer({ description: 'that game' }),
    },
    Strict,
  ),
  [Code.CHAT_RESTRICTED]: Type.Object(
    {
      type: Type.Union([Type.Literal('DISABLED'), Type.Literal('STRICT'), Type.Literal('EMOTES_ONLY'), Type.Literal('BOT_LIMITATIONS')]),
    },
    Strict,
  ),
};

function paramSchemas(method: AnyMethod): [string, TSchema][] {
  return Object.entries(method.params.properties) as [string, TSchema][];
}

/**
 * Every code the method can answer besides 0, with its meaning: the global codes that apply
 * to its auth mode and parameters, then its own.
 */
export function errorCodesOf(method: AnyMethod): Record<number, string> {
  const codes: Record<number, string> = {};
  const add = (code: number, meaning: string) => (codes[code] = meaning);
  if (method.auth === 'admin') add(Code.AUTH, 'wrong or missing X-Admin-Key');
  else if (method.auth === 'required') add(Code.AUTH, 'access token missing, unknown, expired, revoked, or used from another IP');
  else if (method.auth === 'optional') add(Code.AUTH, 'the access token sent is unknown, expired, revoked, or used from another IP');
  add(Code.BAD_PARAM, GLOBAL_ERRORS[Code.BAD_PARAM]);
  add(Code.INTERNAL, GLOBAL_ERRORS[Code.INTERNAL]);
  if (method.auth === 'admin') add(Code.FORBIDDEN, 'the admin API is disabled: no admin key is configured');
  else if (method.auth === 'required' || method.scope) {
    const apps = method.scope ? `sessions of OAuth apps without the \`${method.scope}\` scope` : 'sessions of OAuth apps';
    const botsRefused = method.auth === 'required' && !method.bots;
    add(Code.FORBIDDEN, botsRefused ? `bots, and ${apps}, may not call this method` : `${apps} may not call this method`);
  }
  const tooMany = paramSchemas(method).filter(([, s]) => s['x-too-many'] !== undefined);
  if (tooMany.length > 0)
    add(Code.TOO_MANY_OBJECTS, `too many objects requested (${tooMany.map(([n, s]) => `${n} above ${s['x-too-many']}`).join(', ')})`);
  add(Code.RATE_LIMIT, GLOBAL_ERRORS[Code.RATE_LIMIT]);
  for (const [code, meaning] of Object.entries(method.errors ?? {})) add(Number(code), meaning);
  return Object.fromEntries(Object.entries(codes).sort(([a], [b]) => Number(a) - Number(b)));
}

const Description = Type.String({ description: 'what went wrong, in words' });

/** Error envelopes for these codes: one object for the codes without data, one per code with data. */
export function errorEnvelopeSchemas(codes: number[]): TObject[] {
  const plain = codes.filter((c) => !ERROR_DATA[c]);
  const schemas: TObject[] = [];
  // A union of one literal is that literal.
  if (plain.length > 0)
    schemas.push(Type.Object({ code: Type.Union(plain.map((c) => Type.Literal(c))), description: Description }, Strict));
  for (const c of codes) {
    const data = ERROR_DATA[c];
    if (data) schemas.push(Type.Object({ code: Type.Literal(c), description: Description, data }, Strict));
  }
  return schemas;
}

/** The success envelope: `{ code: 0, data }` (`result` in place of `data` where the method says so), or `{ code: 0 }` for methods without a result. */
export function successEnvelopeSchema(method: AnyMethod): TObject {
  return method.result
    ? Type.Object({ code: Type.Literal(0), [method.resultKey ?? 'data']: method.result }, Strict)
    : Type.Object({ code: Type.Literal(0) }, Strict);
}

/** Every body the method can answer: success or one of its errors. */
export function responseSchemaOf(method: AnyMethod): TSchema {
  return Type.Union([successEnvelopeSchema(method), ...errorEnvelopeSchemas(Object.keys(errorCodesOf(method)).map(Number))]);
}

/** The body of an answer that names no method (unknown method, unparseable request). */
export function anyErrorSchema(): TSchema {
  const codes = [...new Set([...Object.keys(GLOBAL_ERRORS), ...Object.keys(ERROR_DATA)].map(Number))].sort((a, b) => a - b);
  return Type.Union(errorEnvelopeSchemas(codes));
}

// ---------------------------------------------------------------------------------------------
// Parameters as they travel: query strings and form bodies carry strings, JSON bodies carry
// the same notation (a set is one comma-separated string there too).

const ITEM_WORDS: Record<string, string> = { uint: 'ids', idOrDomain: 'ids or domains', string: 'values' };

function wireSchema(schema: TSchema): Json {
  const kind = schema['x-param'] as ParamKind;
  const notes: string[] = [];
  const out: Json = {};
  const tooMany = schema['x-too-many'] as number | undefined;
  switch (kind) {
    case 'uint':
    case 'int': {
      out.type = 'integer';
      out.minimum = schema.minimum;
      out.maximum = tooMany !== undefined ? Math.min(tooMany, schema.maximum as number) : schema.maximum;
      if (tooMany !== undefined) notes.push(`At most ${tooMany}; more answers code 6.`);
      break;
    }
    case 'bit':
      out.type = 'integer';
      out.enum = [0, 1];
      notes.push('0 or 1 (JSON bodies may also send true or false).');
      break;
    case 'double':
      out.type = 'number';
      if (schema.minimum !== undefined) out.minimum = schema.minimum;
      if (schema.maximum !== undefined) out.maximum = schema.maximum;
      break;
    case 'string':
      out.type = 'string';
      if (schema.minLength !== undefined) out.minLength = schema.minLength;
      if (schema.maxLength !== undefined) out.maxLength = schema.maxLength;
      break;
    case 'enum':
      out.type = 'string';
      out.enum = (schema.anyOf as { const: string }[]).map((s) => s.const);
      break;
    case 'idOrDomain':
      out.anyOf = [
        { type: 'integer', minimum: 1, description: 'numeric id' },
        { type: 'string', minLength: 1, maxLength: 100, description: 'domain (short name)' },
      ];
      notes.push('A numeric id (all digits) or a domain name (anything else).');
      break;
    case 'set': {
      const item = (schema['x-item'] as string | undefined) ?? 'string';
      out.type = 'string';
      if (item === 'uint') out.pattern = '^\\s*\\d+\\s*(,\\s*\\d+\\s*)*$';
      out['x-item'] = item;
      if (tooMany !== undefined) out['x-too-many'] = tooMany;
      if (schema.maxItems !== undefined) out['x-max-items'] = schema.maxItems;
      notes.push(`Comma-separated ${ITEM_WORDS[item] ?? 'values'}; an empty value counts as not given.`);
      if (tooMany !== undefined) notes.push(`At most ${tooMany} elements; more answers code 6.`);
      if (schema.maxItems !== undefined) notes.push(`At most ${schema.maxItems} elements.`);
      break;
    }
    default:
      throw new Error(`parameter schema without a known x-param kind: ${String(kind)}`);
  }
  out['x-param'] = kind;
  if (schema.default !== undefined) out.default = schema.default;
  const declared = schema.description as string | undefined;
  const sentence = declared && !/[.!?)]$/.test(declared) ? `${declared}.` : declared;
  const description = [sentence, ...notes].filter(Boolean).join(' ');
  if (description) out.description = description;
  return out;
}

function isRequired(schema: TObject, name: string): boolean {
  return (schema.required ?? []).includes(name) && (schema.properties[name] as TSchema).default === undefined;
}

// ---------------------------------------------------------------------------------------------
// Schemas with an `$id` become components, referred to by `$ref`.

class Components {
  readonly schemas: Record<string, Json> = {};
  readonly responses: Record<string, Json> = {};
  private readonly texts = new Map<string, string>();

  constructor(private readonly refPrefix = '#/components/schemas/') {}

  /** A plain JSON copy of a TypeBox schema with every `$id` subschema moved to the components. */
  use(schema: TSchema | Json): Json {
    return this.visit(JSON.parse(JSON.stringify(schema)) as Json) as Json;
  }

  private visit(node: unknown): unknown {
    if (Array.isArray(node)) return node.map((n) => this.visit(n));
    if (node === null || typeof node !== 'object') return node;
    const { $id, ...rest } = node as Json;
    const out: Json = {};
    for (const [key, value] of Object.entries(rest)) {
      if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) out.$ref = `${this.refPrefix}${value}`;
      else out[key] = this.visit(value);
    }
    if (typeof $id !== 'string') return out;
    const text = JSON.stringify(out);
    const known = this.texts.get($id);
    if (known !== undefined && known !== text) throw new Error(`two different schemas are named ${$id}`);
    this.texts.set($id, text);
    this.schemas[$id] = out;
    return { $ref: `${this.refPrefix}${$id}` };
  }
}

/** A plain JSON Schema of a TypeBox schema, its named subschemas under `$defs`. */
export function standaloneSchema(schema: TSchema): Json {
  const components = new Components('#/$defs/');
  const root = components.use(schema);
  return Object.keys(components.schemas).length > 0 ? { ...root, $defs: components.schemas } : root;
}

// ---------------------------------------------------------------------------------------------

export interface OpenApiOptions {
  version?: string;
}

const AUTH_TEXT: Record<AnyMethod['auth'], string> = {
  none: 'None: tokens are ignored.',
  optional:
    'Optional: send an access token (`access_token` parameter or `Authorization: Bearer`) to act as a user; a token that is sent must be valid (else code 1).',
  required:
    'Required: send an access token (`access_token` parameter or `Authorization: Bearer`); without a valid one the answer is code 1.',
  admin: 'Admin: send the operator key in the `X-Admin-Key` header.',
};

function botText(method: AnyMethod): string {
  if (method.auth === 'admin') return 'Not applicable (admin key only).';
  if (method.auth !== 'required' || method.bots) return 'Allowed.';
  return 'Not allowed: a bot token answers code 4.';
}

/** Whether a session an app obtained through OAuth may call the method (given its scope, if the method names one). */
function appsMayCall(method: AnyMethod): boolean {
  return method.auth === 'none' || method.auth === 'optional' || method.scope !== undefined;
}

function appText(method: AnyMethod): string {
  if (method.scope) return `Allowed with the \`${method.scope}\` scope (${SCOPE_BITS[method.scope]}); without it the answer is code 4.`;
  switch (method.auth) {
    case 'admin':
      return 'Not applicable (admin key only).';
    case 'none':
      return 'Not applicable: tokens are ignored.';
    case 'optional':
      return 'Allowed, whatever its scopes: the token stands for the player who allowed the app.';
    case 'required':
      return 'Not allowed: whatever its scopes, the answer is code 4.';
  }
}

function securityOf(method: AnyMethod): Json[] {
  switch (method.auth) {
    case 'none':
      return [];
    case 'optional':
      return [{}, { accessToken: [] }, { bearerAuth: [] }];
    case 'required':
      return [{ accessToken: [] }, { bearerAuth: [] }];
    case 'admin':
      return [{ adminKey: [] }];
  }
}

function errorTable(codes: Record<number, string>): string {
  const rows = Object.entries(codes).map(([code, meaning]) => `| ${code} | ${meaning.replace(/\|/g, '\\|')} |`);
  return ['| code | meaning |', '|---|---|', ...rows].join('\n');
}

function operationDescription(method: AnyMethod, codes: Record<number, string>): string {
  return [
    `**${method.summary}**`,
    method.description,
    method.extension ? '_An extension of this server; the reference service does not have it._' : undefined,
    `**Authentication:** ${AUTH_TEXT[method.auth]}`,
    `**Bot tokens:** ${botText(method)}`,
    `**Sessions of OAuth apps:** ${appText(method)}`,
    `**Errors:**\n\n${errorTable(codes)}`,
  ]
    .filter(Boolean)
    .join('\n\n');
}

/** The answers of a method, kept once in the components and shared by its GET and POST forms. */
function responsesOf(method: AnyMethod, components: Components, codes: number[]): Json {
  const envelope = (schemas: TSchema[]) => {
    const all = schemas.map((s) => components.use(s));
    return { 'application/json': { schema: all.length === 1 ? all[0] : { anyOf: all } } };
  };
  const ordinary = codes.filter((c) => c !== Code.INTERNAL && c !== Code.RATE_LIMIT);
  components.responses[method.name] ??= {
    description: method.result
      ? `Success (\`code\` 0 with \`${method.resultKey ?? 'data'}\`), or an error envelope (\`code\` and \`description\`).`
      : 'Success (`{ "code": 0 }`, no `data`), or an error envelope (`code` and `description`).',
    content: envelope([successEnvelopeSchema(method), ...errorEnvelopeSchemas(ordinary)]),
  };
  components.responses.RateLimited ??= {
    description: 'Request limit exceeded (code 7).',
    headers: { 'Retry-After': { description: 'seconds until the limit lifts', schema: { type: 'integer', minimum: 0 } } },
    content: envelope(errorEnvelopeSchemas([Code.RATE_LIMIT])),
  };
  components.responses.InternalError ??= {
    description: 'Internal error (code 3).',
    content: envelope(errorEnvelopeSchemas([Code.INTERNAL])),
  };
  return {
    '200': { $ref: `#/components/responses/${method.name}` },
    '429': { $ref: '#/components/responses/RateLimited' },
    '500': { $ref: '#/components/responses/InternalError' },
  };
}

function operationsOf(method: AnyMethod, components: Components): Json {
  const codes = errorCodesOf(method);
  const common = {
    tags: [method.name.split('.')[0]],
    summary: method.name,
    description: operationDescription(method, codes),
    security: securityOf(method),
    responses: responsesOf(method, components, Object.keys(codes).map(Number)),
    'x-auth': method.auth,
    'x-bots': method.auth === 'admin' ? false : method.auth !== 'required' || method.bots === true,
    'x-oauth-apps': appsMayCall(method),
    ...(method.scope ? { 'x-oauth-scope': method.scope } : {}),
    'x-extension': method.extension === true,
    'x-error-codes': codes,
  };
  const params = paramSchemas(method);
  const get = {
    ...common,
    operationId: method.name,
    parameters: params.map(([name, schema]) => {
      const { description, ...wire } = wireSchema(schema);
      return { name, in: 'query', required: isRequired(method.params, name), ...(description ? { description } : {}), schema: wire };
    }),
  };
  const body = {
    type: 'object',
    properties: Object.fromEntries(params.map(([name, schema]) => [name, wireSchema(schema)])),
    required: params.filter(([name]) => isRequired(method.params, name)).map(([name]) => name),
    additionalProperties: true,
  };
  const post = {
    ...common,
    operationId: `${method.name}.post`,
    ...(params.length > 0
      ? {
          requestBody: {
            required: false,
            description: 'Parameters as a JSON object or a form-encoded body; query-string parameters are merged in too.',
            content: { 'application/json': { schema: body }, 'application/x-www-form-urlencoded': { schema: body } },
          },
        }
      : {}),
  };
  return { get, post };
}

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

const INTRODUCTION = `Every method answers at \`/api/<method>\` to both GET and POST. Parameters come in the query string,
a JSON body or a form-encoded body (merged). \`set\` parameters are one comma-separated string; \`bit\` values are 0 or 1.

Every answer is a JSON object with a numeric \`code\`: 0 on success, with the result in \`data\` (methods without a result
answer \`{ "code": 0 }\` only). Errors answer \`{ "code": N, "description": "...", "data"?: {...} }\` with HTTP status 200,
except code 3 (HTTP 500) and code 7 (HTTP 429 with \`Retry-After\`).

The access token travels as the \`access_token\` parameter (query, JSON or form) or an \`Authorization: Bearer\` header.
Admin methods take the operator key in the \`X-Admin-Key\` header.
`;

/** Which methods a bot's token may call, in words. */
function botAllowList(methods: AnyMethod[]): string {
  const allowed = methods
    .filter((m) => m.auth === 'required' && m.bots)
    .map((m) => `\`${m.name}\``)
    .sort();
  return (
    "A bot's token may call every method whose authentication is none or optional" +
    (allowed.length > 0 ? `, and of the methods that require a token only ${allowed.join(', ')}` : '') +
    '; any other method answers a bot code 4.'
  );
}

/** Which methods the OAuth scopes open to a session an app obtained, in words. */
function appAllowList(methods: AnyMethod[]): string {
  const scopes = Object.entries(SCOPE_BITS).map(([scope, bit]) => {
    const opened = methods
      .filter((m) => m.scope === scope)
      .map((m) => `\`${m.name}\``)
      .sort();
    const brings = scope === 'offline' ? 'brings a refresh token and ' : '';
    return `\`${scope}\` (${bit}) ${brings}${opened.length > 0 ? `opens ${opened.join(', ')}` : 'opens no method'}`;
  });
  return (
    'A session an app obtained through OAuth (`oauth.exchangeCode`) may call every method whose authentication is none, ' +
    `or optional without a scope, and the methods its scopes open: ${scopes.join('; ')}. Any other method answers it code 4.`
  );
}

/** Builds the OpenAPI 3.1 document of these methods. */
export function buildOpenApiDocument(methods: AnyMethod[], options: OpenApiOptions = {}): Json {
  const components = new Components();
  const paths: Json = {};
  for (const method of [...methods].sort((a, b) => a.name.localeCompare(b.name)))
    paths[`/api/${method.name}`] = operationsOf(method, components);
  const tags = [...new Set(methods.map((m) => m.name.split('.')[0]))].sort().map((name) => ({ name }));
  const errorSchemas = { ErrorEnvelope: components.use(anyErrorSchema()) };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Game Platform API',
      version: options.version ?? packageVersion(),
      description: `${INTRODUCTION}\n${botAllowList(methods)}\n\n${appAllowList(methods)}\n\nResult codes of every method:\n\n${errorTable(GLOBAL_ERRORS)}`,
    },
    servers: [{ url: '/', description: 'the server that serves this document' }],
    tags,
    paths,
    components: {
      schemas: { ...components.schemas, ...errorSchemas },
      responses: components.responses,
      securitySchemes: {
        accessToken: {
          type: 'apiKey',
          in: 'query',
          name: 'access_token',
          description: 'access token of a session (also accepted in a JSON or form body)',
        },
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'the same access token in an Authorization header' },
        adminKey: { type: 'apiKey', in: 'header', name: 'X-Admin-Key', description: 'operator key of the admin API' },
      },
    },
    'x-global-error-codes': GLOBAL_ERRORS,
  };
}
