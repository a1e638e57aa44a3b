import { ApiError, Code, badParam } from '../api/errors.js';
import { newToken, sha256 } from '../infra/secrets.js';
import { matchingSteps } from './totp-codes.js';
import type { Executor } from '../db/connection.js';
import { nowSeconds, type Services } from '../services.js';
import { TOTP_LIMITS } from './defence.js';
import { requestAddress } from '../infra/ip.js';
import { rememberSource } from './known-sources.js';
import { recoveryCodeForm, spendSecondFactor, type SecondFactor } from './second-factor.js';
import { issueUserSessionIn, type SessionData } from './sessions.js';
import { countTotpAttempt, findTotpChallenge, insertTotpChallenge, totpAccount, totpChallengeUse, useTotpChallenge } from './queries.js';

/** Lifetime of a totp_session_token, seconds. */
export const TOTP_CHALLENGE_TTL = 5 * 60;
/** Wrong codes a totp_session_token survives. */
export const TOTP_MAX_FAILURES = 5;

export { TOTP_PARAMETERS, matchingSteps } from './totp-codes.js';

const WRONG_CODE = 'parameter code: wrong code';
const BAD_CHALLENGE = 'the totp_session_token is unknown, used or expired';

/** Issues the token of the second sign-in step for a user whose password was right. */
export async function startTotpChallenge(
  services: Services,
  userId: number,
  ip: string,
  executor: Executor = services.db.kysely,
): Promise<string> {
  const token = newToken();
  const now = nowSeconds(services);
  await insertTotpChallenge(executor, {
    challenge_hash: sha256(token),
    user_id: userId,
    ip: requestAddress(ip),
    expires_at: now + TOTP_CHALLENGE_TTL,
    created_at: now,
  });
  return token;
}

/**
 * Completes a sign-in with its TOTP code. Every attempt is counted before the code is
 * checked (a conditional update, so concurrent guesses cannot exceed the allowance), and the
 * time step of an accepted code is recorded on the user: no code of that step or an earlier
 * one is accepted again.
 */
export async function completeTotpChallenge(
  services: Services,
  token: string,
  rawCode: string,
  ip: string,
  userAgent?: string,
  deviceToken?: string,
): Promise<SessionData> {
  const { kysely } = services.db;
  const hash = sha256(token);
  const now = nowSeconds(services);
  const challenge = await findTotpChallenge(kysely, hash);
  if (!challenge || challenge.used_at !== null || challenge.expires_at <= now) throw new ApiError(Code.BAD_TOTP_SESSION, BAD_CHALLENGE);
  if (services.config.bindTokensToIp && challenge.ip !== null && challenge.ip !== requestAddress(ip))
    throw new ApiError(Code.BAD_TOTP_SESSION, BAD_CHALLENGE);
  if (challenge.failures >= TOTP_MAX_FAILURES) throw tooOften();

  if (!(await countTotpAttempt(kysely, hash, TOTP_MAX_FAILURES))) {
    // Concurrent attempts used the allowance up, or one of them succeeded.
    const after = await totpChallengeUse(kysely, hash);
    throw after?.used_at === null ? tooOften() : new ApiError(Code.BAD_TOTP_SESSION, BAD_CHALLENGE);
  }

  const user = await totpAccount(kysely, challenge.user_id);
  // The account lost its TOTP secret (or was deleted) since the password step.
  if (!user?.totp_secret) throw new ApiError(Code.BAD_TOTP_SESSION, BAD_CHALLENGE);
  // Wrong codes (recovery codes included) are counted per account too: a right password mints new challenges at will.
  const accountKey = `auth:totp:user:${challenge.user_id}`;
  const place = await services.counters.take(accountKey, TOTP_LIMITS.windowSeconds, TOTP_LIMITS.wrongCodes);
  if (!place.taken) throw tooOften(place.resetIn);
  const wrong = (): ApiError => {
    if (place.count === TOTP_LIMITS.wrongCodes)
      services.log.warn(
        { event: 'totp_guessing', user_id: challenge.user_id, ip: requestAddress(ip) },
        `${TOTP_LIMITS.wrongCodes} wrong TOTP codes for one account within ${TOTP_LIMITS.windowSeconds / 60} minutes: its second factor is being guessed; TOTP sign-in is refused until the window ends`,
      );
    return new ApiError(Code.BAD_PARAM, WRONG_CODE);
  };
  // A recovery code stands in for the authenticator's code, once.
  const recovery = recoveryCodeForm(rawCode);
  let factor: SecondFactor;
  if (recovery !== null) factor = { kind: 'recovery', code: recovery };
  else {
    const code = rawCode.replace(/\s+/g, '');
    if (!/^\d{6}$/.test(code)) {
      await services.counters.hit(accountKey, TOTP_LIMITS.windowSeconds, -1);
      throw badParam('code', 'must be 6 digits (or a recovery code)');
    }
    const lastStep = user.totp_last_step;
    const steps = matchingSteps(services.db.secrets.open(user.totp_secret), code, services.clock.now()).filter(
      (s) => lastStep === null || s > lastStep,
    );
    if (steps.length === 0) throw wrong();
    factor = { kind: 'totp', step: Math.max(...steps) };
  }
  if (user.global_ban === 1) throw new ApiError(Code.GLOBAL_BAN, 'the account is globally blocked');

  const session = await kysely.transaction().execute(async (trx) => {
    // A concurrent sign-in accepted this code (or a later one, or used this recovery code) first: 2.
    try {
      await spendSecondFactor(trx, challenge.user_id, factor, now);
    } catch (error) {
      if (error instanceof ApiError && error.code === Code.BAD_PARAM && factor.kind === 'recovery') throw wrong();
      throw error;
    }
    if (!(await useTotpChallenge(trx, hash, now))) throw new ApiError(Code.BAD_TOTP_SESSION, BAD_CHALLENGE);
    return issueUserSessionIn(services, trx, challenge.user_id, ip, undefined, userAgent);
  });
  await services.counters.hit(accountKey, TOTP_LIMITS.windowSeconds, -1);
  return { ...session, device_token: await rememberSource(services, challenge.user_id, { ip: requestAddress(ip), deviceToken }) };
}

function tooOften(retryAfter?: number): ApiError {
  if (retryAfter !== undefined)
    return new ApiError(Code.TOTP_TOO_OFTEN, `too many wrong codes for this account: try again in ${retryAfter} seconds`);
  return new ApiError(Code.TOTP_TOO_OFTEN, `too many wrong codes: this totp_session_token is spent, sign in again`);
}
