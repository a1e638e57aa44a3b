import { ApiError, Code } from '../api/errors.js';
import { requestAddress } from '../infra/ip.js';
import { admitSignup, issueUserSessionIn, type SessionData } from '../auth/index.js';
import { emailKey } from '../infra/address-keys.js';
import { nowSeconds, type Services } from '../services.js';
import { announceUsersChanged, checkDomain, checkNewPassword, checkNick, nickColumns, normaliseEmail } from '../users/index.js';
import { issueAccountToken } from './account-tokens.js';
import { addressTakenMessage, verifyEmailMessage } from './messages.js';
import { collision, domainTaken, emailTaken, explainCollision } from './unique.js';
import { domainIsTaken, insertUser, userWithEmail } from './queries.js';

export interface SignupRequest {
  email: string;
  password: string;
  nick: string;
  domain?: string;
  captcha?: string;
  ip: string;
  userAgent?: string;
}

/** The owner of an address someone tried to sign up with is told at most once per this many seconds. */
const TAKEN_NOTICE_EVERY = 60 * 60;

/**
 * auth.signup: creates the account, answers its first Session and sends the address a
 * confirmation token. A taken address or domain answers 1601 or 1602 and creates nothing;
 * the unique indexes decide between concurrent sign-ups, so exactly one of them wins. The
 * owner of a taken address is told by e-mail that someone tried.
 */
export async function signUp(services: Services, request: SignupRequest): Promise<SessionData> {
  if (services.config.accounts.signup === 'closed') throw new ApiError(Code.SIGNUP_CLOSED, 'sign-up is closed on this server');
  const email = normaliseEmail(request.email);
  checkNewPassword(request.password);
  const nick = checkNick(request.nick);
  const domain = request.domain === undefined || request.domain === '' ? undefined : checkDomain(request.domain);
  const ip = requestAddress(request.ip);
  await admitSignup(services, { email, ip, captcha: request.captcha });

  const { kysely } = services.db;
  if (await userWithEmail(kysely, email)) return refuseTakenAddress(services, email);
  if (domain !== undefined && (await domainIsTaken(kysely, domain))) throw domainTaken();

  const passwordHash = await services.auth.passwords.hash(request.password);
  const now = nowSeconds(services);
  let created: { session: SessionData; token: string };
  try {
    created = await kysely.transaction().execute(async (trx) => {
      const userId = await insertUser(trx, {
        email,
        password_hash: passwordHash,
        totp_secret: null,
        totp_last_step: null,
        bot_owner_id: null,
        ...nickColumns(nick),
        domain: domain ?? null,
        created_at: now,
      });
      const token = await issueAccountToken(trx, { userId, purpose: 'verify_email', email, now });
      const session = await issueUserSessionIn(services, trx, userId, ip, undefined, request.userAgent);
      return { session, token };
    });
  } catch (error) {
    if (collision(error) === 'email') return refuseTakenAddress(services, email);
    explainCollision(error);
  }
  services.mail.send(verifyEmailMessage(services, email, created.token));
  // Caches may hold the new id or domain as "no such user".
  await announceUsersChanged(services, [created.session.user_id]);
  return created.session;
}

async function refuseTakenAddress(services: Services, email: string): Promise<never> {
  const notice = await services.counters.hit(`signup:told:${emailKey(email)}`, TAKEN_NOTICE_EVERY);
  if (notice.count === 1) services.mail.send(addressTakenMessage(email));
  throw emailTaken();
}
