// One namespace import: `crypto.hash` is looked up at run time, as Node before 20.12 lacks it.
import * as crypto from 'node:crypto';

/** A new opaque token: 32 random bytes, URL-safe base64 (256 bits). */
export function newToken(): string {
  return crypto.randomBytes(32).toString('base64url');
}

/** Hex SHA-256 of a text. Every signed-in request hashes its token: one call (Node ≥ 20.12) costs a third of a Hash object. */
export const sha256: (value: string) => string =
  typeof crypto.hash === 'function'
    ? (value) => crypto.hash('sha256', value, 'hex')
    : (value) => crypto.createHash('sha256').update(value).digest('hex');

/** Compares two secrets in time independent of where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = crypto.createHash('sha256').update(a).digest();
  const right = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(left, right);
}
