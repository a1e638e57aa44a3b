import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { startTestServer } from './helpers.js';
import { allMethods } from '../src/domains.js';
import type { World } from '../src/world/schema.js';
import { WAIT, launchChromium, missing } from './components.js';

const world: World = {
  collections: [{ collection_id: 1, title: 'Classic' }],
  item_protos: [
    { item_proto_id: 10, type: 0, title: 'Docs Card Alpha', quality_id: 1, collection_id: 1, monopoly_id: 1 },
    { item_proto_id: 11, type: 0, title: 'Docs Card Beta', quality_id: 2, collection_id: 1, monopoly_id: 1 },
  ],
  users: [{ user_id: 1, nick: 'reader' }],
};

/** Drops zero-width characters Scalar puts into headings. */
const clean = (text: string) => text.replace(/[\u200b-\u200d\ufeff]/g, '').trim();

test(
  '/docs lists every method, finds one by search, and "try it" calls the running server',
  { timeout: 600_000, skip: missing.chromium },
  async () => {
    const server = await startTestServer({ world });
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
        if (url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
        outside.push(url);
        return route.abort();
      });

      const loaded = await page.goto(`${origin}/docs`, WAIT);
      assert.equal(loaded?.status(), 200);
      await page.locator('.sidebar-heading-type').first().waitFor(WAIT);

      // The sidebar lists every method in both forms.
      const listed: string[] = await page.evaluate(() =>
        // Only what is shown: the page also keeps hidden copies of some entries.
        [...document.querySelectorAll<HTMLElement>('.sidebar-heading-type')]
          .filter((badge) => badge.checkVisibility())
          .map((badge) => {
            const link = badge.closest('a, button') as HTMLElement | null;
            return `${(link?.innerText ?? '').split('\n')[0]} ${(badge as HTMLElement).innerText.split('\n').pop()}`;
          }),
      );
      const entries = new Set(listed.map(clean).map((e) => e.replace(/\s+/g, ' ')));
      const methods = allMethods().map((m) => m.name);
      assert.ok(methods.length > 0);
      assert.equal(entries.size, 2 * methods.length, `the sidebar lists ${[...entries].join(', ')}`);
      for (const name of methods) {
        assert.ok(entries.has(`${name} GET`), `${name} (GET) is not listed; the sidebar has ${[...entries].slice(0, 10).join(', ')}...`);
        assert.ok(entries.has(`${name} POST`), `${name} (POST) is not listed`);
      }

      // Search finds a method by name.
      const wanted = 'data.searchItemProtos';
      assert.ok(methods.includes(wanted));
      // The search button carries role="search", so it is found by its text.
      await page
        .locator('button')
        .filter({ hasText: /Search/ })
        .first()
        .click(WAIT);
      await page.keyboard.type(wanted);
      const hit = page
        .getByRole('option')
        .filter({ hasText: `/api/${wanted}` })
        .first();
      await hit.waitFor(WAIT);

      // "Test Request" on the GET form sends the request to this server and shows code 0.
      await page.keyboard.press('Escape');
      const operation = page.locator(`[id$="/GET/api/${wanted}"]`).first();
      await operation.scrollIntoViewIfNeeded(WAIT);
      await operation
        .getByRole('button', { name: /Test Request/ })
        .first()
        .click(WAIT);
      const send = page.getByRole('button', { name: /Send get request/i }).first();
      await send.waitFor(WAIT);
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().startsWith(`${origin}/api/${wanted}`), WAIT),
        send.click(),
      ]);
      const body = await response.json();
      assert.equal(body.code, 0, JSON.stringify(body));
      assert.deepEqual(
        body.data.item_protos.map((p: { title: string }) => p.title),
        ['Docs Card Alpha', 'Docs Card Beta'],
      );
      await page.getByText('Docs Card Alpha').first().waitFor(WAIT);

      assert.deepEqual(outside, [], 'the page loaded something from outside this server');
    } finally {
      await browser?.close();
      await server.close();
    }
  },
);

test('/openapi.json and the reference assets are served by this server', async () => {
  const server = await startTestServer();
  try {
    const page = await server.app.inject({ method: 'GET', url: '/docs/' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<script src="js\/scalar\.js"><\/script>/);
    assert.match(page.body, /"url": "\/openapi\.json"/);
    assert.match(page.body, /"withDefaultFonts": false/);
    assert.doesNotMatch(page.body, /https?:\/\//, 'the page refers to no other host');
    const script = await server.app.inject({ method: 'GET', url: '/docs/js/scalar.js' });
    assert.equal(script.statusCode, 200);
    assert.match(String(script.headers['content-type']), /javascript/);
    const document = await server.app.inject({ method: 'GET', url: '/openapi.json' });
    assert.equal(document.json().openapi, '3.1.0');
  } finally {
    await server.close();
  }
});
