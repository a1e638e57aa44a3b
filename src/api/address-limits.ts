import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requestAddress } from '../infra/ip.js';
import { addressKey, networkOf } from '../infra/address-keys.js';
import type { Core, Services } from '../services.js';
import { trustFunction } from './client-address.js';
import { ApiError, Code, rateLimited } from './errors.js';

/**
 * What one client address may take of the server: requests per window, weighed by what their
 * answers cost, and connections held open at once.
 */

/** Every this many bytes an answer sends cost one more request of its address's budget. */
export const ANSWER_BYTES_PER_REQUEST = 64 * 1024;

/** The counter of an address's requests (see src/infra/address-keys.ts for its bounds). */
export function addressLimitKey(services: Pick<Services, 'config'>, ip: string): string {
  return addressKey('rl:ip', requestAddress(ip), services.config.addressSlots);
}

/** What charging a request to its address takes. */
export type AddressCharging = Pick<Services, 'config' | 'counters'>;

/** Counts `units` requests against the address; past its limit, code 7. */
export async function chargeAddress(services: AddressCharging, ip: string, units = 1): Promise<void> {
  const { max, windowSeconds } = services.config.rateLimitPerIp;
  const hit = await services.counters.hit(addressLimitKey(services, ip), windowSeconds, units);
  if (hit.count > max) throw rateLimited(hit.resetIn);
}

/** Answers one address may have being built and sent at once, of those estimated at ANSWER_BYTES_PER_REQUEST or more. */
export const COSTLY_ANSWERS_IN_FLIGHT = 2;

/** What a costly answer was charged before it was built; settled with the bytes it really sent. */
export interface AnswerCharge {
  /** Requests of the address's budget charged up front. */
  readonly units: number;
  /** Charges (or gives back) the difference between `sentBytes` and the estimate, and frees the answer's place in flight. Once. */
  settle(sentBytes: number): void;
}

/**
 * Costly answers, charged to their address before they are built: from a method's estimate of
 * the answer's bytes, one request per ANSWER_BYTES_PER_REQUEST, taken only when the budget can
 * pay all of it, and at most COSTLY_ANSWERS_IN_FLIGHT of them per address at once (in this
 * process). Past either, code 7 before any work. Sending settles the difference.
 */
export class CostlyAnswers {
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly services: Pick<Services, 'config' | 'counters'>) {}

  /** Charges an answer estimated at `estimatedBytes`; undefined when it is not costly (the bytes sent are charged once sent). */
  async charge(ip: string, estimatedBytes: number, log: FastifyBaseLogger): Promise<AnswerCharge | undefined> {
    const units = Math.floor(estimatedBytes / ANSWER_BYTES_PER_REQUEST);
    if (units < 1) return undefined;
    const network = networkOf(requestAddress(ip));
    const held = this.inFlight.get(network) ?? 0;
    if (held >= COSTLY_ANSWERS_IN_FLIGHT)
      throw new ApiError(Code.RATE_LIMIT, 'too many large answers at once from this address', { retry_after: 1 });
    this.inFlight.set(network, held + 1);
    let settled = false;
    const free = () => {
      const count = (this.inFlight.get(network) ?? 1) - 1;
      if (count <= 0) this.inFlight.delete(network);
      else this.inFlight.set(network, count);
    };
    const { max, windowSeconds } = this.services.config.rateLimitPerIp;
    const key = addressLimitKey(this.services, ip);
    let taken;
    try {
      taken = await this.services.counters.take(key, windowSeconds, max, units);
    } catch (error) {
      free();
      throw error;
    }
    if (!taken.taken) {
      free();
      throw rateLimited(taken.resetIn);
    }
    return {
      units,
      settle: (sentBytes) => {
        if (settled) return;
        settled = true;
        free();
        const difference = Math.floor(sentBytes / ANSWER_BYTES_PER_REQUEST) - units;
        if (difference !== 0)
          void this.services.counters
            .hit(key, windowSeconds, difference)
            .catch((err) => log.warn({ err }, 'settling an answer with its address failed'));
      },
    };
  }
}

const START_BYTES = Symbol('startBytes');
const CHARGE = Symbol('answerCharge');

/** What address-limits keeps on each request (declared on the request, so every request has one shape). */
interface Tracked {
  /** -1 until the request is admitted. */
  [START_BYTES]: number;
  [CHARGE]: AnswerCharge | null;
}

function tracked(request: FastifyRequest): Tracked {
  return request as unknown as Tracked;
}

/** Bytes written on the request's connection since the request began. */
function sentSince(request: FastifyRequest): number {
  const start = tracked(request)[START_BYTES];
  return start < 0 ? 0 : (request.raw.socket?.bytesWritten ?? start) - start;
}

