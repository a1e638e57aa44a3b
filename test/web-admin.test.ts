import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { startTestServer, ok, type TestServer } from './helpers.js';
import type { World } from '../src/world/schema.js';
import { WAIT, launchChromium, missing } from './components.js';
import { tokenFor } from './item-fixtures.js';
import { accessibilityProblems, signIn, watchPage } from './web-support.js';

const ADMIN_KEY = 'web-console-admin-key-for-tests';

const world: World = {
  collections: [{ collection_id: 1, title: 'Classic' }],
  item_protos: [{ item_proto_id: 100, type: 0, title: 'Plain Card', quality_id: 1, collection_id: 1, monopoly_id: 1, can_craft: 0 }],
  users: [
    { user_id: 1, nick: 'Alice', email: 'alice@example.com', password: 'alice password 1' },
    { user_id: 2, nick: 'Bob', email: 'bob@example.com', password: 'bob password 1' },
  ],
  items: [{ item_id: 1, user_id: 2, item_proto_id: 100, ts_owned: 100 }],
};

test(
  'an operator runs the server from the console: users, money and items, chat and messages, the market, apps, promo codes, the audit log; a banned player is signed out',
  { timeout: 900_000, skip: missing.chromium },
  async () => {
    let server: TestServer | undefined;
    let browser: Browser | undefined;
    const problems: string[] = [];
    try {
      server = await startTestServer({ world, config: { adminKey: ADMIN_KEY } });
      await server.app.listen({ host: '127.0.0.1', port: 0 });
      const origin = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
      const bobToken = await tokenFor(server, 2);
      const aliceToken = await tokenFor(server, 1);
      ok(await server.call('gchat.send', { message: 'a rude remark' }, { token: bobToken }));
      ok(await server.call('im.send', { user_id: 1, text: 'a private insult' }, { token: bobToken }));
      ok(await server.call('market.sell', { thing_id: 1, price: 30 }, { token: bobToken }));

      browser = await launchChromium();
      const operator = await (await browser.newContext({ locale: 'en-US' })).newPage();
      const bob = await (await browser.newContext({ locale: 'en-US' })).newPage();
      for (const page of [operator, bob]) watchPage(page, origin, problems);
      await signIn(bob, origin, 'bob@example.com', 'bob password 1');
      await bob.getByText('Live').first().waitFor(WAIT);
      await bob.getByRole('list', { name: 'Global chat' }).getByText('a rude remark').waitFor(WAIT);

      // Without the key, the console refuses.
      await operator.goto(`${origin}/admin`, WAIT);
      await operator.getByText('This console is for the operators of this server.').waitFor(WAIT);
      problems.push(...(await accessibilityProblems(operator)));
      await operator.getByLabel('Admin key', { exact: true }).fill('not-the-key-of-this-server');
      await operator.getByRole('button', { name: 'Open the console' }).click();
      await operator.getByText('The console refused: the admin key is wrong.').waitFor(WAIT);
      await operator.getByLabel('Admin key', { exact: true }).fill(ADMIN_KEY);
      await operator.getByRole('button', { name: 'Open the console' }).click();
      await operator.getByRole('heading', { name: 'Operator console · Users', level: 1 }).waitFor(WAIT);
      const kept = await operator.evaluate(() => JSON.stringify({ ...localStorage }));
      assert.ok(!kept.includes(ADMIN_KEY), 'the key is never kept beyond the tab');

      // A user: found by nick, money and items granted, a role, a mute the player meets.
      // Found by the start of a nick (both), then by e-mail address (one).
      const search = operator.getByLabel('Nick, domain, e-mail or id', { exact: true });
      await search.fill('b');
      await operator.getByRole('button', { name: 'Find' }).click();
      await operator.getByText('Something in the form is not right').waitFor(WAIT);
      await search.fill('Al');
      await operator.getByRole('button', { name: 'Find' }).click();
      await operator.getByRole('link', { name: 'Alice (#1)' }).waitFor(WAIT);
      await operator.getByText('In all: 1').waitFor(WAIT);
      await search.fill('BOB@example.com');
      await operator.getByRole('button', { name: 'Find' }).click();
      await operator.getByRole('link', { name: 'Bob (#2)' }).click();
      await operator.getByRole('heading', { name: 'Bob (#2)' }).waitFor(WAIT);
      problems.push(...(await accessibilityProblems(operator)));
      await operator.getByLabel('Amount', { exact: true }).fill('20');
      await operator.getByLabel('Reason', { exact: true }).first().fill('a prize');
      await operator.getByRole('button', { name: 'Grant money' }).click();
      await operator.getByText('Done: Grant money.').waitFor(WAIT);
      await bob.getByText('Balance: 20.00').waitFor(WAIT);
      await operator.getByLabel('Prototype id', { exact: true }).fill('100');
      await operator.getByLabel('Copies', { exact: true }).fill('2');
      await operator.getByRole('button', { name: 'Grant', exact: true }).click();
      await operator.getByText('Done: Grant items.').waitFor(WAIT);
      const items = ok(await server.call('inventory.get', { user_id: 2, add_legacy: 0 }, { token: bobToken })).items;
      assert.equal(items.length, 2, 'the two granted (the third is on sale)');
      await operator.getByRole('checkbox', { name: 'Moderator' }).check();
      await operator.getByRole('button', { name: 'Save the roles' }).click();
      await operator.getByText('Done: Save the roles.').waitFor(WAIT);
      assert.equal(ok(await server.call('admin.getUser', { user_id: 2 }, { headers: { 'x-admin-key': ADMIN_KEY } })).user.moderator, 1);
      await operator.getByLabel('Mute for (minutes)', { exact: true }).fill('30');
      await operator.getByRole('button', { name: 'Mute', exact: true }).click();
      await operator.getByText('Done: Mute.').waitFor(WAIT);
      await operator.getByText(/muted until/).waitFor(WAIT);
      // The account's own audit: what was done to it, newest first, read again after each action.
      const trail = operator.getByRole('region', { name: 'Audit of actions on this account' });
      await trail.getByText('admin.muteUser → user:2').waitFor(WAIT);
      await trail.getByText('admin.grantMoney → user:2').waitFor(WAIT);
      await bob.getByLabel('Message', { exact: true }).fill('am I muted?');
      await bob.getByRole('button', { name: 'Send' }).click();
      await bob.getByText('You are muted and cannot write in the chat for now.').waitFor(WAIT);

      // The user's listing, cancelled with a reason.
      const listing = operator.getByRole('button', { name: 'Cancel the listing #1' });
      await operator.getByLabel('Reason', { exact: true }).last().fill('suspected fraud');
      await listing.click();
      await operator.getByText('Done: Cancel the listing #1.').waitFor(WAIT);
      await listing.waitFor({ ...WAIT, state: 'detached' });
      assert.equal(ok(await server.call('market.getMy', {}, { token: bobToken })).count, 0);

      // The chat: a message deleted leaves the player's page live; modes.
      await operator.getByRole('link', { name: 'Chat', exact: true }).click();
      await operator.getByText('Now: open, no restriction; slow-mode interval 10 s.').waitFor(WAIT);
      await operator.getByRole('button', { name: 'Delete: a rude remark' }).click();
      await operator.getByText(/^Done: Delete/).waitFor(WAIT);
      await bob
        .getByRole('list', { name: 'Global chat' })
        .getByText('a rude remark')
        .waitFor({ ...WAIT, state: 'detached' });
      await operator.getByRole('checkbox', { name: 'Slow mode' }).check();
      await operator.getByRole('button', { name: 'Apply' }).click();
      await operator.getByText('Done: Chat modes.').waitFor(WAIT);
      await operator.getByText('Now: Slow mode; slow-mode interval 10 s.').waitFor(WAIT);
      // Read again from the server: the console shows what is set, not what it sent.
      await operator.reload(WAIT);
      await operator.getByText('Now: Slow mode; slow-mode interval 10 s.').waitFor(WAIT);
      assert.equal(await operator.getByRole('checkbox', { name: 'Slow mode' }).isChecked(), true);
      problems.push(...(await accessibilityProblems(operator)));

      // Private messages: read and deleted.
      await operator.getByRole('link', { name: 'Messages', exact: true }).click();
      await operator.getByLabel('User id', { exact: true }).fill('2');
      await operator.getByLabel('Other user id', { exact: true }).fill('1');
      await operator.getByRole('button', { name: 'Open' }).click();
      await operator.getByRole('button', { name: 'Delete: a private insult' }).click();
      await operator.getByText('Nothing here.').waitFor(WAIT);
      assert.deepEqual(ok(await server.call('im.historyGet', { user_id: 2 }, { token: aliceToken })).messages, []);

      // OAuth apps: registered (the secret shown once) and disabled.
      await operator.getByRole('link', { name: 'OAuth apps' }).click();
      await operator.getByLabel('Name', { exact: true }).fill('Score Keeper');
      await operator.getByLabel('Redirect URIs (comma-separated)', { exact: true }).fill('https://scores.example/callback');
      await operator.getByRole('button', { name: 'Create' }).click();
      await operator.getByText('The app’s secret, shown only now:').waitFor(WAIT);
      await operator.getByRole('button', { name: 'Disable: Score Keeper' }).click();
      await operator.getByRole('button', { name: 'Disable: Score Keeper' }).waitFor({ ...WAIT, state: 'detached' });
      assert.equal(ok(await server.call('admin.listApps', {}, { headers: { 'x-admin-key': ADMIN_KEY } })).apps[0].active, 0);

      // Promo codes: created, then disabled.
      await operator.getByRole('link', { name: 'Promo codes' }).click();
      await operator.getByLabel('Code', { exact: true }).fill('SPRING');
      await operator.getByLabel('Prototype ids (comma-separated)', { exact: true }).fill('100,100');
      await operator.getByRole('button', { name: 'Create' }).click();
      await operator.getByText('Done: SPRING.').waitFor(WAIT);
      await operator.getByRole('button', { name: 'Disable: SPRING' }).click();
      await operator.getByRole('button', { name: 'Disable: SPRING' }).waitFor({ ...WAIT, state: 'detached' });
      problems.push(...(await accessibilityProblems(operator)));

      // A ban: the player's page signs out at once.
      await operator.goto(`${origin}/admin/users/2`, WAIT);
      await operator.getByRole('button', { name: 'Ban', exact: true }).click();
      await operator.getByText('Done: Ban.').waitFor(WAIT);
      await bob.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor(WAIT);

      // Every action is in the audit log.
      await operator.getByRole('link', { name: 'Audit log' }).click();
      await operator.getByLabel('Method (e.g. admin.banUser)', { exact: true }).fill('admin.banUser');
      await operator.getByRole('button', { name: 'Filter' }).click();
      await operator.getByText('In all: 1').waitFor(WAIT);
      // By what was acted on, with the method and alone.
      await operator.getByLabel('Acted on (e.g. user:2, item:17)', { exact: true }).fill('user:1');
      await operator.getByRole('button', { name: 'Filter' }).click();
      await operator.getByText('Nothing here.').waitFor(WAIT);
      await operator.getByLabel('Method (e.g. admin.banUser)', { exact: true }).fill('');
      await operator.getByLabel('Acted on (e.g. user:2, item:17)', { exact: true }).fill('item:1');
      await operator.getByRole('button', { name: 'Filter' }).click();
      await operator.getByText('admin.cancelListing → item:1').waitFor(WAIT);
      await operator.getByText('In all: 1').waitFor(WAIT);
      const actions = (await server.db.kysely.selectFrom('audit_log').select('action').distinct().execute()).map((row) => row.action);
      for (const action of [
        'admin.searchUsers',
        'admin.getUser',
        'admin.getChatStatus',
        'admin.auditLog',
        'admin.grantMoney',
        'admin.grantItems',
        'admin.updateUser',
        'admin.muteUser',
        'admin.cancelListing',
        'admin.deleteMessage',
        'admin.setChatStatus',
        'admin.imDelete',
        'admin.createApp',
        'admin.disableApp',
        'admin.createPromocode',
        'admin.disablePromocode',
        'admin.banUser',
      ])
        assert.ok(actions.includes(action), `${action} is in the audit log`);

      // Russian; closing the console forgets the key.
      await operator.getByLabel('Language', { exact: true }).selectOption('ru');
      await operator.getByRole('heading', { name: 'Консоль оператора · Журнал аудита', level: 1 }).waitFor(WAIT);
      problems.push(...(await accessibilityProblems(operator)));
      await operator.getByRole('button', { name: 'Закрыть консоль' }).click();
      await operator.getByLabel('Ключ администратора', { exact: true }).waitFor(WAIT);
      await operator.reload(WAIT);
      await operator.getByLabel('Ключ администратора', { exact: true }).waitFor(WAIT);

      assert.deepEqual(problems, []);
    } finally {
      await browser?.close();
      await server?.close();
    }
  },
);
