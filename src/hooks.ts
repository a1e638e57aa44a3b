// The cross-domain hooks, registered here by the composition root: each lower domain declares
// in its hooks.ts what it needs the domains above it to do, and this file answers it with
// their functions (ARCHITECTURE.md, "Reactions between domains").
import type { Services } from './services.js';
import { Friendship, friendshipLookup, friendshipValues } from './friends/relations.js';
import { endingOpenTrades, invalidateTradesHolding } from './trades/invalidate.js';
import { announceInvalidated } from './trades/announce.js';
import { closeInvalidated, openTradesHolding, tradePrivacy } from './trades/queries.js';
import { expiryCutoff } from './trades/status.js';
import { admissionFrom, requireAdmitted } from './trades/admission.js';
import { liveGamesOf } from './game/index.js';
import { announceBalances, payPromocodeMoney } from './market/ledger.js';
import { announceGameResult, countGameResult } from './missions/index.js';

export const domainHooks: Services['hooks'] = {
  users: { friendshipValues, friendshipLookup, currentGames: liveGamesOf },
  friends: { endingTradesBetween: endingOpenTrades },
  inventory: {
    endTradesHolding: (services, trx, itemIds) => invalidateTradesHolding(services, trx, itemIds),
    tradesHolding: (services, trx, dialect, itemIds, now) => openTradesHolding(trx, dialect, itemIds, expiryCutoff(services, now)),
    closeTrades: closeInvalidated,
    announceEndedTrades: announceInvalidated,
    requireGiftAdmitted: async (trx, receiverId) =>
      requireAdmitted(admissionFrom(Friendship.FRIENDS, await tradePrivacy(trx, receiverId)), true),
  },
  promocodes: {
    payMoney: payPromocodeMoney,
    announceBalance: (services, userId, kopecks) => announceBalances(services, new Map([[userId, kopecks]])),
  },
  game: { gameEnded: countGameResult, announceGameEnded: announceGameResult },
};
