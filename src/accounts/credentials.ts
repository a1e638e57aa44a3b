import { badParam, rateLimited } from '../api/errors.js';
import { emailKey } from '../infra/address-keys.js';
import { dialectAdapter } from '../db/dialect.js';
import { requestAddress } from '../infra/ip.js';
import { announceSessionsRevoked, endAllSessionsIn, issueUserSessionIn, replacePasswordHash, type SessionData } from '../auth/index.js';
import { nowSeconds, type Services } from '../services.js';
import { issueAccountToken, retireOutstandingTokens, useAccountToken } from './account-tokens.js';
import { getUser, retireAccountTokens, updateUser, userWithEmail } from './queries.js';
import { confirmPassword, wrongPassword } from './confirm-password.js';
import { emailChangedMessage, emailChangingMessage, verifyEmailMessage } from './messages.js';
import { checkNewPassword, normaliseEmail } from '../users/index.js';
import { emailTaken, explainCollision } from './unique.js';

/**
 * account.updatePassword: checks the current password, sets the new one, ends every
 * session of the account (this one included), its reset tokens and pending changes of
 * address, and answers a new Session, all in one transaction that finds the password as it
 * was checked: of two concurrent changes one wins.
 */
export async function updatePassword(
  services: Services,
  request: { userId: number; current: string; next: string; ip: string; userAgent?: string },
): Promise<SessionData> {
  checkNewPassword(request.next, 'password_new');
  const checkedHash = await confirmPassword(services, request.userId, request.current);
  const newHash = await services.auth.passwords.hash(request.next);
  const now = nowSeconds(services);
  const session = await services.db.kysely.transaction().execute(async (trx) => {
    await dialectAdapter.lockUsers(trx, services.db.dialect, [request.userId]);
    if (!(await replacePasswordHash(trx, request.userId, checkedHash, newHash))) throw wrongPassword();
    await endAllSessionsIn(trx, request.userId, now);
    await retireOutstandingTokens(trx, request.userId, now);
    return issueUserSessionIn(services, trx, request.userId, requestAddress(request.ip), undefined, request.userAgent);
  });
  await announceSessionsRevoked(services, { userId: request.userId });
  return session;
}

/**
 * Limits of account.updateEmail, per hour: requests of one account, whatever they answer, and
 * requests naming one address that the account's limit let through. They bound the mail an
 * account can have sent to addresses of its choosing, and how many addresses it can learn are
 * taken (1601), as sign-up does. An account past its own limit uses up no address's.
 */
export const EMAIL_CHANGE_LIMITS = { windowSeconds: 60 * 60, perAccount: 5, perEmail: 3 } as const;

/**
 * account.updateEmail: after the password is checked, a token goes to the new address and a
 * notice to the old one; the address changes when the token comes back (account.verifyEmail).
 * Sent again for the current, unconfirmed address, it sends a new confirmation.
 */
export async function updateEmail(services: Services, request: { userId: number; email: string; password: string }): Promise<void> {
  const email = normaliseEmail(request.email);
  await confirmPassword(services, request.userId, request.password);
  const { counters } = services;
  const { windowSeconds } = EMAIL_CHANGE_LIMITS;
  const account = await counters.hit(`email-change:user:${request.userId}`, windowSeconds);
  if (account.count > EMAIL_CHANGE_LIMITS.perAccount) throw rateLimited(account.resetIn);
  const named = await counters.take(`email-change:email:${emailKey(email)}`, windowSeconds, EMAIL_CHANGE_LIMITS.perEmail);
  if (!named.taken) throw rateLimited(named.resetIn);
  const { kysely } = services.db;
  const user = await getUser(kysely, request.userId, ['email', 'email_verified']);
  if (user.email === email && user.email_verified === 1) throw badParam('email', 'is already the confirmed address of the account');
  const owner = await userWithEmail(kysely, email);
  if (owner && owner.user_id !== request.userId) throw emailTaken();
  const now = nowSeconds(services);
  const token = await kysely
    .transaction()
    .execute((trx) => issueAccountToken(trx, { userId: request.userId, purpose: 'verify_email', email, now }));
  services.mail.send(verifyEmailMessage(services, email, token));
  if (user.email !== null && user.email !== email) services.mail.send(emailChangingMessage(user.email, email));
}

/**
 * account.verifyEmail: the token names an account and an address; the address becomes the
 * account's, confirmed. Password-reset tokens sent to an earlier address stop working. When
 * another account took the address meanwhile, 1601 (the token stays unused).
 */
export async function verifyEmail(services: Services, token: string): Promise<void> {
  const now = nowSeconds(services);
  let previous: { userId: number; email: string | null; confirmed: string } | undefined;
  try {
    previous = await services.db.kysely.transaction().execute(async (trx) => {
      const used = await useAccountToken(trx, token, 'verify_email', now);
      await dialectAdapter.lockUsers(trx, services.db.dialect, [used.user_id]);
      const user = await getUser(trx, used.user_id, ['email']);
      const confirmed = used.email ?? user.email!;
      await updateUser(trx, used.user_id, { email: confirmed, email_verified: 1 });
      if (user.email !== confirmed) await retireAccountTokens(trx, used.user_id, 'reset_password', now);
      return { userId: used.user_id, email: user.email, confirmed };
    });
  } catch (error) {
    explainCollision(error);
  }
  if (previous.email !== null && previous.email !== previous.confirmed)
    services.mail.send(emailChangedMessage(previous.email, previous.confirmed));
}