/** Settles a costly answer's charge once it has been sent, or its connection has closed. */
export function settleWhenSent(request: FastifyRequest, reply: FastifyReply, charge: AnswerCharge): void {
  tracked(request)[CHARGE] = charge;
  // A client gone while its answer was built: nothing more will be sent.
  if (reply.raw.closed) return charge.settle(sentSince(request));
  reply.raw.once('close', () => charge.settle(sentSince(request)));
}

/** Connections (directly reachable) or requests in flight (behind proxies) of one network. */
interface HeldByNetwork {
  readonly network: string;
  count: number;
}

/** The address limits' part of every request, run by the server's one request hook and one response hook. */
export interface AddressLimits {
  /** Holds the request's place among its address's (behind proxies) and notes where its answer starts; false when refused (answered). */
  admit(request: FastifyRequest, reply: FastifyReply): boolean;
  /** Counts a WebSocket connect as a request of its address, then `done` (unless refused: answered). */
  admitUpgrade(request: FastifyRequest, reply: FastifyReply, done: () => void): void;
  /** Once answered: charges the bytes of an answer not charged up front. */
  answered(request: FastifyRequest): void;
}

/**
 * The cap on connections per address (a clean code 7 refusal past it), WebSocket connects
 * counted as requests, and the cost of answers charged to their address once sent (costly
 * ones: settled, see CostlyAnswers).
 */
export function registerAddressLimits(app: FastifyInstance, services: Core): AddressLimits {
  const { config } = services;
  /** What each network holds open; a network holding nothing has no entry. */
  const open = new Map<string, HeldByNetwork>();
  /** The address's network, counted, or undefined past the cap. */
  const acquire = (address: string): HeldByNetwork | undefined => {
    const network = networkOf(requestAddress(address));
    const held = open.get(network) ?? { network, count: 0 };
    if (held.count >= config.maxConnectionsPerIp) return undefined;
    if (held.count++ === 0) open.set(network, held);
    return held;
  };
  const release = (held: HeldByNetwork) => {
    if (--held.count === 0) open.delete(held.network);
  };

  app.decorateRequest(START_BYTES as unknown as string, -1);
  app.decorateRequest(CHARGE as unknown as string, null);

  const behindProxy = trustFunction(config.trustProxy) !== false;
  if (!behindProxy) {
    // Directly reachable: the peer of a connection is the client.
    app.server.on('connection', (socket: Socket) => {
      const peer = socket.remoteAddress;
      if (peer === undefined) return;
      const held = acquire(peer);
      if (held === undefined) return refuseConnection(socket);
      socket.once('close', () => release(held));
    });
  }

  const admit = (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (behindProxy) {
      // Behind our proxies every connection comes from them: hold the client's address to its share by its requests in flight.
      const held = acquire(request.ip);
      if (held === undefined) {
        refuse(reply, 1);
        return false;
      }
      // 'close' comes once per response (and per socket), so a plain listener does.
      (request.headers.upgrade ? request.raw.socket : reply.raw).on('close', () => release(held));
    }
    tracked(request)[START_BYTES] = request.raw.socket?.bytesWritten ?? 0;
    return true;
  };

  const admitUpgrade = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    if (!config.rateLimit || !request.headers.upgrade || !request.url.startsWith('/ws')) return done();
    // A WebSocket connect is a request like any other.
    chargeAddress(services, request.ip).then(
      () => done(),
      (error: unknown) => void refuse(reply, (error as { data?: { retry_after?: number } }).data?.retry_after ?? 1, 'too many requests'),
    );
  };

  const answered = (request: FastifyRequest): void => {
    // A costly answer charged up front settles on its own.
    if (!config.rateLimit || tracked(request)[CHARGE] !== null) return;
    const extra = Math.floor(sentSince(request) / ANSWER_BYTES_PER_REQUEST);
    if (extra > 0)
      void services.counters
        .hit(addressLimitKey(services, request.ip), config.rateLimitPerIp.windowSeconds, extra)
        .catch((err) => request.log.warn({ err }, 'charging an answer to its address failed'));
  };

  return { admit, admitUpgrade, answered };
}

const TOO_MANY_CONNECTIONS = 'too many connections from this address';

function refuse(reply: FastifyReply, retryAfter: number, description = TOO_MANY_CONNECTIONS): FastifyReply {
  // A refused WebSocket upgrade: once the answer is out, the connection ends (nothing else would end it).
  if (reply.request.headers.upgrade) reply.raw.once('finish', () => reply.request.raw.socket.destroy());
  return reply
    .status(429)
    .header('retry-after', String(retryAfter))
    .header('connection', 'close')
    .send({ code: Code.RATE_LIMIT, description, data: { retry_after: retryAfter } });
}

/** Refuses a connection over the cap: one answer in the API's envelope, then the connection ends. */
function refuseConnection(socket: Socket): void {
  const body = JSON.stringify({ code: Code.RATE_LIMIT, description: TOO_MANY_CONNECTIONS, data: { retry_after: 1 } });
  socket.end(
    `HTTP/1.1 429 ${STATUS_CODES[429]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n${body}`,
  );
}
