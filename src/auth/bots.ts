import { ApiError, Code, badParam } from '../api/errors.js';
import type { Caller } from '../api/method.js';
import type { Services } from '../services.js';
import { normalizeIp, requestAddress } from './ip.js';
import { issueBotSession, type SessionData } from './sessions.js';

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
  const bot = await services.db.kysely.selectFrom('users').select(['bot_owner_id']).where('user_id', '=', request.botId).executeTakeFirst();
  // Someone else's bot answers exactly as a missing one: ownership is not disclosed.
  if (!bot || bot.bot_owner_id !== caller.userId) throw new ApiError(Code.BOT_NOT_FOUND, 'bot does not exist');
  return issueBotSession(services, request.botId, ip);
}
