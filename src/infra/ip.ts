import { isIP } from 'node:net';

const V4_MAPPED_DOTTED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;
const V4_MAPPED_HEX = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;

/**
 * One spelling per address, so that a token bound to an address matches however the
 * address was written: IPv6 in lower case and compressed, IPv4-mapped IPv6 as plain IPv4.
 * Returns null for anything that is not an IP address.
 */
export function normalizeIp(value: string): string | null {
  const text = value.trim();
  const version = isIP(text);
  // isIP takes IPv4 only in its one spelling (decimal, no leading zeros).
  if (version === 4) return text;
  if (version !== 6) return null;
  const dotted = V4_MAPPED_DOTTED.exec(text);
  if (dotted) return normalizeIp(dotted[1]!);
  // Zone ids (fe80::1%eth0) cannot go through the URL parser; they only ever match themselves.
  if (text.includes('%')) return text.toLowerCase();
  const canonical = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  const hex = V4_MAPPED_HEX.exec(canonical);
  if (hex) {
    const high = parseInt(hex[1]!, 16);
    const low = parseInt(hex[2]!, 16);
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  return canonical;
}

/** The address of a request in normalized form (falls back to the raw value). */
export function requestAddress(ip: string): string {
  return normalizeIp(ip) ?? ip;
}
