import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { startTestServer, type TestServer } from './helpers.js';
import type { World } from '../src/world/schema.js';
import { WAIT, launchChromium, missing } from './components.js';
import { MailCatcher, mailConfig, tokenIn } from './mail-support.js';
import { callOk } from './item-fixtures.js';
import { accessibilityProblems, signIn, watchPage } from './web-support.js';

const TRADER_PASSWORD = 'trader password 1';
const PUBLIC_URL = 'http://game.test';

/** A card class to craft from (100) and into (200), a case (500) with its key (501), and a promo code giving them. */
const world: World = {
  collections: [{ collection_id: 1, title: 'Classic' }],
  item_protos: [
    { item_proto_id: 100, type: 0, title: 'Plain Card', quality_id: 1, collection_id: 1, monopoly_id: 1, can_craft: 1 },
    { item_proto_id: 200, type: 0, title: 'Shiny Card', quality_id: 2, collection_id: 1, monopoly_id: 1, can_craft: 1 },
    { item_proto_id: 300, type: 0, title: 'Trader Card', quality_id: 3, collection_id: 1, monopoly_id: 1, can_craft: 0 },
    {
      item_proto_id: 500,
      type: 2,
      title: 'Star Case',
      quality_id: 1,
      key_item_proto_id: 501,
      drop: [{ item_proto_id: 200 }],
      can_craft: 0,
    },
    { item_proto_id: 501, type: 3, title: 'Star Key', quality_id: 1, case_item_proto_ids: [500], can_craft: 0 },
  ],
  users: [{ user_id: 1, nick: 'Trader', email: 'trader@example.com', password: TRADER_PASSWORD }],
  items: [{ item_id: 1, user_id: 1, item_proto_id: 300, ts_owned: 100 }],
  promocodes: [{ code: 'WELCOME', item_proto_ids: [...Array.from({ length: 10 }, () => 100), 500, 501] }],
};

