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
    const { users, items, keyFile } = await backupSqlite(config.databaseUrl, to);
    const key = keyFile
      ? `its TOTP secrets are sealed with the key in ${keyFile}: keep a copy of that file (apart from the backups); a restore needs it`
      : 'its TOTP secrets are sealed with the key given in SECRET_KEY: keep it; a restore needs it';
    return `backed up to ${to}: ${users} users, ${items} items (integrity checked)\n${key}`;
  });
}

export function restoreCommand(config: Config, file: string | undefined): Promise<number> {
  return run(file, async (from) => {
    const { users, items } = await restoreSqlite(config.databaseUrl, from, config.secretKey);
    return `restored ${from}: ${users} users, ${items} items; start the servers again`;
  });
}
