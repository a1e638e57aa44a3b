import { isIP } from 'node:net';
import { sha256 } from './secrets.js';

/**
 * Counter names for per-address tables (request limits, sign-in failures, admin-key
 * failures): the one place that bounds them. An address counts by its network: IPv4 whole,
 * IPv6 by its /64 (one host holds a whole /64). Networks are then spread over a fixed
 * number of slots, so that however many distinct addresses a flood brings (or forges), each
 * table holds at most `slots` entries, in memory as in Redis. Two networks sharing a slot
 * share its counts: with the default 16,384 slots, a rare and harmless overlap.
 */
export const DEFAULT_ADDRESS_SLOTS = 16_384;

export function addressKey(namespace: string, ip: string, slots: number = DEFAULT_ADDRESS_SLOTS): string {
  return `${namespace}:${fnv1a(networkOf(ip)) % slots}`;
}

/** IPv4 as given; IPv6 as its first four groups (the /64). */
export function networkOf(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  const [head = '', tail] = ip.toLowerCase().split('%')[0]!.split('::') as [string, string | undefined];
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined ? headGroups : [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  return (
    groups
      .slice(0, 4)
      .map((g) => g.replace(/^0+(?=.)/, ''))
      .join(':') + '::/64'
  );
}

/** 32-bit FNV-1a: cheap, and spreads similar addresses apart. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** An e-mail address as counter names hold it: a hash, as counter names are seen by operators (Redis keys). */
export function emailKey(email: string): string {
  return sha256(email).slice(0, 32);
}
