import type { Domain } from '../api/method.js';
import type { Core, Runtime } from '../services.js';
import { captchaVerifierFor, type CaptchaVerifier } from './captcha.js';
import { authRefresh, authSignin, authSignout, authTotpVerify, botsCreate, botsGetToken } from './methods.js';
import { PasswordHasher } from './passwords.js';
import { sweepSessions } from './sessions.js';

const SWEEP_EVERY_MS = 60 * 60 * 1000;

export const authDomain: Domain = {
  name: 'auth',
  methods: [authSignin, authTotpVerify, authRefresh, botsCreate, botsGetToken, authSignout],
};

export interface AuthRuntime extends Runtime {
  passwords: PasswordHasher;
  /** Decides captchas; null when none is configured (no captcha can pass). An embedding application may replace it. */
  captcha: CaptchaVerifier | null;
}

export async function startAuth(core: Core): Promise<AuthRuntime> {
  const passwords = new PasswordHasher();
  await passwords.prepareDummyHash();
  const sweeper = setInterval(() => {
    sweepSessions(core).catch((err) => core.log.warn({ err }, 'sweeping expired sessions failed'));
  }, SWEEP_EVERY_MS);
  sweeper.unref();
  return {
    passwords,
    captcha: captchaVerifierFor(core.config.captcha),
    stop: () => clearInterval(sweeper),
  };
}

// What the other folders use of this one.
export { admitSignup, SIGNUP_LIMITS } from './defence.js';
export { PasswordHasher } from './passwords.js';
export { endAllSessionsIn, endTotpChallenges, replacePasswordHash } from './queries.js';
export { Session } from './schemas.js';
export {
  admitSecondFactorCheck,
  readSecondFactor,
  RECOVERY_CODE_COUNT,
  replaceRecoveryCodes,
  requireCodeSent,
  spendSecondFactor,
} from './second-factor.js';
export type { SecondFactor } from './second-factor.js';
export { issueUserSessionIn, revokeAllSessions } from './sessions.js';
export type { SessionData } from './sessions.js';
export { announceSessionsRevoked, TokenResolver } from './tokens.js';
export type { ResolvedSession, SessionEnd } from './tokens.js';
export { matchingSteps, TOTP_PARAMETERS } from './totp.js';
