import { ApiError, Code } from '../api/errors.js';
import type { Services } from '../services.js';
import { Friendship, friendshipValues, isBlock } from '../friends/index.js';
import { tradePrivacy, type TradePrivacy } from './queries.js';

/** What a receiver's settings let a sender offer them. */
export interface Admission {
  trades: boolean;
  gifts: boolean;
  /** A gift completes at once. */
  autoaccept: boolean;
}

/** How `fromId` relates to `toId` (see friendshipValues); 107 when either has blocked the other. */
export async function relationForTrade(services: Services, fromId: number, toId: number): Promise<number> {
  const relation = (await friendshipValues(services, fromId, [toId])).get(toId) ?? Friendship.NONE;
  if (isBlock(relation)) throw new ApiError(Code.BLOCKED_BY_USER, 'one of you has blocked the other');
  return relation;
}

/**
 * What the receiver's settings (101 when there is no such user) let a sender with this relation
 * offer: trades when trades_income is 1, and with trades_income_from_friends only from friends;
 * gifts whenever trades are, and also otherwise while trades_income_gifts is 1.
 */
export function admissionFrom(relation: number, privacy: TradePrivacy | undefined): Admission {
  if (!privacy) throw new ApiError(Code.USER_NOT_FOUND, 'parameter user_id: user does not exist');
  const trades = privacy.trades_income === 1 && (privacy.trades_income_from_friends === 0 || relation === Friendship.FRIENDS);
  return { trades, gifts: trades || privacy.trades_income_gifts === 1, autoaccept: privacy.trades_income_gifts_autoaccept === 1 };
}

/** What `fromId` may offer `toId`: 107 when either has blocked the other, else as admissionFrom. */
export async function admissionOf(services: Services, fromId: number, toId: number): Promise<Admission> {
  const [relation, privacy] = await Promise.all([relationForTrade(services, fromId, toId), tradePrivacy(services.db.kysely, toId)]);
  return admissionFrom(relation, privacy);
}

/** 701 unless the receiver's settings let this offer (a gift or a trade) through. */
export function requireAdmitted(admission: Admission, gift: boolean): void {
  if (gift ? admission.gifts : admission.trades) return;
  throw new ApiError(
    Code.PRIVACY,
    gift ? 'the privacy settings of the user refuse gifts from you' : 'the privacy settings of the user refuse trades from you',
  );
}
