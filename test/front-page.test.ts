import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { startTestServer } from './helpers.js';
import type { World } from '../src/world/schema.js';
import { WAIT, launchChromium, missing } from './components.js';

const root = join(import.meta.dirname, '..');
const demoFile = join(root, 'worlds/demo.json');
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

test(
  'GET /about in a browser: what the server is, its version, links that work, and the demo accounts without passwords',
  { timeout: 600_000, skip: missing.chromium },
  async () => {
    const demo = JSON.parse(readFileSync(demoFile, 'utf8')) as World & { users: { email?: string; password?: string }[] };
    const accounts = demo.users.filter((u) => u.email && u.password);
    assert.ok(accounts.length >= 5);
    const server = await startTestServer({ world: demo, config: { world: demoFile } });
    let browser: Browser | undefined;
    try {
      await server.app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = server.app.server.address() as AddressInfo;
      const origin = `http://127.0.0.1:${port}`;
      browser = await launchChromium();
      const page = await browser.newPage();
      const outside: string[] = [];
      await page.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith(`${origin}/`)) return route.continue();
        outside.push(url);
        return route.abort();
      });

      const loaded = await page.goto(`${origin}/about`, WAIT);
      assert.equal(loaded?.status(), 200);
      assert.equal(await page.title(), `game-platform ${version}`);
      assert.equal(await page.locator('#version').innerText(), version);
      const listed = await page.locator('#demo-accounts li').allInnerTexts();
      assert.deepEqual(
        listed,
        accounts.map((a) => a.email),
      );
      const text = await page.locator('body').innerText();
      for (const account of accounts) assert.equal(text.includes(account.password!), false, 'no password on the page');
      assert.equal((await page.content()).includes('demo-password'), false);

      // Each link leads somewhere that answers.
      for (const [name, check] of [
        ['Health', async () => assert.deepEqual(JSON.parse(await page.locator('body').innerText()), { status: 'ok' })],
        ['OpenAPI document', async () => assert.equal(JSON.parse(await page.locator('body').innerText()).openapi, '3.1.0')],
        ['API reference', async () => page.locator('.sidebar-heading-type').first().waitFor(WAIT)],
      ] as const) {
        await page.goto(`${origin}/about`, WAIT);
        const [response] = await Promise.all([page.waitForNavigation(WAIT), page.getByRole('link', { name, exact: true }).click()]);
        assert.equal(response?.status(), 200, name);
        await check();
      }
      assert.deepEqual(outside, [], 'the page loaded something from outside this server');
    } finally {
      await browser?.close();
      await server.close();
    }
  },
);

test('without the demo world, GET /about lists no accounts', async () => {
  const server = await startTestServer({ world: { users: [{ user_id: 1, nick: 'x', email: 'someone@example.com' }] } });
  try {
    const page = await server.app.inject({ method: 'GET', url: '/about' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(page.body, /<a href="\/docs">/);
    assert.doesNotMatch(page.body, /Demo accounts|someone@example\.com/);
  } finally {
    await server.close();
  }
});

test("GET /about lists the accounts of no world file but the shipped demo world's, even those with plain passwords", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gp-front-'));
  const file = join(dir, 'prod.json');
  const world: World = {
    users: [{ user_id: 1, nick: 'Root', email: 'root-operator@corp.example', password: 'a-real-password-1', superadmin: 1 }],
  };
  writeFileSync(file, JSON.stringify(world));
  const server = await startTestServer({ world, config: { world: file } });
  try {
    const page = await server.app.inject({ method: 'GET', url: '/about' });
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /Demo accounts|root-operator/);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
