import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { FastifyBaseLogger } from 'fastify';
import type { Services } from '../services.js';
import type { InTransaction } from '../db/connection.js';
import { authError } from './errors.js';
import { readParams } from './params.js';
import type { MethodScope } from './oauth-scopes.js';

/** The signed-in caller of a method, resolved from the access token. */
export interface Caller {
  userId: number;
  isBot: boolean;
  sessionId: number;
  familyId: string;
  /** OAuth scopes (bit mask) of a session an app obtained; absent for a player's own sign-in. */
  scopes?: number;
}

export interface CallContext {
  services: Services;
  /** Present when the method takes a token and a valid one was sent. */
  caller?: Caller;
  /** The raw access token, when one was sent and resolved. */
  accessToken?: string;
  /** Client address (from X-Forwarded-For with trust-proxy). */
  ip: string;
  /** The client's User-Agent header, when it sent one. */
  userAgent?: string;
  requestId: string;
  log: FastifyBaseLogger;
}

export interface SignedInContext extends CallContext {
  caller: Caller;
}

/** What an admin method's handler is given: an authorised call, audited by the transport. */
export interface AdminContext extends CallContext {
  /**
   * The one transaction the action writes the database in, together with its audit entry:
   * both commit or neither. Run in it every write of the action (and nothing else that
   * reaches the database); announce the changes to other processes once it has returned.
   */
  inTransaction: InTransaction;
}

/**
 * none: tokens are ignored; optional: a sent token must be valid; required: a valid token
 * must be sent; admin: the X-Admin-Key header must match the configured key.
 */
export type AuthRequirement = 'none' | 'optional' | 'required' | 'admin';

/**
 * What a handler answers: for a method with a result schema, a value of that schema or the
 * same answer ready-made as JSON; for one without, nothing.
 */
export type Answer<R extends TSchema | undefined> = R extends TSchema ? Static<R> | ReadyJson : void;

type Handler<C extends CallContext, P extends TObject, R extends TSchema | undefined> = (ctx: C, params: Static<P>) => Promise<Answer<R>>;

/** A method as declared: what the OpenAPI document, `/docs` and the admin command describe. */
export interface MethodDescription<P extends TObject = TObject, R extends TSchema | undefined = TSchema | undefined> {
  name: string;
  summary: string;
  description?: string;
  auth: AuthRequirement;
  /** A bot's token may call this method (methods with auth `none` or `optional` are always open). */
  bots?: boolean;
  /**
   * The OAuth scope a session an app obtained needs to call this method (auth `required` or
   * `optional`): without it, such a session answers 4. A method without a scope answers it 4
   * when its auth is `required`, and is open to it when `optional` (the token stands for the player).
   */
  scope?: MethodScope;
  params: P;
  /** Schema of `data` on success; absent for methods that answer `{ code: 0 }` only. */
  result?: R;
  /** Method-specific error codes it can answer, with what they mean. */
  errors?: Record<number, string>;
  /** Ours, not the reference service's. */
  extension?: boolean;
  /** Where success puts the result: `data` (default), or `result` as the reference's execute.* methods answer. */
  resultKey?: 'data' | 'result';
}

/**
 * Bytes a method's answer to these parameters will take, about, found cheaply before the
 * answer is built (from a count, not the list): the request limits charge it up front.
 */
type AnswerBytesEstimator<P extends TObject> = (ctx: CallContext, params: Static<P>) => Promise<number>;

/**
 * A method's declaration with its handler, which is given the signed-in caller when the method
 * requires one, and the audited transaction of the call when it is an admin method.
 */
export type MethodDefinition<P extends TObject, R extends TSchema | undefined> = MethodDescription<P, R> & {
  /** Methods whose answers can be large (megabytes): what one will cost (see AnswerBytesEstimator). */
  answerBytes?: AnswerBytesEstimator<P>;
} & (
    | { auth: 'required'; handler: Handler<SignedInContext, P, R> }
    | { auth: 'optional'; handler: Handler<CallContext, P, R> }
    | { auth: 'none'; scope?: never; handler: Handler<CallContext, P, R> }
    | { auth: 'admin'; scope?: never; handler: Handler<AdminContext, P, R> }
  );

