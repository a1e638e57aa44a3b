import { Secret, TOTP } from 'otpauth';
import { constantTimeEqual } from '../infra/secrets.js';

/** RFC 6238 as the reference service uses it. */
export const TOTP_PARAMETERS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
/** Steps of clock drift accepted either way. */
const DRIFT_STEPS = 1;

/** The time steps, within the accepted drift of `nowMs`, whose code equals `code`. */
export function matchingSteps(secretBase32: string, code: string, nowMs: number): number[] {
  const secret = Secret.fromBase32(secretBase32);
  const current = Math.floor(nowMs / 1000 / TOTP_PARAMETERS.period);
  const steps: number[] = [];
  for (let step = current - DRIFT_STEPS; step <= current + DRIFT_STEPS; step++) {
    const expected = TOTP.generate({ ...TOTP_PARAMETERS, secret, timestamp: step * TOTP_PARAMETERS.period * 1000 });
    if (constantTimeEqual(expected, code)) steps.push(step);
  }
  return steps;
}
