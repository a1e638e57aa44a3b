import { ApiError, Code, badParam } from '../api/errors.js';
import type { Caller } from '../api/method.js';
import { nowSeconds, type Services } from '../services.js';
import { dialectAdapter } from '../db/dialect.js';
import { announceUsersChanged, checkNick, nickColumns } from '../users/index.js';
import { normalizeIp, requestAddress } from '../infra/ip.js';
import { issueBotSession, type SessionData } from './sessions.js';
import { botOwner, countBots, insertUser } from './queries.js';

/**
 * bots.getToken: a new token for one of the caller's bots, bound to `ip` (default: the
 * caller's address). Every earlier token of the bot stops working.
 */
export async function issueBotToken(
  services: Services,
  caller: Caller,
  request: { botId: number; ip?: string; callerIp: string },
): Promise<SessionData> {
  let ip: string;
  if (request.ip === undefined || request.ip.trim() === '') ip = requestAddress(request.callerIp);
  else {
    const normalized = normalizeIp(request.ip);
    if (normalized === null) throw badParam('ip', 'must be an IPv4 or IPv6 address');
    ip = normalized;
  }
  const bot = await botOwner(services.db.kysely, request.botId);
  // Someone else's bot answers exactly as a missing one: ownership is not disclosed.
  if (!bot || bot.bot_owner_id !== caller.userId) throw new ApiError(Code.BOT_NOT_FOUND, 'bot does not exist');
  return issueBotSession(services, request.botId, ip);
}

/**
 * bots.create: a bot owned by the caller, under the nick rules of sign-up. The owner's row
 * is locked while its bots are counted and the new one written, so concurrent calls never
 * pass `bots.perOwner` together (SQLite runs one transaction at a time).
 */
export async function createBot(services: Services, caller: Caller, nickParam: string): Promise<{ user_id: number }> {
  const nick = checkNick(nickParam);
  const limit = services.config.bots.perOwner;
  const userId = await services.db.kysely.transaction().execute(async (trx) => {
    await dialectAdapter.lockUsers(trx, services.db.dialect, [caller.userId]);
    if ((await countBots(trx, caller.userId)) >= limit)
      throw new ApiError(Code.BOT_LIMIT, `bot limit reached: one user may own at most ${limit} bots`);
    return insertUser(trx, {
      email: null,
      password_hash: null,
      totp_secret: null,
      totp_last_step: null,
      bot_owner_id: caller.userId,
      created_at: nowSeconds(services),
      ...nickColumns(nick),
    });
  });
  // Caches may hold the new id as "no such user".
  await announceUsersChanged(services, [userId]);
  return { user_id: userId };
}
