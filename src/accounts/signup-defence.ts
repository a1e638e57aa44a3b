import { ApiError, Code, rateLimited } from '../api/errors.js';
import { sha256 } from '../infra/secrets.js';
import type { Services } from '../services.js';

/** Thresholds of the sign-up defence, per hour. */
export const SIGNUP_LIMITS = {
  windowSeconds: 60 * 60,
  /** Past this many sign-ups from one address, a captcha is required (when a verifier is configured)... */
  captchaAfterAddressAttempts: 3,
  /** ...and past this many, sign-up from that address is refused outright (code 7). */
  ceilingAddressAttempts: 20,
  /** Sign-ups naming one e-mail address (each may tell its owner): past this, code 7. */
  ceilingEmailAttempts: 10,
} as const;

/**
 * Admits a sign-up attempt, counted up front per address and per e-mail so that a burst sees
 * its own members, or refuses it with 7 (ceiling) or 8 (captcha needed and not solved).
 * Without a captcha verifier configured, no captcha is asked for and the ceilings alone apply.
 */
export async function admitSignup(services: Services, attempt: { email: string; ip: string; captcha?: string }): Promise<void> {
  const { counters } = services;
  const window = SIGNUP_LIMITS.windowSeconds;
  // E-mail addresses stay out of counter names (Redis keys are visible to operators).
  const [address, email] = await Promise.all([
    counters.hit(`signup:ip:${attempt.ip}`, window),
    counters.hit(`signup:email:${sha256(attempt.email).slice(0, 32)}`, window),
  ]);
  if (address.count > SIGNUP_LIMITS.ceilingAddressAttempts) throw rateLimited(address.resetIn);
  if (email.count > SIGNUP_LIMITS.ceilingEmailAttempts) throw rateLimited(email.resetIn);
  const verifier = services.auth.captcha;
  if (verifier === null || address.count <= SIGNUP_LIMITS.captchaAfterAddressAttempts) return;
  const solved = attempt.captcha !== undefined && attempt.captcha !== '' && (await verifier.verify(attempt.captcha, attempt.ip));
  if (!solved) throw new ApiError(Code.CAPTCHA, 'captcha required: solve it and send the answer in the captcha parameter');
}
