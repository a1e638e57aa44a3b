import type { Executor } from '../db/connection.js';
import { checkLedger } from './ledger.js';
import { readListingProblems } from './queries.js';

/** What the listings' check found wrong: every listing's item is held for it (listed, its seller's, not equipped), and every listed item has a listing. */
export async function checkListings(db: Executor): Promise<string[]> {
  const { unheld, orphans } = await readListingProblems(db);
  return [
    ...unheld.map((l) => {
      const why =
        l.state === null
          ? 'does not exist'
          : l.equipped
            ? 'is equipped'
            : l.state !== 'listed'
              ? `is ${l.state}, not listed`
              : l.owner !== l.seller_id
                ? `belongs to user ${l.owner}`
                : 'is of another prototype than its listing';
      return `listing of item ${l.item_id} (seller ${l.seller_id}): the item ${why}`;
    }),
    ...orphans.map((i) => `item ${i.item_id} of user ${i.user_id} is listed but has no listing`),
  ];
}

/** The whole market's check: the ledger (balances, transfers, fees) and the listings; empty when all is well. */
export async function checkMarket(db: Executor): Promise<string[]> {
  const [ledger, listings] = await Promise.all([checkLedger(db), checkListings(db)]);
  return [...ledger, ...listings];
}
