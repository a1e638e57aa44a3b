import type { Domain } from '../api/method.js';
import type { Core, Runtime } from '../services.js';
import { captchaVerifierFor, type CaptchaVerifier } from './captcha.js';
import { authRefresh, authSignin, authSignout, authTotpVerify, botsCreate, botsGetToken } from './methods.js';
import { PasswordHasher } from './passwords.js';
import { sweepSessions } from './sessions.js';

export { issueUserSessionIn, revokeAppSessionsIn, revokeFamily, type AppGrant, type SessionData } from './sessions.js';
export { signIn } from './signin.js';
export { completeTotpChallenge } from './totp.js';
export { announceSessionsRevoked } from './tokens.js';
export { Session } from './schemas.js';

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
