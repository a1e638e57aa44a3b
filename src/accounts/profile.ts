import type { Static } from '@sinclair/typebox';
import { ApiError, Code, rateLimited } from '../api/errors.js';
import { dialectAdapter } from '../db/dialect.js';
import type { Services } from '../services.js';
import { announceUsersChanged, checkDomain, checkNick, loadProfiles, nickColumns, profileObject } from '../users/index.js';
import { flag, type Flag } from '../db/flags.js';
import type { AccountInfo as AccountInfoSchema } from './schemas.js';
import { explainCollision } from './unique.js';
import { findUser, getUser, readAccountBalance, updateUser } from './queries.js';

/** Nick changes a user may make per window. */
export const NICK_CHANGE_LIMIT = { max: 3, windowSeconds: 24 * 60 * 60 } as const;
/** Earlier nicks kept in `nicks_old`, newest last. */
export const NICKS_OLD_KEPT = 20;

export type AccountInfo = Static<typeof AccountInfoSchema>;

/** account.info: the caller's full profile plus what only they see. */
export async function accountInfo(services: Services, userId: number): Promise<AccountInfo> {
  const [profiles, account, balance] = await Promise.all([
    loadProfiles(services, [userId]),
    findUser(services.db.kysely, userId, ['email', 'email_verified', 'totp_secret', 'password_hash']),
    readAccountBalance(services.db.kysely, userId),
  ]);
  const profile = profiles.get(userId);
  if (!profile || !account) throw new ApiError(Code.USER_NOT_FOUND, 'the account no longer exists');
  const info: AccountInfo = {
    ...profileObject(services, profile, 'full'),
    email_verified: account.email_verified,
    hasTotp: account.totp_secret !== null ? 1 : 0,
    hasPassword: account.password_hash !== null ? 1 : 0,
    balance: balance / 100,
  };
  if (account.email !== null) info.email = account.email;
  return info;
}

export interface InfoChanges {
  nick?: string;
  gender?: number;
  domain?: string;
}

/**
 * account.updateInfo. One transaction with the user's row locked, so concurrent nick changes
 * each keep their predecessor in `nicks_old`; the unique index on the domain (whatever its
 * case) decides between users taking the same one at once. Every process forgets the
 * cached profile before this answers.
 */
export async function updateInfo(services: Services, userId: number, changes: InfoChanges): Promise<void> {
  const nick = changes.nick === undefined ? undefined : checkNick(changes.nick);
  const domain = changes.domain === undefined ? undefined : checkDomain(changes.domain);
  const { kysely } = services.db;
  const current = await findUser(kysely, userId, ['nick']);
  const nickChanges = nick !== undefined && nick !== current?.nick;
  let releaseNick: (() => Promise<unknown>) | undefined;
  if (nickChanges) {
    const key = `nick:changes:${userId}`;
    const hit = await services.counters.hit(key, NICK_CHANGE_LIMIT.windowSeconds);
    releaseNick = () => services.counters.hit(key, NICK_CHANGE_LIMIT.windowSeconds, -1);
    if (hit.count > NICK_CHANGE_LIMIT.max) {
      await releaseNick();
      throw rateLimited(hit.resetIn);
    }
  }
  try {
    await kysely.transaction().execute(async (trx) => {
      await dialectAdapter.lockUsers(trx, services.db.dialect, [userId]);
      const row = await getUser(trx, userId, ['nick', 'nicks_old', 'domain']);
      const columns: { nick?: string; nick_lower?: string; nicks_old?: string; gender?: Flag; domain?: string } = {};
      if (nick !== undefined && nick !== row.nick) {
        Object.assign(columns, nickColumns(nick));
        columns.nicks_old = JSON.stringify([...(JSON.parse(row.nicks_old) as string[]), row.nick].slice(-NICKS_OLD_KEPT));
      }
      if (changes.gender !== undefined) columns.gender = flag(changes.gender);
      if (domain !== undefined && domain !== row.domain) columns.domain = domain;
      if (Object.keys(columns).length > 0) await updateUser(trx, userId, columns);
    });
  } catch (error) {
    await releaseNick?.();
    explainCollision(error);
  }
  await announceUsersChanged(services, [userId]);
}
