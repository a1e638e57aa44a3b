import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { ManualClock } from '../src/infra/clock.js';
import { defaultConfig } from '../src/config.js';
import { newDatabaseLocation, startTestServer, ok, type DatabaseLocation, type TestServer } from './helpers.js';
import type { World } from '../src/world/schema.js';
import { WAIT, launchChromium, missing } from './components.js';
import { tokenFor } from './item-fixtures.js';
import { accessibilityProblems, signIn, watchPage } from './web-support.js';

const world: World = {
  users: [
    { user_id: 1, nick: 'Alice', email: 'alice@example.com', password: 'alice password 1' },
    { user_id: 2, nick: 'Bob', email: 'bob@example.com', password: 'bob password 1' },
  ],
};

const storedToken = (page: import('playwright-core').Page) =>
  page.evaluate(() => (JSON.parse(localStorage.getItem('session') ?? '{}') as { access_token?: string }).access_token);

test(
  'the page recovers its live updates when the server restarts, and an expired access token is refreshed without signing out',
  { timeout: 900_000, skip: missing.chromium },
  async () => {
    const location: DatabaseLocation = await newDatabaseLocation();
    const clock = new ManualClock();
    let first: TestServer | undefined;
    let second: TestServer | undefined;
    let browser: Browser | undefined;
    const problems: string[] = [];
    try {
      first = await startTestServer({ world, location, clock });
      await first.app.listen({ host: '127.0.0.1', port: 0 });
      const port = (first.app.server.address() as AddressInfo).port;
      const origin = `http://127.0.0.1:${port}`;

      browser = await launchChromium();
      const alice = await (await browser.newContext({ locale: 'en-US' })).newPage();
      watchPage(alice, origin, problems);
      await signIn(alice, origin, 'alice@example.com', 'alice password 1');
      await alice.getByRole('link', { name: 'Messages', exact: true }).click();
      await alice.getByText('No conversations yet.').waitFor(WAIT);
      await alice.getByRole('link', { name: 'Home' }).click();
      await alice.getByText('Live').first().waitFor(WAIT);
      await alice.getByRole('link', { name: 'Messages', exact: true }).click();
      await alice.getByText('No conversations yet.').waitFor(WAIT);

      // The server stops; the page keeps trying to connect (its failed attempts are the browser's console errors below).
      await first.close();
      first = undefined;

      // It comes back; Bob writes before any page can connect. The page reads again what it missed.
      second = await startTestServer({ location, clock });
      const bobToken = await tokenFor(second, 2);
      ok(await second.call('im.send', { user_id: 1, text: 'written while you were away' }, { token: bobToken }));
      await second.app.listen({ host: '127.0.0.1', port });
      const dialogs = alice.getByRole('list', { name: 'Conversations' });
      await dialogs.getByRole('link', { name: 'Bob' }).waitFor(WAIT);
      assert.equal(await dialogs.locator('.badge').innerText(), '1');
      await alice.getByRole('link', { name: 'Messages (1)' }).waitFor(WAIT);

      // And it is live again.
      ok(await second.call('im.send', { user_id: 1, text: 'and now live' }, { token: bobToken }));
      await dialogs.getByText('and now live').waitFor(WAIT);
      await dialogs.locator('.badge').getByText('2').waitFor(WAIT);
      problems.push(...(await accessibilityProblems(alice)));

      // The access token expires (the server's clock passes its lifetime): the next call refreshes it and succeeds.
      const before = await storedToken(alice);
      clock.advance(defaultConfig().sessionTtl + 1);
      await dialogs.getByRole('link', { name: 'Bob' }).click();
      await alice.getByRole('heading', { name: 'Conversation with Bob', level: 1 }).waitFor(WAIT);
      await alice.getByLabel('Your message', { exact: true }).fill('still signed in');
      await alice.getByRole('button', { name: 'Send' }).click();
      await alice.locator('li.mine').filter({ hasText: 'still signed in' }).waitFor(WAIT);
      const after = await storedToken(alice);
      assert.ok(after && after !== before, 'the token was refreshed');
      const aliceHistory = ok(await second.call('im.historyGet', { user_id: 1 }, { token: await tokenFor(second, 2) })).messages;
      assert.deepEqual(
        aliceHistory.map((message: { text: string }) => message.text),
        ['still signed in', 'and now live', 'written while you were away'],
      );
      assert.equal(await alice.getByRole('button', { name: 'Sign out' }).count(), 1);

      const offline = /WebSocket connection to .* failed|ERR_CONNECTION_REFUSED/;
      assert.deepEqual(
        problems.filter((problem) => !offline.test(problem)),
        [],
      );
    } finally {
      await browser?.close();
      await first?.close();
      await second?.close();
      await location.dispose();
    }
  },
);
