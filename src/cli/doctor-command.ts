import type { Config } from '../config.js';
import { describeDatabaseUrl, databaseOptions, openDatabase } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { checkMarket } from '../market/index.js';

/**
 * Checks the stored world's money and market in one snapshot (servers may run and write
 * meanwhile): every balance is the sum of its ledger entries and its last entry's balance, every
 * transfer sums to zero, the fee account holds the sales' fees, every listing's item is held
 * for it and every listed item has a listing. Exits 0 when all of it holds, 1 with the list of
 * what does not.
 */
export async function doctorCommand(config: Config): Promise<number> {
  const db = await openDatabase(config.databaseUrl, databaseOptions(config));
  let problems: string[];
  try {
    await migrateToLatest(db);
    problems = await db.kysely
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute((trx) => checkMarket(trx));
  } finally {
    await db.close();
  }
  const where = describeDatabaseUrl(config.databaseUrl);
  if (problems.length === 0) {
    console.log(
      `${where}: the ledger and the market add up (balances equal their entries, transfers sum to zero, ` +
        'the fee account holds the fees, every listed item is held by its listing)',
    );
    return 0;
  }
  console.error(`${where}: ${problems.length} problem${problems.length === 1 ? '' : 's'} found:\n  ${problems.join('\n  ')}`);
  return 1;
}
