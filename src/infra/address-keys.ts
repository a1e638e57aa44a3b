import { createHmac } from 'node:crypto';
import { isIP } from 'node:net';
import { sha256 } from './secrets.js';

/**
 * Counter names for per-address tables (request limits, sign-in and sign-up budgets, admin-key
 * failures, password-reset requests): the one place that bounds them. An address counts by its
 * network: IPv4 whole, IPv6 by its /64 (one host holds a whole /64). Networks are then spread
 * over a fixed number of slots, so that however many distinct addresses a flood brings (or
 * forges), each table holds at most `slots` entries, in memory as in Redis.
 *
 * The spreading is an HMAC keyed with a secret of the deployment (derived from its secret key,
 * so every process of it agrees): two networks may still share a slot by chance, but nobody
 * without the key can tell which, so nobody can pick addresses that spend a chosen address's
 * budget.
 */
export const DEFAULT_ADDRESS_SLOTS = 16_384;

export class AddressKeys {
  readonly #secret: Buffer;

  constructor(
    secret: Buffer,
    readonly slots: number = DEFAULT_ADDRESS_SLOTS,
  ) {
    this.#secret = Buffer.from(secret);
  }

  /** The counter name of `ip`'s network in the table `namespace`. */
  of(namespace: string, ip: string): string {
    return `${namespace}:${this.slotOf(networkOf(ip))}`;
  }

  private slotOf(network: string): number {
    return createHmac('sha256', this.#secret).update(network).digest().readUInt32BE(0) % this.slots;
  }
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

/** An e-mail address as counter names hold it: a hash, as counter names are seen by operators (Redis keys). */
export function emailKey(email: string): string {
  return sha256(email).slice(0, 32);
}
