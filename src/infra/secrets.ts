import * as crypto from 'node:crypto';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new opaque token: 32 random bytes, URL-safe base64 (256 bits). */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Hex SHA-256 of a text. Every signed-in request hashes its token: one call (Node ≥ 20.12) costs a third of a Hash object. */
export const sha256: (value: string) => string =
  typeof crypto.hash === 'function'
    ? (value) => crypto.hash('sha256', value, 'hex')
    : (value) => createHash('sha256').update(value).digest('hex');

/** Compares two secrets in time independent of where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right);
}
