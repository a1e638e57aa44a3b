import { ApiError, Code, authError, badParam } from '../api/errors.js';
import type { Services } from '../services.js';
import { SIGNIN_LIMITS, admitAttempt, type Budget, type DefenceRequest } from './defence.js';
import { requestAddress } from '../infra/ip.js';
import { knownSource, rememberSource } from './known-sources.js';
import { addressKey, emailKey } from '../infra/address-keys.js';
import { captchaCheck } from './captcha.js';
import { emailLookupKey } from '../users/index.js';
import { needsRehash } from './passwords.js';
import type { Executor } from '../db/connection.js';
import { dialectAdapter } from '../db/dialect.js';
import { issueUserSessionIn, type SessionData } from './sessions.js';
import { startTotpChallenge } from './totp.js';
import { credentialsOf, replacePasswordHash, signinAccount } from './queries.js';

export const MIN_PASSWORD_LENGTH = 10;

export interface SigninRequest {
  email: string;
  password: string;
  captcha?: string;
  /** A device token an earlier sign-in of this account answered. */
  deviceToken?: string;
  ip: string;
  userAgent?: string;
}

export type SigninOutcome = SessionData | { totp_session_token: string };

/**
 * The budgets of a sign-in: per account (across all addresses) and per address, and, from
 * an address or device the account signed in from before, a budget of that source's own.
 */
export function signinDefence(
  email: string,
  ip: string,
  known: string | null,
  addressSlots?: number,
): Omit<DefenceRequest, 'captchaSolved'> {
  const account = emailKey(email);
  const window = SIGNIN_LIMITS.windowSeconds;
  const trusted: Budget | undefined = known
    ? { key: `auth:fail:known:${account}:${known}`, free: SIGNIN_LIMITS.knownSourceFailures, windowSeconds: window }
    : undefined;
  return {
    trusted,
    budgets: [
      { key: `auth:fail:email:${account}`, free: SIGNIN_LIMITS.captchaAfterEmailFailures, windowSeconds: window },
      {
        key: `auth:fail:email-hour:${account}`,
        free: SIGNIN_LIMITS.hourlyEmailFailures,
        windowSeconds: SIGNIN_LIMITS.ceilingWindowSeconds,
      },
      { key: addressKey('auth:fail:ip', ip, addressSlots), free: SIGNIN_LIMITS.captchaAfterIpFailures, windowSeconds: window },
    ],
    ceiling: {
      key: `auth:ceiling:email:${account}`,
      free: SIGNIN_LIMITS.ceilingEmailFailures,
      windowSeconds: SIGNIN_LIMITS.ceilingWindowSeconds,
    },
  };
}

/**
 * auth.signin. The order matters: cheap parameter checks, then the brute-force defence
 * (before any hashing), then exactly one password verification whether or not the e-mail
 * exists, and only after a right password anything that depends on the account's state.
 */
export async function signIn(services: Services, request: SigninRequest): Promise<SigninOutcome> {
  if (request.password.length < MIN_PASSWORD_LENGTH) throw badParam('password', `must be at least ${MIN_PASSWORD_LENGTH} characters`);
  const email = emailLookupKey(request.email);
  const ip = requestAddress(request.ip);
  const user = email === '' ? undefined : await signinAccount(services.db.kysely, email);

  const source = { ip, deviceToken: request.deviceToken };
  const known = user ? await knownSource(services, user.user_id, source) : null;
  // The defence and the account's own captcha mark may both ask: the verifier is asked once.
  const captchaSolved = captchaCheck(services, request.captcha, ip);
  const attempt = await admitAttempt(services, { ...signinDefence(email, ip, known, services.config.addressSlots), captchaSolved });
  const passwordRight = await services.auth.passwords.check(user?.password_hash, request.password);
  // Bots get their tokens from bots.getToken; for sign-in they do not exist.
  if (!user || !passwordRight || user.bot_owner_id !== null) {
    await attempt.failed();
    throw authError('wrong e-mail or password');
  }
  await attempt.succeeded();

  let passwordHash = user.password_hash!;
  if (needsRehash(passwordHash)) passwordHash = await upgradeHash(services, user.user_id, passwordHash, request.password);
  // Only a right password learns that the account wants a captcha: a wrong one answers 1 as for an unknown e-mail.
  if (user.captcha_always === 1 && !(await captchaSolved()))
    throw new ApiError(Code.CAPTCHA, 'captcha required: solve it and send the answer in the captcha parameter');
  if (user.global_ban === 1) throw new ApiError(Code.GLOBAL_BAN, 'the account is globally blocked');
  const checked = { email, passwordHash };
  const outcome = await services.db.kysely.transaction().execute(async (trx) => {
    await requireUnchangedCredentials(services, trx, user.user_id, checked);
    if (user.totp_secret) return { totp_session_token: await startTotpChallenge(services, user.user_id, ip, trx) };
    return issueUserSessionIn(services, trx, user.user_id, ip, undefined, request.userAgent);
  });
  if ('totp_session_token' in outcome) return outcome;
  return { ...outcome, device_token: await rememberSource(services, user.user_id, source) };
}

/**
 * Locks the user's row and checks that the e-mail and password just verified are still the
 * account's: a password or address change that committed while the password was being
 * checked (and ended every session) must not be outlived by a session it never saw.
 */
async function requireUnchangedCredentials(
  services: Services,
  trx: Executor,
  userId: number,
  checked: { email: string; passwordHash: string },
): Promise<void> {
  await dialectAdapter.lockUsers(trx, services.db.dialect, [userId]);
  const now = await credentialsOf(trx, userId);
  if (!now || now.email !== checked.email || now.password_hash !== checked.passwordHash) throw authError('wrong e-mail or password');
}

/** Re-hashes a password stored with weaker parameters, unless it was changed meanwhile; answers the hash now stored. */
async function upgradeHash(services: Services, userId: number, oldHash: string, password: string): Promise<string> {
  const newHash = await services.auth.passwords.hash(password);
  return (await replacePasswordHash(services.db.kysely, userId, oldHash, newHash)) ? newHash : oldHash;
}
