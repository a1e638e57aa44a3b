import { setTimeout as sleep } from 'node:timers/promises';
import { rateLimited } from '../api/errors.js';
import { dialectAdapter } from '../db/dialect.js';
import { requestAddress } from '../infra/ip.js';
import {
  admitSecondFactorCheck,
  announceSessionsRevoked,
  endAllSessionsIn,
  readSecondFactor,
  requireCodeSent,
  type SecondFactor,
  spendSecondFactor,
} from '../auth/index.js';
import { addressKey, emailKey } from '../infra/address-keys.js';
import { nowSeconds, type Services } from '../services.js';
import type { Executor } from '../db/connection.js';
import { badAccountToken, findAccountToken, issueAccountToken, retireOutstandingTokens, useAccountToken } from './account-tokens.js';
import { endTwoFactor, findUser, getUser, updateUser, userWithEmail } from './queries.js';
import { passwordResetMessage } from './messages.js';
import { checkNewPassword, normaliseEmail } from '../users/index.js';

/** Limits of auth.requestPasswordReset, per hour. */
export const RESET_REQUEST_LIMITS = { windowSeconds: 60 * 60, perAddress: 10, perEmail: 3 } as const;
/**
 * auth.requestPasswordReset answers no sooner than this many milliseconds after it began,
 * known address or not: the little work a known one costs more is hidden under it.
 */
export const RESET_ANSWER_MS = 250;

/**
 * auth.requestPasswordReset: when the address belongs to an account, a one-time token goes
 * there. The answer is the same, after the same time, whether it does or not; the limits
 * count the address asked about whether it exists or not.
 */
export async function requestPasswordReset(services: Services, request: { email: string; ip: string }): Promise<void> {
  const started = Date.now();
  const email = normaliseEmail(request.email);
  const { counters } = services;
  const { windowSeconds } = RESET_REQUEST_LIMITS;
  const [address, named] = await Promise.all([
    counters.hit(addressKey('reset:ip', requestAddress(request.ip), services.config.addressSlots), windowSeconds),
    counters.hit(`reset:email:${emailKey(email)}`, windowSeconds),
  ]);
  if (address.count > RESET_REQUEST_LIMITS.perAddress) throw rateLimited(address.resetIn);
  if (named.count > RESET_REQUEST_LIMITS.perEmail) throw rateLimited(named.resetIn);

  const user = await userWithEmail(services.db.kysely, email);
  if (user && user.bot_owner_id === null) {
    const now = nowSeconds(services);
    const token = await services.db.kysely
      .transaction()
      .execute((trx) => issueAccountToken(trx, { userId: user.user_id, purpose: 'reset_password', now }));
    services.mail.send(passwordResetMessage(email, token));
  }
  const rest = RESET_ANSWER_MS - (Date.now() - started);
  if (rest > 0) await sleep(rest);
}

/**
 * auth.resetPassword: a reset token, the new password and, for an account with two-factor
 * sign-in, its code (an authenticator code or a recovery code): a reset never goes around the
 * second factor of a confirmed address. Wrong codes count against the account's allowance (7
 * past it); a missing one answers 12 and does not count. The token proves the address: an
 * account whose address was never confirmed is asked no code, and its two-factor sign-in
 * (whoever switched it on) ends. The token, the code and the new password are used in one
 * transaction, which also ends the reset tokens and pending changes of address; every session
 * of the account ends, everywhere, before this answers.
 */
export async function resetPassword(services: Services, request: { token: string; password: string; code?: string }): Promise<void> {
  checkNewPassword(request.password);
  const { kysely } = services.db;
  const now = nowSeconds(services);
  const target = await findAccountToken(kysely, request.token, 'reset_password', now);
  const user = await findUser(kysely, target.user_id, ['totp_secret', 'totp_last_step', 'email_verified']);
  if (!user) throw badAccountToken();
  let factor: SecondFactor | undefined;
  let attempt: { succeeded(): Promise<void> } | undefined;
  if (user.totp_secret !== null && user.email_verified === 1) {
    requireCodeSent(request.code);
    attempt = await admitSecondFactorCheck(services, target.user_id);
    factor = readSecondFactor(
      { totp_secret: services.db.secrets.open(user.totp_secret), totp_last_step: user.totp_last_step },
      request.code,
      services.clock.now(),
    );
  }
  const passwordHash = await services.auth.passwords.hash(request.password);
  await kysely.transaction().execute(async (trx) => {
    const used = await useAccountToken(trx, request.token, 'reset_password', now);
    await dialectAdapter.lockUsers(trx, services.db.dialect, [used.user_id]);
    const current = await getUser(trx, used.user_id, ['totp_secret', 'email_verified']);
    // Two-factor sign-in set up on an address nobody confirmed goes (whoever set it up).
    if (current.email_verified === 0) await endTwoFactor(trx, used.user_id);
    else await checkSecondFactorUnchanged(trx, used.user_id, current.totp_secret, factor, now);
    await updateUser(trx, used.user_id, { password_hash: passwordHash, email_verified: 1 });
    await endAllSessionsIn(trx, used.user_id, now);
    await retireOutstandingTokens(trx, used.user_id, now);
  });
  await attempt?.succeeded();
  await announceSessionsRevoked(services, { userId: target.user_id });
}

/** Spends the code read before the transaction, if the account still has the two-factor sign-in it was read for. */
async function checkSecondFactorUnchanged(
  trx: Executor,
  userId: number,
  totpSecret: string | null,
  factor: SecondFactor | undefined,
  now: number,
): Promise<void> {
  // Two-factor sign-in was switched on after the code was read (or off), or the address was confirmed meanwhile: read it again.
  if ((totpSecret === null) !== (factor === undefined)) throw badAccountToken();
  if (factor !== undefined) await spendSecondFactor(trx, userId, factor, now);
}
