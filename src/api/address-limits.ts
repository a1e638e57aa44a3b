import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { requestAddress } from '../auth/ip.js';
import { addressKey, networkOf } from '../infra/address-keys.js';
import type { Core, Services } from '../services.js';
import { trustFunction } from './client-address.js';
import { Code, rateLimited } from './errors.js';

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

/** Counts `units` requests against the address; past its limit, code 7. */
export async function chargeAddress(services: Pick<Services, 'config' | 'counters'>, ip: string, units = 1): Promise<void> {
  const { max, windowSeconds } = services.config.rateLimitPerIp;
  const hit = await services.counters.hit(addressLimitKey(services, ip), windowSeconds, units);
  if (hit.count > max) throw rateLimited(hit.resetIn);
}

const START_BYTES = Symbol('startBytes');

/**
 * Registers, for every connection and request: the cap on connections per address (a clean
 * code 7 refusal past it), WebSocket connects counted as requests, and the cost of answers
 * charged to their address once sent.
 */
export function registerAddressLimits(app: FastifyInstance, services: Core): void {
  const { config } = services;
  const open = new Map<string, number>();
  const acquire = (address: string): boolean => {
    const network = networkOf(requestAddress(address));
    const count = open.get(network) ?? 0;
    if (count >= config.maxConnectionsPerIp) return false;
    open.set(network, count + 1);
    return true;
  };
  const release = (address: string) => {
    const network = networkOf(requestAddress(address));
    const count = (open.get(network) ?? 1) - 1;
    if (count <= 0) open.delete(network);
    else open.set(network, count);
  };

  const behindProxy = trustFunction(config.trustProxy) !== false;
  if (!behindProxy) {
    // Directly reachable: the peer of a connection is the client.
    app.server.on('connection', (socket: Socket) => {
      const peer = socket.remoteAddress;
      if (peer === undefined) return;
      if (!acquire(peer)) return refuseConnection(socket);
      socket.once('close', () => release(peer));
    });
  }

  app.addHook('onRequest', (request, reply, done) => {
    if (behindProxy) {
      // Behind our proxies every connection comes from them: hold the client's address to its share by its requests in flight.
      if (!acquire(request.ip)) return void refuse(reply, 1);
      const ended = request.headers.upgrade ? request.raw.socket : reply.raw;
      ended.once('close', () => release(request.ip));
    }
    (request as unknown as Record<symbol, number>)[START_BYTES] = request.raw.socket?.bytesWritten ?? 0;
    if (config.rateLimit && request.headers.upgrade && request.url.startsWith('/ws')) {
      // A WebSocket connect is a request like any other.
      chargeAddress(services, request.ip).then(
        () => done(),
        (error: unknown) => void refuse(reply, (error as { data?: { retry_after?: number } }).data?.retry_after ?? 1, 'too many requests'),
      );
      return;
    }
    done();
  });

  if (config.rateLimit)
    app.addHook('onResponse', (request, _reply, done) => {
      const start = (request as unknown as Record<symbol, number | undefined>)[START_BYTES];
      const sent = start === undefined ? 0 : (request.raw.socket?.bytesWritten ?? start) - start;
      const extra = Math.floor(sent / ANSWER_BYTES_PER_REQUEST);
      if (extra > 0)
        void services.counters
          .hit(addressLimitKey(services, request.ip), config.rateLimitPerIp.windowSeconds, extra)
          .catch((err) => request.log.warn({ err }, 'charging an answer to its address failed'));
      done();
    });
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
