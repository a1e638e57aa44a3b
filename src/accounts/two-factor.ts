import { Secret, TOTP } from 'otpauth';
import { ApiError, Code, badParam } from '../api/errors.js';
import { dialectAdapter } from '../db/dialect.js';
import {
  admitSecondFactorCheck,
  matchingSteps,
  readSecondFactor,
  replaceRecoveryCodes,
  requireCodeSent,
  spendSecondFactor,
  TOTP_PARAMETERS,
} from '../auth/index.js';
import { nowSeconds, type Services } from '../services.js';
import { confirmPassword } from './confirm-password.js';
import { endTwoFactor, enableTotp, getUser, setPendingTotp } from './queries.js';

const TOTP_ISSUER = 'game-platform';

const totpState = (description: string) => new ApiError(Code.TOTP_STATE, description);

/**
 * account.totpSetup: a new secret (160 bits), kept aside until account.totpEnable proves the
 * authenticator has it. Another call replaces it. 1606 when two-factor sign-in is on already.
 */
export async function totpSetup(services: Services, userId: number): Promise<{ secret: string; otpauth_uri: string }> {
  const { kysely } = services.db;
  const user = await getUser(kysely, userId, ['totp_secret', 'email', 'nick']);
  if (user.totp_secret !== null) throw totpState('two-factor sign-in is on already: switch it off first (account.totpDisable)');
  const secret = new Secret({ size: 20 });
  await setPendingTotp(kysely, userId, services.db.secrets.seal(secret.base32));
  const uri = new TOTP({ issuer: TOTP_ISSUER, label: user.email ?? user.nick, ...TOTP_PARAMETERS, secret }).toString();
  return { secret: secret.base32, otpauth_uri: uri };
}

/**
 * account.totpEnable: the authenticator's current code switches two-factor sign-in on with
 * the secret of account.totpSetup, and answers ten new recovery codes (stored hashed, each
 * usable once). Wrong codes count against the allowance of the account (7 past it).
 */
export async function totpEnable(services: Services, userId: number, rawCode: string): Promise<{ recovery_codes: string[] }> {
  const { kysely } = services.db;
  const user = await getUser(kysely, userId, ['totp_secret', 'totp_pending']);
  if (user.totp_secret !== null) throw totpState('two-factor sign-in is on already');
  if (user.totp_pending === null) throw totpState('no secret to confirm: call account.totpSetup first');
  // Sealed as stored: moved as it is to totp_secret, and the condition of the update.
  const pending = user.totp_pending;
  const code = rawCode.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(code)) throw badParam('code', 'must be 6 digits');
  const attempt = await admitSecondFactorCheck(services, userId);
  const steps = matchingSteps(services.db.secrets.open(pending), code, services.clock.now());
  if (steps.length === 0) throw new ApiError(Code.BAD_PARAM, 'parameter code: wrong code');
  const codes = await kysely.transaction().execute(async (trx) => {
    await dialectAdapter.lockUsers(trx, services.db.dialect, [userId]);
    // False when a concurrent setup replaced the secret, or a concurrent enable won.
    if (!(await enableTotp(trx, userId, pending, Math.max(...steps))))
      throw totpState('the secret changed meanwhile: call account.totpSetup again');
    return replaceRecoveryCodes(trx, userId);
  });
  await attempt.succeeded();
  return { recovery_codes: codes };
}

/**
 * account.totpDisable: the password and a code (authenticator or recovery) switch two-factor
 * sign-in off; the recovery codes go with it.
 */
export async function totpDisable(services: Services, userId: number, request: { password: string; code: string }): Promise<void> {
  await confirmPassword(services, userId, request.password);
  const { kysely } = services.db;
  const user = await getUser(kysely, userId, ['totp_secret', 'totp_last_step']);
  if (user.totp_secret === null) throw totpState('two-factor sign-in is off');
  requireCodeSent(request.code);
  const attempt = await admitSecondFactorCheck(services, userId);
  const factor = readSecondFactor(
    { totp_secret: services.db.secrets.open(user.totp_secret), totp_last_step: user.totp_last_step },
    request.code,
    services.clock.now(),
  );
  const now = nowSeconds(services);
  await kysely.transaction().execute(async (trx) => {
    await dialectAdapter.lockUsers(trx, services.db.dialect, [userId]);
    await spendSecondFactor(trx, userId, factor, now);
    await endTwoFactor(trx, userId, user.totp_secret!);
  });
  await attempt.succeeded();
}
