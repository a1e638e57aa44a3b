import type { Services } from '../services.js';
import type { Config } from '../config.js';

/** Decides whether the `captcha` value a client sent was solved by a human. */
export interface CaptchaVerifier {
  verify(response: string, remoteIp: string): Promise<boolean>;
}

/** The value the test verifier accepts. */
export const TEST_CAPTCHA_VALUE = 'test-pass';

/** Accepts `test-pass` and nothing else; only for development and tests. */
export const testCaptchaVerifier: CaptchaVerifier = {
  async verify(response) {
    return response === TEST_CAPTCHA_VALUE;
  },
};

const VERIFY_TIMEOUT_MS = 5000;

/**
 * The siteverify protocol spoken by reCAPTCHA, hCaptcha and Turnstile: POST `secret`,
 * `response` and `remoteip` form-encoded, read `success` from the JSON answer. Any failure
 * to get a clear yes (network error, timeout, malformed answer) counts as no.
 */
export function siteverifyCaptchaVerifier(verifyUrl: string, secret: string): CaptchaVerifier {
  return {
    async verify(response, remoteIp) {
      try {
        const answer = await fetch(verifyUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ secret, response, remoteip: remoteIp }).toString(),
          signal: AbortSignal.timeout(VERIFY_TIMEOUT_MS),
        });
        if (!answer.ok) return false;
        const body = (await answer.json()) as { success?: unknown };
        return body?.success === true;
      } catch {
        return false;
      }
    },
  };
}

/** Tries each verifier in turn; accepts when one accepts. */
function anyOf(verifiers: CaptchaVerifier[]): CaptchaVerifier {
  return {
    async verify(response, remoteIp) {
      for (const verifier of verifiers) if (await verifier.verify(response, remoteIp)) return true;
      return false;
    },
  };
}

/** The verifier the configuration asks for, or null when none is configured (no captcha can pass). */
export function captchaVerifierFor(config: Config['captcha']): CaptchaVerifier | null {
  const verifiers: CaptchaVerifier[] = [];
  if (config.testVerifier) verifiers.push(testCaptchaVerifier);
  if (config.verifyUrl && config.secret) verifiers.push(siteverifyCaptchaVerifier(config.verifyUrl, config.secret));
  if (verifiers.length === 0) return null;
  return verifiers.length === 1 ? verifiers[0]! : anyOf(verifiers);
}

/** Whether the captcha a request sent is solved; asked any number of times, it asks the verifier once. */
export type CaptchaCheck = () => Promise<boolean>;

/**
 * The captcha check of one request. Providers accept a solved captcha once, so a second
 * verification of the same value fails: every check of a request shares the first verdict.
 */
export function captchaCheck(services: Pick<Services, 'auth'>, response: string | undefined, ip: string): CaptchaCheck {
  let verdict: Promise<boolean> | undefined;
  return () => (verdict ??= captchaSolved(services, response, ip));
}

/** Whether `response` is a captcha the configured verifier accepts (never, without a verifier). */
async function captchaSolved(services: Pick<Services, 'auth'>, response: string | undefined, ip: string): Promise<boolean> {
  if (response === undefined || response === '') return false;
  const verifier = services.auth.captcha;
  return verifier !== null && (await verifier.verify(response, ip));
}
