import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { FastifyBaseLogger } from 'fastify';
import type { Services } from '../services.js';
import type { InTransaction } from '../db/connection.js';

/** The signed-in caller of a method, resolved from the access token. */
export interface Caller {
  userId: number;
  isBot: boolean;
  sessionId: number;
  familyId: string;
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

/** The context a handler of a method with this authorisation is given. */
export type ContextFor<A extends AuthRequirement> = A extends 'required' ? SignedInContext : A extends 'admin' ? AdminContext : CallContext;

/**
 * none: tokens are ignored; optional: a sent token must be valid; required: a valid token
 * must be sent; admin: the X-Admin-Key header must match the configured key.
 */
export type AuthRequirement = 'none' | 'optional' | 'required' | 'admin';

export interface MethodDefinition<P extends TObject = TObject, A extends AuthRequirement = AuthRequirement> {
  name: string;
  summary: string;
  description?: string;
  auth: A;
  /** A bot's token may call this method (methods with auth `none` or `optional` are always open). */
  bots?: boolean;
  params: P;
  /** Schema of `data` on success; absent for methods that answer `{ code: 0 }` only. */
  result?: TSchema;
  /** Method-specific error codes it can answer, with what they mean. */
  errors?: Record<number, string>;
  /** Ours, not the reference service's. */
  extension?: boolean;
  /** Where success puts the result: `data` (default), or `result` as the reference's execute.* methods answer. */
  resultKey?: 'data' | 'result';
  handler: (ctx: ContextFor<A>, params: Static<P>) => Promise<unknown>;
}

export type AnyMethod = MethodDefinition<TObject, AuthRequirement>;

/**
 * A handler result already serialized as JSON: the transport sends it as `data` without
 * serializing again. `kept`: for an answer a cache keeps and serves to many callers, a place
 * beside it where the transport keeps the encoded envelope, so that it is encoded once too
 * (megabytes a second for large answers). Each distinct answer needs its own.
 */
export class SerializedData {
  constructor(
    readonly json: string,
    readonly kept?: KeptEnvelope,
  ) {}
}

/**
 * A handler result serialized as the texts of a JSON array's elements, between `open` (`[`,
 * or the start of an object that ends with one) and `close`: the transport joins them into
 * the envelope in one go, so an answer made of many ready-made texts is copied once.
 */
export class SerializedList {
  constructor(
    readonly elements: readonly string[],
    readonly open = '[',
    readonly close = ']',
  ) {}
}

/**
 * A large handler result as JSON text in pieces, which the transport encodes and sends as
 * they come, so that the whole answer is never held in memory at once.
 */
export class StreamedData {
  constructor(readonly pieces: () => Iterable<string>) {}
}

/** The encoded `{"code":0,"data":...}` of a kept answer, once the transport has made it. */
export interface KeptEnvelope {
  envelope?: Buffer;
}

/** Declares a method; the identity function keeps the handler's parameter types exact. */
export function defineMethod<P extends TObject, A extends AuthRequirement>(definition: MethodDefinition<P, A>): AnyMethod {
  return definition as unknown as AnyMethod;
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
