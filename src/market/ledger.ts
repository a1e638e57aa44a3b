import type { Executor } from '../db/connection.js';
import type { Services } from '../services.js';
import { notEnoughMoney, toUnits } from './money.js';
import {
  PlatformAccount,
  creditBalance,
  debitBalance,
  insertTransfer,
  readLedgerTotals,
  type EntryRecord,
  type TransferRecord,
} from './queries.js';

/** What an entry of the ledger records, as wallet.getHistory names it. */
export const LEDGER_KINDS = [
  'market_sale',
  'market_purchase',
  'fee',
  'shop',
  'quick_sell',
  'promocode',
  'admin_grant',
  'admin_revoke',
  'refund',
  'mission',
] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/** One side of a transfer: a user's account (a positive id) or one of the platform's (PlatformAccount). */
export interface Movement {
  account: number;
  amount: number;
  kind: LedgerKind;
}

/**
 * Changes the users' balances by their movements, in the caller's transaction: in ascending
 * user order, so that concurrent transfers on PostgreSQL lock balances in one order and never
 * deadlock, a debit only when the balance covers it (else 2103 and the whole transaction rolls
 * back). The movements must sum to zero. Answers each user's balance after it. Balances are
 * changed before any item of the same transaction (an item's change also locks its owner's
 * inventory count), so that money and items are always locked in that order.
 */
export async function moveBalances(trx: Executor, movements: Movement[]): Promise<Map<number, number>> {
  if (movements.reduce((sum, m) => sum + m.amount, 0) !== 0) throw new Error('a transfer must sum to zero');
  const balances = new Map<number, number>();
  const users = movements.filter((m) => m.account > 0).sort((a, b) => a.account - b.account);
  for (const movement of users) {
    const after =
      movement.amount >= 0
        ? await creditBalance(trx, movement.account, movement.amount)
        : await debitBalance(trx, movement.account, -movement.amount);
    if (after === undefined) throw notEnoughMoney();
    balances.set(movement.account, after);
  }
  return balances;
}

/** Records a transfer whose balances moveBalances changed, one entry per movement. */
export async function recordTransfer(
  trx: Executor,
  record: TransferRecord & { kind: LedgerKind },
  movements: Movement[],
  balances: Map<number, number>,
): Promise<void> {
  const entries: EntryRecord[] = movements
    .filter((m) => m.amount !== 0)
    .map((m) => ({
      account_id: m.account,
      kind: m.kind,
      amount: m.amount,
      balance_after: m.account > 0 ? balances.get(m.account)! : null,
    }));
  await insertTransfer(trx, record, entries);
}

/** Moves money and records the transfer (moveBalances, then recordTransfer); answers each user's balance after it. */
export async function transfer(
  trx: Executor,
  record: TransferRecord & { kind: LedgerKind },
  movements: Movement[],
): Promise<Map<number, number>> {
  const balances = await moveBalances(trx, movements);
  await recordTransfer(trx, record, movements, balances);
  return balances;
}

/** Realtime event of a changed balance, to the user's connections: `{balance}` in units. */
export const BALANCE_EVENT = 'wallet.balance';

/** Tells each user's connections their new balance, once the change is committed; a failure is logged, not answered. */
export async function announceBalances(services: Pick<Services, 'realtime' | 'log'>, balances: Map<number, number>): Promise<void> {
  await Promise.all(
    [...balances].map(async ([userId, kopecks]) => {
      const fields = { balance: toUnits(kopecks) };
      try {
        await services.realtime.pushToUser(userId, { type: BALANCE_EVENT, fields, json: fields });
      } catch (error) {
        services.log.error({ err: error }, 'could not announce a balance on the realtime feed');
      }
    }),
  );
}

/** What the ledger check found wrong; empty when every balance and fee adds up. */
export async function checkLedger(db: Executor): Promise<string[]> {
  const totals = await readLedgerTotals(db);
  const problems: string[] = [];
  const sums = new Map(totals.sums.map((s) => [s.account_id, s.total]));
  for (const { user_id, balance } of totals.balances) {
    const sum = sums.get(user_id) ?? 0;
    if (sum !== balance) problems.push(`user ${user_id}: balance ${balance}, entries sum to ${sum}`);
  }
  const stored = new Set(totals.balances.map((b) => b.user_id));
  for (const [account, sum] of sums)
    if (account > 0 && !stored.has(account) && sum !== 0) problems.push(`user ${account}: no balance, entries sum to ${sum}`);
  for (const id of totals.unbalanced) problems.push(`transfer ${id} does not sum to zero`);
  const balanceOf = new Map(totals.balances.map((b) => [b.user_id, b.balance]));
  for (const { account_id, balance_after } of totals.lastAfter)
    if (balanceOf.get(account_id) !== balance_after)
      problems.push(`user ${account_id}: last entry says ${balance_after}, balance is ${balanceOf.get(account_id)}`);
  if (totals.feeEntries !== totals.saleFees) problems.push(`fee entries sum to ${totals.feeEntries}, sales' fees to ${totals.saleFees}`);
  const feeAccount = sums.get(-1) ?? 0;
  if (feeAccount !== totals.saleFees) problems.push(`the fee account holds ${feeAccount}, sales' fees sum to ${totals.saleFees}`);
  return problems;
}

/** A promo code's money, in the caller's transaction (the one counting the redemption): the user's new balance. */
export async function payPromocodeMoney(trx: Executor, userId: number, kopecks: number, code: string, now: number): Promise<number> {
  const balances = await transfer(trx, { ts: now, kind: 'promocode', reason: code }, [
    { account: userId, amount: kopecks, kind: 'promocode' },
    { account: PlatformAccount.ISSUE, amount: -kopecks, kind: 'promocode' },
  ]);
  return balances.get(userId)!;
}

/** A mission's money, in the caller's transaction (the one that counts the game completing it): the user's new balance. */
export async function payMissionMoney(trx: Executor, userId: number, kopecks: number, reason: string, now: number): Promise<number> {
  const balances = await transfer(trx, { ts: now, kind: 'mission', reason }, [
    { account: userId, amount: kopecks, kind: 'mission' },
    { account: PlatformAccount.ISSUE, amount: -kopecks, kind: 'mission' },
  ]);
  return balances.get(userId)!;
}
