import { BlockList, isIP } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { normalizeIp } from '../infra/ip.js';
import { Code } from './errors.js';

/**
 * Which proxies in front of the server are ours: none (false), a number of hops (`true` is
 * one), or a list of proxy addresses and CIDR ranges.
 */
export type TrustProxy = boolean | number | string[];

/** Reads `--trust-proxy`'s value: on/off, a hop count, or addresses/CIDRs separated by commas. Throws a message on anything else. */
export function parseTrustProxy(text: string): TrustProxy {
  const value = text.trim().toLowerCase();
  if (['on', 'true', 'yes'].includes(value)) return true;
  if (['off', 'false', 'no', '0'].includes(value)) return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 16) throw new Error('at most 16 hops');
    return hops;
  }
  const entries = value
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) throw new Error('expected on, a hop count, or proxy addresses/CIDRs');
  for (const entry of entries) if (!validProxyEntry(entry)) throw new Error(`"${entry}" is neither an IP address nor a CIDR range`);
  return entries;
}

function validProxyEntry(entry: string): boolean {
  const [address, prefix, extra] = entry.split('/');
  if (extra !== undefined || !address) return false;
  const version = isIP(address);
  if (version === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d+$/.test(prefix)) return false;
  return Number(prefix) <= (version === 4 ? 32 : 128);
}

/**
 * The trust function given to Fastify: `i` counts hops from the socket (0 is the peer). The
 * client's address is then the rightmost X-Forwarded-For entry that is not one of our
 * proxies; whatever a client writes to the left of it is never read.
 */
export function trustFunction(trust: TrustProxy): false | ((address: string, hop: number) => boolean) {
  if (trust === false || trust === 0) return false;
  if (trust === true) return (_address, hop) => hop < 1;
  if (typeof trust === 'number') return (_address, hop) => hop < trust;
  const proxies = new BlockList();
  for (const entry of trust) {
    const [address, prefix] = entry.split('/') as [string, string | undefined];
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) proxies.addAddress(address, type);
    else proxies.addSubnet(address, Number(prefix), type);
  }
  return (address) => {
    const normalized = normalizeIp(address);
    if (normalized === null) return false;
    const type = isIP(normalized) === 6 ? 'ipv6' : 'ipv4';
    return proxies.check(normalized, type) || (type === 'ipv4' && proxies.check(`::ffff:${normalized}`, 'ipv6'));
  };
}

/**
 * Behind a proxy, a request whose client address (as the trusted proxies tell it) is not an
 * IP address is refused with code 2 (HTTP 200, as every code 2) before anything else: nothing downstream (limits,
 * token binding, the audit log) ever sees such a value. The check, for the server's request
 * hook (and, `beforeRouting`, for the requests Fastify answers before routing them, its
 * `frameworkErrors`): false when it refused (answered) the request; undefined when no proxy is
 * trusted.
 */
export function clientAddressCheck(
  trust: TrustProxy,
  { beforeRouting = false } = {},
): ((request: FastifyRequest, reply: FastifyReply) => boolean) | undefined {
  const trusted = trustFunction(trust);
  if (trusted === false) return undefined;
  // Before routing, Fastify's request.ip is the peer's: the address is read as Fastify reads it for every other request.
  const addressOf = beforeRouting ? (request: FastifyRequest) => proxyAddr(request.raw, trusted) : (request: FastifyRequest) => request.ip;
  return (request, reply) => {
    // Read once: Fastify's getter parses X-Forwarded-For again on every read, and the limits,
    // the transport and the logs each read it.
    const ip = addressOf(request);
    Object.defineProperty(request, 'ip', { value: ip, enumerable: true });
    if (normalizeIp(ip) !== null) return true;
    void reply
      .header('connection', 'close')
      .send({ code: Code.BAD_PARAM, description: 'X-Forwarded-For: the client address is not an IP address' });
    return false;
  };
}
