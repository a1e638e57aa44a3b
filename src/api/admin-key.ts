import type { Services } from '../services.js';
import { ApiError, Code, rateLimited } from './errors.js';
import { constantTimeEqual, sha256 } from '../infra/secrets.js';
import { addressKey } from '../infra/address-keys.js';
import { requestAddress } from '../infra/ip.js';

const FAILURE_WINDOW_SECONDS = 15 * 60;
const MAX_FAILURES_PER_IP = 20;

/** Short, non-reversible name of an admin key for the audit log. */
export function keyFingerprint(key: string): string {
  return sha256(key).slice(0, 12);
}

/**
 * Authorises an admin call by the X-Admin-Key header: no key configured answers 4, a wrong
 * key answers 1, and an address with too many wrong keys is refused with 7 before comparing.
 * Returns the key's fingerprint for the audit log.
 */
export async function checkAdminKey(
  services: Pick<Services, 'config' | 'counters'>,
  header: string | string[] | undefined,
  ip: string,
): Promise<string> {
  const configured = services.config.adminKey;
  if (!configured) throw new ApiError(Code.FORBIDDEN, 'the admin API is disabled: no admin key is configured');
  const failuresKey = addressKey('admin:fail', requestAddress(ip), services.config.addressSlots);
  // Each comparison holds a place first, in one atomic step: however many arrive at once, in
  // however many processes, at most MAX_FAILURES_PER_IP wrong keys are ever compared.
  const place = await services.counters.take(failuresKey, FAILURE_WINDOW_SECONDS, MAX_FAILURES_PER_IP);
  if (!place.taken) throw rateLimited(place.resetIn);
  const presented = typeof header === 'string' ? header : '';
  if (presented === '' || !constantTimeEqual(presented, configured)) throw new ApiError(Code.AUTH, 'wrong or missing admin key');
  await services.counters.hit(failuresKey, FAILURE_WINDOW_SECONDS, -1);
  return keyFingerprint(configured);
}
