import { parse as parseQueryString } from 'node:querystring';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import { bearerCredentials } from './bearer.js';
import { ApiError, Code, httpStatusFor } from './errors.js';
import { SerializedData, SerializedList, StreamedData, type AnyMethod } from './method.js';
import { MethodDispatcher } from './dispatch.js';
import { TOO_DEEP, nestedDeeperThan } from './depth.js';
import { chargeAddress, settleWhenSent, type AddressCharging } from './address-limits.js';
import { clientAddressCheck } from './client-address.js';

export interface Envelope {
  code: number;
  description?: string;
  data?: unknown;
  /** execute.* methods: their result (see MethodDefinition.resultKey) */
  result?: unknown;
}

/** The access token of a call: the `access_token` parameter, else an `Authorization: Bearer` header. */
function tokenOf(request: FastifyRequest, raw: Record<string, unknown>): string | undefined {
  const param = raw.access_token;
  if (typeof param === 'string' && param !== '') return param;
  return bearerCredentials(request.headers.authorization);
}

function mergedParams(request: FastifyRequest): Record<string, unknown> {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const body = request.body;
  if (body === undefined || body === null) return { ...query };
  return { ...query, ...(body as Record<string, unknown>) };
}

export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  const envelope: Envelope = { code: error.code, description: error.description };
  if (error.data !== undefined) envelope.data = error.data;
  if (error.code === Code.RATE_LIMIT && typeof error.data?.retry_after === 'number')
    reply.header('retry-after', String(error.data.retry_after));
  return reply.status(httpStatusFor(error.code)).send(envelope);
}

function internalError(): ApiError {
  return new ApiError(Code.INTERNAL, 'internal server error');
}

/** Maps errors raised before a handler runs (body parsing, limits) to the envelope. */
function toApiError(error: unknown): { error: ApiError; status?: number } {
  if (error instanceof ApiError) return { error };
  const e = error as { code?: string; statusCode?: number };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e.statusCode === 413)
    return { error: new ApiError(Code.BAD_PARAM, 'request body is too large'), status: 413 };
  if (typeof e.code === 'string' && e.code.startsWith('FST_ERR_CTP'))
    return { error: new ApiError(Code.BAD_PARAM, 'unsupported content type or malformed body') };
  if (e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500)
    return { error: new ApiError(Code.BAD_PARAM, 'malformed request') };
  return { error: internalError() };
}

/** A request target's scheme and host, in the absolute form a client may send to a proxy (`http://host/api/...`). */
const ABSOLUTE_FORM_ORIGIN = /^[a-z][a-z\d+.-]*:\/\/[^/?#]*/i;

/** The method a path under /api names, percent-decoded; undefined for any other path. */
function methodNameOf(request: FastifyRequest): string | undefined {
  const path = request.url.replace(ABSOLUTE_FORM_ORIGIN, '').split('?', 1)[0]!;
  if (path !== '/api' && !path.startsWith('/api/')) return undefined;
  return decodedPathPart(path.slice('/api/'.length));
}

/**
 * A request no method answers, counted as a request of its address like every other (a refusal
 * answers code 7), then answered by `answer`.
 */
async function answerWithoutMethod(
  services: AddressCharging,
  request: FastifyRequest,
  reply: FastifyReply,
  answer: () => FastifyReply,
): Promise<FastifyReply> {
  if (services.config.rateLimit) {
    try {
      await chargeAddress(services, request.ip);
    } catch (error) {
      if (error instanceof ApiError && error.code === Code.RATE_LIMIT) return sendError(reply, error);
      throw error;
    }
  }
  return answer();
}

/** A path that names no method: code 5 under /api, a 404 anywhere else. */
function answerUnknownPath(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (methodNameOf(request) === undefined) return reply.status(404).send({ code: Code.UNKNOWN_METHOD, description: 'not found' });
  return sendError(reply, new ApiError(Code.UNKNOWN_METHOD, 'unknown method'));
}

/**
 * Fastify's `frameworkErrors`: a path the router cannot read (a malformed percent escape, a
 * method name past the longest a route takes) names no method, and is answered as such.
 */
export function frameworkErrorAnswers(services: AddressCharging) {
  const unexpected = (error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    request.log.error({ err: error, reqId: request.id }, 'unexpected error');
    return sendError(reply, internalError());
  };
  const addressCheck = clientAddressCheck(services.config.trustProxy, { beforeRouting: true });
  return (error: Error, request: FastifyRequest, reply: FastifyReply): void => {
    const code = (error as { code?: string }).code;
    reply.header('x-request-id', request.id);
    if (addressCheck && !addressCheck(request, reply)) return;
    if (code !== 'FST_ERR_BAD_URL' && code !== 'FST_ERR_MAX_PARAM_LENGTH') return void unexpected(error, request, reply);
    answerWithoutMethod(services, request, reply, () => answerUnknownPath(request, reply)).catch((failure: unknown) =>
      unexpected(failure, request, reply),
    );
  };
}

/** Body parsers: JSON objects and form-encoded bodies. Anything else answers code 2. */
function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = (body as string).trim();
    if (text === '') return done(null, {});
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return done(new ApiError(Code.BAD_PARAM, 'malformed JSON body'), undefined);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      return done(new ApiError(Code.BAD_PARAM, 'the JSON body must be an object'), undefined);
    if (nestedDeeperThan(parsed)) return done(new ApiError(Code.BAD_PARAM, `the JSON body ${TOO_DEEP}`), undefined);
    done(null, parsed);
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    // No cap on the number of keys (querystring's default of 1,000 would drop the rest unseen): the body limit bounds them.
    done(null, { ...parseQueryString(body as string, '&', '=', { maxKeys: 0 }) });
  });
}

