import type { Config } from '../config.js';
import { BackupError, backupSqlite, restoreSqlite } from '../operations/backup.js';

async function run(file: string | undefined, work: (file: string) => Promise<string>): Promise<number> {
  if (!file) {
    console.error('a FILE is required');
    return 2;
  }
  try {
    console.log(await work(file));
    return 0;
  } catch (error) {
    if (!(error instanceof BackupError)) throw error;
    console.error(error.message);
    return 1;
  }
}

export function backupCommand(config: Config, file: string | undefined): Promise<number> {
  return run(file, async (to) => {
    const { users, items } = await backupSqlite(config.databaseUrl, to);
    return `backed up to ${to}: ${users} users, ${items} items (integrity checked)`;
  });
}

export function restoreCommand(config: Config, file: string | undefined): Promise<number> {
  return run(file, async (from) => {
    const { users, items } = await restoreSqlite(config.databaseUrl, from);
    return `restored ${from}: ${users} users, ${items} items; start the servers again`;
  });
}
