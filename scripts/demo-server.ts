/** A server on the demo world in a temporary folder, and headless Chromium: for the screenshots and the client's benchmark. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { createServer } from '../src/app.js';
import { defaultConfig } from '../src/config.js';
import { openDatabase } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { importWorld } from '../src/world/import.js';

const root = new URL('..', import.meta.url).pathname;
const SECRET_KEY = '5ec7e7ee'.repeat(8);

export const CHROMIUM_PATH = process.env.TEST_CHROMIUM ?? '/usr/bin/chromium';

export async function startDemoServer(): Promise<{ origin: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'gp-demo-'));
  const databaseUrl = `sqlite:${join(dir, 'db.sqlite')}`;
  const db = await openDatabase(databaseUrl, { secretKey: SECRET_KEY });
  await migrateToLatest(db);
  const world = JSON.parse(readFileSync(join(root, 'worlds/demo.json'), 'utf8'));
  await importWorld(db, world, { mode: 'merge', now: Math.floor(Date.now() / 1000) });
  const config = { ...defaultConfig(), databaseUrl, logLevel: 'silent', secretKey: SECRET_KEY };
  const { app } = await createServer(config, { db, logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    async close() {
      await app.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
