import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, ok, type TestServer } from './helpers.js';
import type { World } from '../src/world/schema.js';
import { defaultConfig } from '../src/config.js';
import { WAIT, launchChromium, missing } from './components.js';
import { tokenFor } from './item-fixtures.js';
import { accessibilityProblems, signIn, watchPage } from './web-support.js';

const ADMIN_KEY = 'web-pages-admin-key-for-tests';
const OLD_MESSAGES = 35;

const world: World = {
  collections: [{ collection_id: 1, title: 'Classic' }],
  item_protos: [
    {
      item_proto_id: 100,
      type: 0,
      title: 'Plain Card',
      quality_id: 1,
      collection_id: 1,
      monopoly_id: 1,
      can_craft: 0,
      prices: { buy: 5, quick_sell: 2 },
    },
  ],
  users: [
    { user_id: 1, nick: 'Alice', email: 'alice@example.com', password: 'alice password 1' },
    { user_id: 2, nick: 'Bob', email: 'bob@example.com', password: 'bob password 1' },
  ],
  items: [
    { item_id: 1, user_id: 1, item_proto_id: 100, ts_owned: 100 },
    { item_id: 2, user_id: 1, item_proto_id: 100, ts_owned: 100 },
  ],
};

/** Whether the page is wider than the window (a phone would scroll sideways). */
const overflows = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);