/** A percent-encoded part of a path as the router reads it; as it is when malformed. */
function decodedPathPart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** Below this many characters an answer goes out as text, sent with its headers in one write. */
const TEXT_ANSWER_MAX_CHARS = 64 * 1024;

/**
 * An answer as sent: large ones as bytes, encoded once here, where a string would be
 * measured, joined to the headers and encoded again on its way out (megabytes for a large
 * inventory).
 */
function sendable(text: string): Buffer | string {
  return text.length < TEXT_ANSWER_MAX_CHARS ? text : Buffer.from(text);
}

/** The success envelope around serialised data, as text. */
function envelopeText(json: string): string {
  return `{"code":0,"data":${json}}`;
}

/**
 * The encoded envelopes of serialised answers, by the answer object: one a handler gives again
 * (from a cache) is encoded on its second sending and then sent as those bytes every time
 * (megabytes a second for large answers). Kept as long as the answer object lives.
 */
class EncodedAnswers {
  private readonly sent = new WeakMap<SerializedData, Buffer | null>();

  sendable(data: SerializedData): Buffer | string {
    const encoded = this.sent.get(data);
    if (encoded) return encoded;
    const text = envelopeText(data.json);
    if (encoded === undefined && text.length < TEXT_ANSWER_MAX_CHARS) {
      this.sent.set(data, null);
      return text;
    }
    const bytes = Buffer.from(text);
    this.sent.set(data, bytes);
    return bytes;
  }
}

/** The success envelope around a serialised list, joined in one go. */
function listEnvelopeText({ elements, open, close }: SerializedList): string {
  const head = `{"code":0,"data":${open}`;
  const tail = `${close}}`;
  if (elements.length === 0) return head + tail;
  const parts = elements.slice();
  parts[0] = head + parts[0];
  parts[parts.length - 1] += tail;
  return parts.join(',');
}

/**
 * The success envelope around data sent in pieces: the stream passes each piece on as it is
 * (`objectMode`, one at a time), text for the socket to encode into memory of its own that it
 * frees once written, and bytes to be written as they are. Buffers made here would be freed
 * only by a collection, which V8 puts off until tens of megabytes of them pile up when several
 * large answers are sent at once.
 * Between pieces other requests run: a socket that takes every piece at once would otherwise
 * have the whole answer made in one go, holding every other request for its length.
 */
async function* envelopePieces(data: StreamedData): AsyncGenerator<string | Buffer> {
  yield '{"code":0,"data":';
  for (const piece of data.pieces()) {
    yield piece;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  yield '}';
}

/**
 * The /api transport: routes every method at /api/<method> for GET and POST, merges query
 * and body parameters, has the dispatcher run the method (token, auth, bot allow-list, rate
 * limits, parameters), and wraps results and errors in the envelope. Answers the dispatcher,
 * which the realtime feed runs methods with too.
 */
export async function registerApi(app: FastifyInstance, services: Services, methods: AnyMethod[]): Promise<MethodDispatcher> {
  const dispatcher = new MethodDispatcher(services, methods);
  const encodedAnswers = new EncodedAnswers();
  registerBodyParsers(app);

  async function handle(request: FastifyRequest<{ Params: { method: string } }>, reply: FastifyReply) {
    const {
      method,
      answer: data,
      charge,
    } = await dispatcher.invoke({
      name: request.params.method,
      raw: mergedParams(request),
      ip: request.ip,
      userAgent: request.headers['user-agent'],
      requestId: String(request.id),
      log: request.log,
      token: (raw) => tokenOf(request, raw),
      adminKey: request.headers['x-admin-key'],
    });
    if (charge) settleWhenSent(request, reply, charge);
    if (data instanceof StreamedData)
      return reply
        .type('application/json; charset=utf-8')
        .send(Readable.from(envelopePieces(data), { objectMode: true, highWaterMark: 1 }));
    if (data instanceof SerializedData && method.resultKey === 'result')
      return reply.type('application/json; charset=utf-8').send(`{"code":0,"result":${data.json}}`);
    if (data instanceof SerializedData) return reply.type('application/json; charset=utf-8').send(encodedAnswers.sendable(data));
    if (data instanceof SerializedList) return reply.type('application/json; charset=utf-8').send(sendable(listEnvelopeText(data)));
    // Plain JSON.stringify, not serialisers compiled from the response schemas: for these
    // answers (unions of shapes, many optional fields) fast-json-stringify measured slower, and
    // the large lists (inventories, prototypes) are already assembled from cached JSON text.
    const envelope: Envelope = data === undefined ? { code: Code.OK } : { code: Code.OK, [method.resultKey ?? 'data']: data };
    return reply.send(envelope);
  }

  app.route({ method: ['GET', 'POST'], url: '/api/:method', handler: handle });

  app.setNotFoundHandler((request, reply) =>
    answerWithoutMethod(services, request, reply, () => {
      const name = methodNameOf(request);
      if (name !== undefined && dispatcher.knows(name))
        return sendError(reply.header('allow', 'GET, POST'), new ApiError(Code.BAD_PARAM, `${name} is called with GET or POST`));
      return answerUnknownPath(request, reply);
    }),
  );

  app.setErrorHandler((error, request, reply) => {
    const { error: apiError, status } = toApiError(error);
    if (apiError.code === Code.INTERNAL) request.log.error({ err: error, reqId: request.id }, 'unexpected error');
    if (status) {
      const envelope: Envelope = { code: apiError.code, description: apiError.description };
      return reply.status(status).send(envelope);
    }
    return sendError(reply, apiError);
  });
  return dispatcher;
}
