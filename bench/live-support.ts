/** What the live benchmarks (messages, lobby, game) share: users signed in straight in the database, percentiles, a process's CPU time. */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '../src/db/connection.js';
import { newToken, sha256 } from '../src/infra/secrets.js';

/** A world file of users 1 to `users` in a new temporary folder (removed by the caller): the folder and the file. */
export function usersWorld(name: string, users: number): { dir: string; worldFile: string } {
  const dir = mkdtempSync(join(tmpdir(), `gp-bench-${name}-`));
  const worldFile = join(dir, 'world.json');
  writeFileSync(
    worldFile,
    JSON.stringify({ users: Array.from({ length: users }, (_, i) => ({ user_id: i + 1, nick: `u${i + 1}`, created_at: 0 })) }),
  );
  return { dir, worldFile };
}

/** Signs users 1 to `users` in by writing their sessions as sign-in stores them (not bound to an address); their access tokens. */
export async function signInUsers(db: Database, users: number): Promise<Map<number, string>> {
  const tokens = new Map<number, string>();
  const now = Math.floor(Date.now() / 1000);
  const sessions = Array.from({ length: users }, (_, i) => {
    const token = newToken();
    tokens.set(i + 1, token);
    return {
      user_id: i + 1,
      family_id: randomUUID(),
      access_hash: sha256(token),
      refresh_hash: null,
      ip: null,
      is_bot: 0 as const,
      expires_at: now + 86400,
      created_at: now,
    };
  });
  for (let i = 0; i < sessions.length; i += 500)
    await db.kysely
      .insertInto('sessions')
      .values(sessions.slice(i, i + 500))
      .execute();
  return tokens;
}

/** The `p`th percentile of sorted values. */
export const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/** CPU time a process has used so far (user and system), ms; /proc counts in ticks of 10 ms. */
export function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
