import { ApiError, Code, rateLimited } from '../api/errors.js';
import { sha256 } from '../infra/secrets.js';
import type { Services } from '../services.js';

/** Thresholds of the sign-in defence. */
export const SIGNIN_LIMITS = {
  /** Failures are counted in windows of this many seconds... */
  windowSeconds: 15 * 60,
  /** ...and past this many for one e-mail a captcha is required, */
  captchaAfterEmailFailures: 5,
  /** or past this many from one address. */
  captchaAfterIpFailures: 20,
  /** Past this many failures for one e-mail in an hour, sign-in is refused outright (code 7). */
  ceilingEmailFailures: 100,
  ceilingWindowSeconds: 60 * 60,
} as const;

export interface SigninAttempt {
  /** The password was right: the attempt does not count as a failure. */
  succeeded(): Promise<void>;
}

interface Counter {
  key: string;
  windowSeconds: number;
}

/**
 * Admits a sign-in attempt before any password hashing, or refuses it with 7 (hard ceiling)
 * or 8 (captcha needed and not solved).
 *
 * Each attempt is counted as a failure up front and released when the password proves
 * right (or the attempt is refused before the password is checked). Counting first makes the
 * thresholds hold under concurrency: a burst of simultaneous guesses sees its own members,
 * so at most the allowed number of them ever reach the password check without a captcha.
 */
export async function admitSignin(
  services: Services,
  attempt: { email: string; ip: string; captcha?: string; captchaAlways: boolean },
): Promise<SigninAttempt> {
  const { counters } = services;
  // E-mail addresses stay out of counter names (Redis keys are visible to operators).
  const emailKey = sha256(attempt.email).slice(0, 32);
  const email: Counter = { key: `auth:fail:email:${emailKey}`, windowSeconds: SIGNIN_LIMITS.windowSeconds };
  const hourly: Counter = { key: `auth:fail:email-hour:${emailKey}`, windowSeconds: SIGNIN_LIMITS.ceilingWindowSeconds };
  const address: Counter = { key: `auth:fail:ip:${attempt.ip}`, windowSeconds: SIGNIN_LIMITS.windowSeconds };
  const reserved = [email, hourly, address];

  const [emailHit, hourlyHit, addressHit] = await Promise.all(reserved.map((c) => counters.hit(c.key, c.windowSeconds)));
  const release = async () => {
    await Promise.all(reserved.map((c) => counters.hit(c.key, c.windowSeconds, -1)));
  };

  if (hourlyHit!.count > SIGNIN_LIMITS.ceilingEmailFailures) {
    await release();
    throw rateLimited(hourlyHit!.resetIn);
  }
  const captchaNeeded =
    attempt.captchaAlways ||
    emailHit!.count > SIGNIN_LIMITS.captchaAfterEmailFailures ||
    addressHit!.count > SIGNIN_LIMITS.captchaAfterIpFailures;
  if (captchaNeeded && !(await captchaSolved(services, attempt.captcha, attempt.ip))) {
    await release();
    throw new ApiError(Code.CAPTCHA, 'captcha required: solve it and send the answer in the captcha parameter');
  }
  return { succeeded: release };
}

async function captchaSolved(services: Services, response: string | undefined, ip: string): Promise<boolean> {
  if (response === undefined || response === '') return false;
  const verifier = services.auth.captcha;
  return verifier !== null && (await verifier.verify(response, ip));
}