/**
 * A declared method as the transport runs it: the parameters as sent in, read once, the
 * handler's answer out.
 */
export interface AnyMethod extends MethodDescription {
  /** Coerces `raw` against the parameter schema: the parameters `runWith` and `answerBytes` take (ApiError 2 for a bad one). */
  readParams(raw: Record<string, unknown>): unknown;
  /** Runs the handler with the parameters `readParams` read; the caller has done the authorisation. */
  runWith(ctx: CallContext, params: unknown): Promise<unknown>;
  /** `readParams`, then `runWith`. */
  run(ctx: CallContext, raw: Record<string, unknown>): Promise<unknown>;
  /** Estimates the answer's bytes from the parameters `readParams` read, for methods that declare an estimator. */
  answerBytes?(ctx: CallContext, params: unknown): Promise<number>;
}

function isSignedIn(ctx: CallContext): ctx is SignedInContext {
  return ctx.caller !== undefined;
}

function isAudited(ctx: CallContext): ctx is AdminContext {
  return 'inTransaction' in ctx;
}

/**
 * A handler result already serialized as JSON: the transport sends it as `data` without
 * serializing again. A handler that gives the same object again (one a cache keeps) has it
 * encoded once: the transport keeps the encoded answer as long as the object lives.
 */
export class SerializedData {
  declare private readonly nominal: 'SerializedData';
  constructor(readonly json: string) {}
}

/**
 * A handler result serialized as the texts of a JSON array's elements, between `open` (`[`,
 * or the start of an object that ends with one) and `close`: the transport joins them into
 * the envelope in one go, so an answer made of many ready-made texts is copied once.
 */
export class SerializedList {
  declare private readonly nominal: 'SerializedList';
  constructor(
    readonly elements: readonly string[],
    readonly open = '[',
    readonly close = ']',
  ) {}
}

/**
 * A large handler result as JSON in pieces, which the transport sends as they come, so that
 * the whole answer is never held in memory at once. A piece is text, or UTF-8 bytes (a part
 * kept ready-made, sent without being encoded again).
 */
export class StreamedData {
  declare private readonly nominal: 'StreamedData';
  constructor(readonly pieces: () => Iterable<string | Buffer>) {}
}

/**
 * An answer ready-made as JSON. Each class has a private member, so that only an instance,
 * not any object of the same shape, passes for one where a handler's answer is checked.
 */
export type ReadyJson = SerializedData | SerializedList | StreamedData;

/**
 * Declares a method. The handler's parameters are typed by the parameter schema and its
 * answer is checked against the result schema by the compiler.
 */
export function defineMethod<P extends TObject, R extends TSchema | undefined = undefined>(definition: MethodDefinition<P, R>): AnyMethod {
  const { answerBytes } = definition;
  type Params = Static<P>;
  // Not async: the handler's own promise is answered, without another one around it to settle.
  const runWith = (ctx: CallContext, params: Params): Promise<unknown> => {
    switch (definition.auth) {
      case 'required':
        if (!isSignedIn(ctx)) return Promise.reject(authError('authorization required: send an access_token'));
        return definition.handler(ctx, params);
      case 'admin':
        if (!isAudited(ctx)) return Promise.reject(new Error(`${definition.name} runs only as an audited admin call`));
        return definition.handler(ctx, params);
      default:
        return definition.handler(ctx, params);
    }
  };
  return {
    ...definition,
    readParams: (raw) => readParams(definition.params, raw),
    runWith: (ctx, params) => runWith(ctx, params as Params),
    run: async (ctx, raw) => runWith(ctx, readParams(definition.params, raw)),
    answerBytes: answerBytes && ((ctx, params) => answerBytes(ctx, params as Params)),
  };
}

/**
 * Everything a capability contributes to the server's routes. Its per-process state (caches,
 * timers) is the runtime its start function returns, assembled into `Services` by `createServer`.
 */
export interface Domain {
  name: string;
  methods: AnyMethod[];
  /** Extra HTTP routes (the WebSocket feed, for example). */
  routes?: (app: import('fastify').FastifyInstance, services: Services) => Promise<void> | void;
}