test(
  'a new player signs up, confirms the address from the e-mail, signs in, crafts, opens a case, trades live, chats and resets the password',
  { timeout: 900_000, skip: missing.chromium },
  async () => {
    const mail = await MailCatcher.start();
    let server: TestServer | undefined;
    let browser: Browser | undefined;
    const problems: string[] = [];
    try {
      server = await startTestServer({ world, config: { ...mailConfig(mail), accounts: { signup: 'open', publicUrl: PUBLIC_URL } } });
      await server.app.listen({ host: '127.0.0.1', port: 0 });
      const origin = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
      browser = await launchChromium();
      const contexts: BrowserContext[] = [await browser.newContext({ locale: 'en-US' }), await browser.newContext({ locale: 'en-US' })];
      const [player, trader] = await Promise.all(contexts.map((context) => context.newPage()));
      for (const page of [player!, trader!]) watchPage(page, origin, problems);

      // Sign up.
      const email = 'newcomer@example.com';
      const password = 'newcomer password 1';
      await player!.goto(`${origin}/signup`, WAIT);
      problems.push(...(await accessibilityProblems(player!)));
      await player!.getByLabel('E-mail', { exact: true }).fill(email);
      await player!.getByLabel('Nickname', { exact: true }).fill('Newcomer');
      await player!.getByLabel('Password', { exact: true }).fill(password);
      await player!.getByRole('button', { name: 'Sign up' }).click();
      await player!.getByText('We sent a link to your address').waitFor(WAIT);

      // The e-mail's link opens the client's page, which confirms the address.
      const message = await mail.next(email);
      const link = `${PUBLIC_URL}/confirm-email?token=${tokenIn(message)}`;
      assert.ok(message.text.includes(link), message.text);
      await player!.goto(link.replace(PUBLIC_URL, origin), WAIT);
      await player!.getByText('Your e-mail address is confirmed.').waitFor(WAIT);

      // Sign out, and in again.
      await player!.getByRole('button', { name: 'Sign out' }).click();
      await player!.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor(WAIT);
      problems.push(...(await accessibilityProblems(player!)));
      await signIn(player!, origin, email, password);
      await signIn(trader!, origin, 'trader@example.com', TRADER_PASSWORD);

      // A promo code gives ten cards, a case and its key.
      await player!.getByRole('link', { name: 'Promo codes' }).click();
      await player!.getByLabel('Promo code', { exact: true }).fill('WELCOME');
      await player!.getByRole('button', { name: 'Activate' }).click();
      await player!.getByText('You received: Plain Card').waitFor(WAIT);

      // Craft ten into one.
      await player!.getByRole('link', { name: 'Inventory' }).click();
      await player!.getByRole('button', { name: 'Plain Card: Details' }).first().click();
      problems.push(...(await accessibilityProblems(player!)));
      await player!.getByRole('button', { name: 'Craft ten into one' }).click();
      await player!.getByText('Crafted: Shiny Card').waitFor(WAIT);
      // The inventory is read again: the ten cards are gone.
      await player!
        .getByRole('button', { name: 'Plain Card: Details' })
        .first()
        .waitFor({ ...WAIT, state: 'detached' });

      // Open the case with its key: the published odds first.
      await player!.getByRole('button', { name: 'Star Case: Details' }).click();
      const odds = player!.getByRole('table', { name: 'Published odds' });
      await odds.getByRole('row', { name: /Shiny Card/ }).waitFor(WAIT);
      assert.deepEqual(await odds.getByRole('row').allInnerTexts(), ['Shiny Card\t100.00 %']);
      await player!.getByRole('button', { name: 'Open with Star Key' }).click();
      await player!.getByText('You received: Shiny Card').waitFor(WAIT);
      await player!.getByRole('button', { name: 'Shiny Card: Details' }).nth(1).waitFor(WAIT);
      await player!.getByRole('button', { name: 'Star Case: Details' }).waitFor({ ...WAIT, state: 'detached' });
      assert.equal(await player!.getByRole('button', { name: 'Shiny Card: Details' }).count(), 2);

      // Equip one Shiny Card on the classic board: shown as equipped, and kept out of the trade below.
      await player!.getByRole('button', { name: 'Shiny Card: Details' }).first().click();
      await player!.getByLabel('Board', { exact: true }).selectOption('classic');
      await player!.getByRole('button', { name: 'Equip', exact: true }).click();
      await player!.getByText('Equipped: Shiny Card').waitFor(WAIT);
      await player!.getByText('Equipped: on the classic board').waitFor(WAIT);
      await player!.getByRole('button', { name: 'Shiny Card (Equipped): Details' }).waitFor(WAIT);
      assert.equal(await player!.getByRole('button', { name: 'Shiny Card: Details' }).count(), 1);
      problems.push(...(await accessibilityProblems(player!)));
      const playerId = (await callOk(server, 'users.search', { query: 'Newcomer' })).users[0].user_id;
      const playerItems = await callOk(server, 'inventory.get', { user_id: playerId, add_legacy: 0 });
      const shinyIds = playerItems.items
        .filter((item: { title: string }) => item.title === 'Shiny Card')
        .map((i: { item_id: number }) => i.item_id);
      const equipped = (
        await server.db.kysely
          .selectFrom('equipped')
          .select(['item_id', 'slot', 'game', 'monopoly_id'])
          .where('user_id', '=', playerId)
          .execute()
      ).map((row) => ({ ...row, item_id: Number(row.item_id), monopoly_id: Number(row.monopoly_id) }));
      assert.equal(equipped.length, 1);
      assert.ok(shinyIds.includes(equipped[0]!.item_id));
      assert.deepEqual({ ...equipped[0], item_id: 0 }, { item_id: 0, slot: 'cards', game: 'classic', monopoly_id: 1 });

      // A trade offer the trader, watching the incoming list, sees arrive and accepts.
      await trader!.getByRole('link', { name: 'Trades' }).click();
      await trader!.getByText('No trades here.').waitFor(WAIT);
      await player!.goto(`${origin}/trades/new?to=1`, WAIT);
      await player!.getByRole('heading', { name: 'Trade with Trader' }).waitFor(WAIT);
      problems.push(...(await accessibilityProblems(player!)));
      await player!.getByRole('group', { name: 'You give' }).getByRole('checkbox', { name: 'Shiny Card' }).first().check();
      await player!.getByRole('group', { name: 'You get' }).getByRole('checkbox', { name: 'Trader Card' }).check();
      await player!.getByRole('button', { name: 'Send the offer' }).click();
      await player!.getByText('To Trader').waitFor(WAIT);
      const offer = trader!.locator('.trade').filter({ hasText: 'From Newcomer' });
      await offer.getByRole('button', { name: 'Accept' }).click();
      await offer.waitFor({ ...WAIT, state: 'detached' });
      await trader!.getByRole('link', { name: 'History' }).click();
      await trader!.locator('.trade').filter({ hasText: 'Newcomer → Trader' }).getByText('accepted').waitFor(WAIT);
      problems.push(...(await accessibilityProblems(trader!)));
      const traderItems = await callOk(server, 'inventory.get', { user_id: 1, add_legacy: 0 });
      assert.deepEqual(
        traderItems.items.map((item: { title: string }) => item.title),
        ['Shiny Card'],
      );
      // The equipped card stayed; taken off, it is free again.
      await player!.getByRole('link', { name: 'Inventory' }).click();
      await player!.getByRole('button', { name: 'Shiny Card (Equipped): Details' }).click();
      await player!.getByRole('button', { name: 'Take off' }).click();
      await player!.getByText('Taken off: Shiny Card').waitFor(WAIT);
      await player!.getByRole('button', { name: 'Shiny Card: Details' }).waitFor(WAIT);
      assert.equal(await player!.getByRole('button', { name: 'Shiny Card (Equipped): Details' }).count(), 0);
      assert.deepEqual(await server.db.kysely.selectFrom('equipped').select('item_id').where('user_id', '=', playerId).execute(), []);

      // The global chat, live both ways.
      await trader!.getByRole('link', { name: 'Home' }).click();
      await trader!.getByText('Live').first().waitFor(WAIT);
      await player!.getByRole('link', { name: 'Home' }).click();
      await player!.getByText('Live').first().waitFor(WAIT);
      await player!.getByLabel('Message', { exact: true }).fill('hello from the browser');
      await player!.getByRole('button', { name: 'Send' }).click();
      await trader!.getByRole('list', { name: 'Global chat' }).getByText('hello from the browser').waitFor(WAIT);
      problems.push(...(await accessibilityProblems(player!)));

      // Russian, chosen in the page and kept.
      await player!.getByLabel('Language', { exact: true }).selectOption('ru');
      await player!.getByRole('heading', { name: 'Главная', level: 1 }).waitFor(WAIT);
      await player!.reload(WAIT);
      await player!.getByRole('heading', { name: 'Главная', level: 1 }).waitFor(WAIT);

      // A forgotten password: the e-mail's link opens the page that sets a new one.
      await player!.getByLabel('Язык', { exact: true }).selectOption('en');
      await player!.getByRole('button', { name: 'Sign out' }).click();
      await player!.getByRole('link', { name: 'Forgot the password?' }).click();
      await player!.getByLabel('E-mail', { exact: true }).fill(email);
      await player!.getByRole('button', { name: 'Send the reset link' }).click();
      await player!.getByText('If an account has this address').waitFor(WAIT);
      const reset = await mail.next(email);
      const resetLink = `${PUBLIC_URL}/reset-password?token=${tokenIn(reset)}`;
      assert.ok(reset.text.includes(resetLink), reset.text);
      await player!.goto(resetLink.replace(PUBLIC_URL, origin), WAIT);
      await player!.getByLabel('New password', { exact: true }).fill('a brand new password 2');
      await player!.getByRole('button', { name: 'Set the new password' }).click();
      await player!.getByText('The password is changed.').waitFor(WAIT);
      await signIn(player!, origin, email, 'a brand new password 2');

      assert.deepEqual(problems, []);
    } finally {
      await browser?.close();
      await server?.close();
      await mail.close();
    }
  },
);
