import { api, ok } from './api/client';
import { balance } from './realtime';

/** An amount in units of the currency as the player's language writes it. */
export function money(lang: string, units: number): string {
  return new Intl.NumberFormat(lang, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(units);
}

/** The balance read from the server; `wallet.balance` events keep it current afterwards. */
export async function readBalance(): Promise<number> {
  const { result } = await ok(api.POST('/api/execute.wallet'));
  balance.set(result.info.balance);
  return result.info.balance;
}