test(
  'two players write to each other and trade on the market, everything live, in English and Russian, on desktop and phone widths',
  { timeout: 900_000, skip: missing.chromium },
  async () => {
    let server: TestServer | undefined;
    let browser: Browser | undefined;
    const problems: string[] = [];
    try {
      server = await startTestServer({ world, config: { adminKey: ADMIN_KEY, im: { ...defaultConfig().im, burst: 100 } } });
      await server.app.listen({ host: '127.0.0.1', port: 0 });
      const origin = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
      ok(
        await server.call('admin.grantMoney', { user_id: 2, amount: 50, reason: 'test funds' }, { headers: { 'x-admin-key': ADMIN_KEY } }),
      );
      const bobToken = await tokenFor(server, 2);
      for (let n = 1; n <= OLD_MESSAGES; n++)
        ok(await server.call('im.send', { user_id: 1, text: `old message ${n}` }, { token: bobToken }));

      browser = await launchChromium();
      const alice = await (await browser.newContext({ locale: 'en-US' })).newPage();
      const bob = await (await browser.newContext({ locale: 'en-US' })).newPage();
      for (const page of [alice, bob]) watchPage(page, origin, problems);
      await signIn(alice, origin, 'alice@example.com', 'alice password 1');
      await signIn(bob, origin, 'bob@example.com', 'bob password 1');

      // Bob starts from Alice's profile and waits in the conversation: his last message is not read yet.
      await bob.goto(`${origin}/profile/1`, WAIT);
      await bob.getByRole('link', { name: 'Write a message' }).click();
      await bob.getByRole('heading', { name: 'Conversation with Alice', level: 1 }).waitFor(WAIT);
      const bobLast = bob.locator('li.mine').filter({ hasText: `old message ${OLD_MESSAGES}` });
      await bobLast.getByText('sent').waitFor(WAIT);
      problems.push(...(await accessibilityProblems(bob)));

      // Alice sees the unread count in the menu and in her conversations.
      await alice.getByRole('link', { name: `Messages (${OLD_MESSAGES})` }).click();
      const dialogs = alice.getByRole('list', { name: 'Conversations' });
      await dialogs.getByRole('link', { name: 'Bob' }).waitFor(WAIT);
      assert.equal(await dialogs.locator('.badge').innerText(), String(OLD_MESSAGES));
      problems.push(...(await accessibilityProblems(alice)));

      // Opening it reads it: the newest page first, older ones on demand; Bob sees the read mark live.
      await dialogs.getByRole('link', { name: 'Bob' }).click();
      await alice.getByRole('heading', { name: 'Conversation with Bob', level: 1 }).waitFor(WAIT);
      await alice.getByText(`old message ${OLD_MESSAGES}`, { exact: true }).waitFor(WAIT);
      assert.equal(await alice.locator('li.theirs').count(), 30);
      await alice.getByRole('button', { name: 'Show older' }).click();
      await alice.getByText('old message 1', { exact: true }).waitFor(WAIT);
      assert.equal(await alice.locator('li.theirs').count(), OLD_MESSAGES);
      await alice.getByRole('button', { name: 'Show older' }).waitFor({ ...WAIT, state: 'detached' });
      await alice.getByRole('link', { name: 'Messages', exact: true }).waitFor(WAIT);
      await bobLast.getByText('read').waitFor(WAIT);

      // Live both ways; a deleted message leaves both pages.
      await alice.getByLabel('Your message', { exact: true }).fill('hello Bob');
      await alice.getByRole('button', { name: 'Send' }).click();
      await bob.locator('li.theirs').filter({ hasText: 'hello Bob' }).waitFor(WAIT);
      await bob.getByLabel('Your message', { exact: true }).fill('hi Alice');
      await bob.getByRole('button', { name: 'Send' }).click();
      await alice.locator('li.theirs').filter({ hasText: 'hi Alice' }).waitFor(WAIT);
      await alice.locator('li.mine').filter({ hasText: 'hello Bob' }).getByText('read').waitFor(WAIT);
      await alice.getByRole('button', { name: 'Delete: hello Bob' }).click();
      await bob.getByText('hello Bob').waitFor({ ...WAIT, state: 'detached' });
      problems.push(...(await accessibilityProblems(alice)));

      // Alice puts a card on sale from her inventory.
      await alice.getByRole('link', { name: 'Market' }).click();
      await alice.getByRole('link', { name: 'My listings' }).click();
      await alice.getByLabel('Price', { exact: true }).fill('12.5');
      await alice.getByRole('button', { name: 'Put on sale' }).click();
      await alice.getByText('Plain Card is on sale for 12.50.').waitFor(WAIT);
      await alice.getByText('Plain Card · 12.50').waitFor(WAIT);
      await alice.getByText('Balance: 0.00').waitFor(WAIT);
      problems.push(...(await accessibilityProblems(alice)));

      // Bob finds it, sees the price and buys it: both balances and Alice's listings change live.
      await bob.getByRole('link', { name: 'Market' }).click();
      await bob.getByText('Balance: 50.00').waitFor(WAIT);
      await bob.getByRole('button', { name: /^Plain Card from/ }).click();
      await bob.getByRole('button', { name: 'Buy for 12.50' }).click();
      await bob.getByText('You bought Plain Card for 12.50.').waitFor(WAIT);
      await bob.getByText('Balance: 37.50').waitFor(WAIT);
      problems.push(...(await accessibilityProblems(bob)));
      await alice.getByText('Balance: 11.25').waitFor(WAIT);
      await alice.getByText('Plain Card · 12.50').waitFor({ ...WAIT, state: 'detached' });
      await alice.getByText('You have nothing on sale.').waitFor(WAIT);

      // A price changed meanwhile is refused, never paid.
      await alice.getByLabel('Price', { exact: true }).fill('10');
      await alice.getByRole('button', { name: 'Put on sale' }).click();
      await alice.getByText('Plain Card is on sale for 10.00.').waitFor(WAIT);
      // New listings are not announced: the market is read again.
      await bob.reload(WAIT);
      await bob.getByRole('button', { name: /^Plain Card from/ }).click();
      const stale = bob.getByRole('button', { name: 'Buy for 10.00' });
      await stale.waitFor(WAIT);
      const aliceToken = await tokenFor(server, 1);
      const [listed] = ok(await server.call('market.getMy', {}, { token: aliceToken })).things;
      ok(await server.call('market.sell', { thing_id: listed.thing_id, price: 11 }, { token: aliceToken }));
      await stale.click();
      await bob.getByText('The price has changed: it is now 11.').waitFor(WAIT);
      await bob.getByRole('button', { name: 'Buy for 11.00' }).waitFor(WAIT);
      await bob.getByText('Balance: 37.50').waitFor(WAIT);

      // Alice's wallet history; Bob's purchase in the shop.
      await alice.getByRole('link', { name: 'Wallet history' }).click();
      const sale = alice.getByRole('row', { name: /Sold on the market/ });
      await sale.waitFor(WAIT);
      assert.match(await sale.innerText(), /\+11\.25\s+11\.25/);
      problems.push(...(await accessibilityProblems(alice)));
      await bob.getByRole('link', { name: 'Shop' }).click();
      await bob.getByRole('button', { name: 'Plain Card: Buy for 5.00' }).click();
      await bob.getByText('You bought Plain Card. Balance: 32.50.').waitFor(WAIT);
      await bob.getByText('Balance: 32.50').first().waitFor(WAIT);
      problems.push(...(await accessibilityProblems(bob)));
      const bobItems = ok(await server.call('inventory.get', { user_id: 2, add_legacy: 0 }, { token: bobToken }));
      assert.deepEqual(
        bobItems.items.map((item: { item_proto_id: number }) => item.item_proto_id),
        [100, 100],
      );

      // Russian, and a phone's width: nothing wider than the screen.
      await bob.getByLabel('Language', { exact: true }).selectOption('ru');
      await bob.getByRole('heading', { name: 'Магазин', level: 1 }).waitFor(WAIT);
      await bob.getByRole('link', { name: 'Маркет', exact: true }).first().click();
      await bob.getByRole('heading', { name: 'Маркет', level: 1 }).waitFor(WAIT);
      await bob.setViewportSize({ width: 390, height: 844 });
      assert.equal(await overflows(bob), false);
      problems.push(...(await accessibilityProblems(bob)));
      await bob.goto(`${origin}/messages/1`, WAIT);
      await bob.getByRole('heading', { name: 'Диалог с Alice', level: 1 }).waitFor(WAIT);
      assert.equal(await overflows(bob), false);

      assert.deepEqual(problems, []);
    } finally {
      await browser?.close();
      await server?.close();
    }
  },
);
