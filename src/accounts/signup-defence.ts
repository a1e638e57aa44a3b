import { rateLimited } from '../api/errors.js';
import { admitAttempt } from '../auth/defence.js';
import { sha256 } from '../infra/secrets.js';
import type { Services } from '../services.js';

/** Thresholds of the sign-up defence, per hour. */
export const SIGNUP_LIMITS = {
  windowSeconds: 60 * 60,
  /** Past this many sign-ups from one address, a captcha is required (without a verifier, a growing delay)... */
  captchaAfterAddressAttempts: 3,
  /** ...and past this many, sign-up from that address is refused outright (code 7). */
  ceilingAddressAttempts: 20,
  /** Sign-ups naming one e-mail address (each may tell its owner): past this, code 7. */
  ceilingEmailAttempts: 10,
} as const;

/**
 * Admits a sign-up attempt under the rules of the sign-in defence (src/auth/defence.ts): a
 * budget per client address, past which a solved captcha is needed (or, without a captcha
 * verifier, a delay that doubles), and a ceiling (code 7). Every admitted sign-up spends its
 * place, whatever its outcome: accounts are what is limited, not wrong guesses. Sign-ups
 * naming one e-mail address are capped too (each may mail its owner).
 */
export async function admitSignup(services: Services, attempt: { email: string; ip: string; captcha?: string }): Promise<void> {
  const window = SIGNUP_LIMITS.windowSeconds;
  const named = await services.counters.hit(`signup:email:${sha256(attempt.email).slice(0, 32)}`, window);
  if (named.count > SIGNUP_LIMITS.ceilingEmailAttempts) throw rateLimited(named.resetIn);
  const admitted = await admitAttempt(services, {
    budgets: [{ key: `signup:ip:${attempt.ip}`, free: SIGNUP_LIMITS.captchaAfterAddressAttempts, windowSeconds: window }],
    ceiling: { key: `signup:ip-ceiling:${attempt.ip}`, free: SIGNUP_LIMITS.ceilingAddressAttempts, windowSeconds: window },
    captcha: attempt.captcha,
    ip: attempt.ip,
  });
  await admitted.failed();
}
