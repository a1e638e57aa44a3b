import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { startTestServer, type TestServer } from './helpers.js';
import { defaultConfig } from '../src/config.js';
import type { World } from '../src/world/schema.js';
import { WAIT, launchChromium, missing } from './components.js';
import { accessibilityProblems, signIn, watchPage } from './web-support.js';

const world: World = {
  users: [
    { user_id: 1, nick: 'Alice', email: 'alice@example.com', password: 'alice password 1' },
    { user_id: 2, nick: 'Bob', email: 'bob@example.com', password: 'bob password 1' },
  ],
};

/** Whether the page is wider than the window (a phone would scroll sideways). */
const overflows = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
/** How many events the page's log has applied. */
const eventCount = async (page: Page) => Number(await page.locator('.game-log').getAttribute('data-events'));
/** Waits until the page has applied more than `count` events. */
const moreEvents = (page: Page, count: number) =>
  page.waitForFunction((n) => Number(document.querySelector('.game-log')?.getAttribute('data-events')) > n, count, WAIT);

test(
  'a player plays the computer from the browser, a spectator watches the same moves, the finished game replays; Russian at a phone width',
  { timeout: 900_000, skip: missing.chromium },
  async () => {
    let server: TestServer | undefined;
    let browser: Browser | undefined;
    const problems: string[] = [];
    try {
      server = await startTestServer({ world, config: { games: { ...defaultConfig().games, spectatorDelaySeconds: 0 } } });
      await server.app.listen({ host: '127.0.0.1', port: 0 });
      const origin = `http://127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
      browser = await launchChromium();
      const alice = await (await browser.newContext({ locale: 'en-US' })).newPage();
      const bob = await (await browser.newContext({ locale: 'en-US' })).newPage();
      for (const page of [alice, bob]) watchPage(page, origin, problems);
      alice.on('dialog', (dialog) => void dialog.accept());
      await signIn(alice, origin, 'alice@example.com', 'alice password 1');
      await signIn(bob, origin, 'bob@example.com', 'bob password 1');

      // Alice starts a game against one computer player from the table's page.
      await alice.getByRole('link', { name: 'Game', exact: true }).click();
      await alice.getByRole('heading', { name: 'Game table', level: 1 }).waitFor(WAIT);
      await alice.getByText('You have not played yet.').waitFor(WAIT);
      problems.push(...(await accessibilityProblems(alice)));
      await alice.getByLabel('Seconds for each action', { exact: true }).fill('3600');
      await alice.getByRole('button', { name: 'Start the game' }).click();
      await alice.getByRole('heading', { name: /^Game \d+$/, level: 1 }).waitFor(WAIT);
      const match = /\/table\/#\/(gs-1)\/(\d+)$/.exec(alice.url());
      assert.ok(match, alice.url());
      const gameId = Number(match[2]);
      assert.equal(await alice.getByRole('heading', { level: 1 }).innerText(), `Game ${gameId}`);
      const panel = alice.getByRole('region', { name: 'Your move' });
      await panel.getByText('Your turn.').waitFor(WAIT);
      await alice.getByText('Alice (you)').waitFor(WAIT);
      await alice.getByText('Computer 1', { exact: true }).waitFor(WAIT);
      await alice.getByText('3600 s left').waitFor(WAIT);
      problems.push(...(await accessibilityProblems(alice)));

      // One live game at a time: starting another points to this one.
      await alice.getByRole('link', { name: 'Game', exact: true }).click();
      await alice.getByRole('link', { name: `Game ${gameId}, under way: open the table` }).waitFor(WAIT);
      await alice.getByRole('button', { name: 'Start the game' }).click();
      await alice.getByText('You already play a game: finish or leave it first.').waitFor(WAIT);
      await alice.getByRole('link', { name: 'Open that game' }).click();
      await alice.getByRole('heading', { name: `Game ${gameId}`, level: 1 }).waitFor(WAIT);
      await panel.getByText('Your turn.').waitFor(WAIT);

      // Bob watches the same game as a spectator (the test server's delay is 0).
      await bob.goto(`${origin}/table/#/gs-1/${gameId}`, WAIT);
      await bob.getByRole('heading', { name: `Game ${gameId}`, level: 1 }).waitFor(WAIT);
      await bob.getByText('You are watching this game: the players see each move before you do.').waitFor(WAIT);
      assert.equal(await bob.getByRole('button', { name: 'Roll the dice' }).count(), 0);

      // Alice plays from the turn's action list: puts to auction, buys, pays what she owes, mortgages a field and
      // makes a deal by choosing them on the page; whatever the dice bring (the computer's deals are rejected).
      const board = alice.locator('.board');
      const done = { auction: 0, bought: [] as string[], paid: 0, rolls: 0, mortgaged: '', deal: false };
      for (let step = 0; step < 300; step++) {
        if (done.auction && done.bought.length > 0 && done.paid && done.rolls >= 6 && done.mortgaged && done.deal) break;
        await panel.getByText('Your turn.').waitFor(WAIT);
        const before = await eventCount(alice);
        // The buttons are enabled again once the game has answered the last action.
        await panel.locator('.actions button:enabled').first().waitFor(WAIT);
        const names = (await panel.locator('.actions button:enabled').allInnerTexts()).map((text) => text.trim());
        const pick = (pattern: RegExp) => names.find((name) => pattern.test(name));
        const managing = (await panel.getByText('choose one of your fields on the board').count()) > 0;
        if (!done.mortgaged && done.bought.length > 0 && managing && pick(/^Roll the dice$/)) {
          // Mortgage a field by choosing it on the board; the board shows it mortgaged.
          const field = done.bought[0]!;
          await board.getByRole('button', { name: new RegExp(`^${field}, owned by Alice`) }).click();
          await alice.getByRole('heading', { name: field, level: 2 }).waitFor(WAIT);
          await alice.getByRole('region', { name: field }).getByRole('button', { name: 'Mortgage' }).click();
          await board.getByRole('button', { name: new RegExp(`^${field}, owned by Alice, mortgaged`) }).waitFor(WAIT);
          await alice.getByRole('button', { name: 'Close' }).click();
          done.mortgaged = field;
          continue;
        }
        if (!done.deal && done.mortgaged && done.bought.length > 1 && pick(/^Roll the dice$/) && names.includes('Offer a deal')) {
          // A deal with the computer: a field and 100 for nothing, which it accepts; the field changes hands.
          const field = done.bought.at(-1)!;
          await panel.getByRole('button', { name: 'Offer a deal' }).click();
          await panel.getByLabel('With', { exact: true }).selectOption({ label: 'Computer 1' });
          await panel.getByRole('group', { name: 'You give' }).getByLabel(field, { exact: true }).check();
          await panel.getByLabel('Cash you give', { exact: true }).fill('100');
          await panel.getByRole('button', { name: 'Send the offer' }).click();
          await alice.locator('.game-log li').filter({ hasText: 'Computer 1 accepted the deal.' }).waitFor(WAIT);
          await board.getByRole('button', { name: new RegExp(`^${field}, owned by Computer 1`) }).waitFor(WAIT);
          done.deal = true;
          continue;
        }
        let name: string | undefined;
        // The first offer goes to auction, two are bought, the rest go to auction too (cash stays ample for the debts).
        if (!done.auction || done.bought.length >= 2) name = pick(/^Put to auction$/);
        name ??=
          pick(/^Buy for /) ??
          pick(/^Pay [\d,]+$/) ??
          pick(/^Roll the dice$/) ??
          pick(/^Leave the auction$/) ??
          pick(/^Reject the deal$/) ??
          pick(/^Pay [\d,]+ to leave jail$/);
        assert.ok(name, `no action to take among ${names.join(', ')}`);
        await panel.getByRole('button', { name, exact: true }).click();
        await moreEvents(alice, before);
        const log = alice.locator('.game-log li');
        if (name === 'Put to auction') {
          await log
            .filter({ hasText: /^Alice put .+ to auction from / })
            .first()
            .waitFor(WAIT);
          done.auction++;
        } else if (name.startsWith('Buy for ')) {
          const bought = await log
            .filter({ hasText: /^Alice bought / })
            .first()
            .innerText();
          const field = /^Alice bought (.+) for [\d,]+\.$/.exec(bought)![1]!;
          // The board shows the field as hers.
          await board.getByRole('button', { name: new RegExp(`^${field}, owned by Alice`) }).waitFor(WAIT);
          done.bought.push(field);
        } else if (name.startsWith('Pay ')) {
          await log
            .filter({ hasText: /^Alice paid / })
            .first()
            .waitFor(WAIT);
          done.paid++;
        } else if (name === 'Roll the dice') done.rolls++;
        if (name === 'Roll the dice' && done.rolls === 3) {
          // Every connection is cut: both pages connect again and go on from the packet after their last one.
          const sockets = (server.app as unknown as { websocketServer: { clients: Set<{ terminate(): void }> } }).websocketServer.clients;
          for (const socket of sockets) socket.terminate();
          await alice.getByText('Connecting to the game…').waitFor(WAIT);
          await alice.getByText('Connecting to the game…').waitFor({ ...WAIT, state: 'detached' });
        }
      }
      assert.ok(
        done.auction && done.bought.length > 0 && done.paid && done.rolls >= 6 && done.mortgaged && done.deal,
        JSON.stringify(done),
      );
      problems.push(...(await accessibilityProblems(alice)));

      // The spectator has seen every move: the same events, players and board.
      const seen = await eventCount(alice);
      await bob.waitForFunction((n) => document.querySelector('.game-log')?.getAttribute('data-events') === String(n), seen, WAIT);
      assert.equal(await bob.locator('.game-log').innerText(), await alice.locator('.game-log').innerText());
      assert.deepEqual(await bob.locator('.players .cash').allInnerTexts(), await alice.locator('.players .cash').allInnerTexts());
      const labels = (page: Page) =>
        page.locator('.board .cell .hit').evaluateAll((cells) => cells.map((cell) => cell.getAttribute('aria-label')));
      assert.deepEqual(await labels(bob), await labels(alice));
      await bob.getByRole('button', { name: new RegExp(`^${done.mortgaged}, owned by Alice, mortgaged`) }).waitFor(WAIT);
      problems.push(...(await accessibilityProblems(bob)));

      // Alice leaves: the computer wins, both pages say so, and the replay steps through the game.
      await panel.getByRole('button', { name: 'Leave the game' }).click();
      await alice.getByText('The game is over. Computer 1 won.').waitFor(WAIT);
      await bob.getByText('The game is over. Computer 1 won.').waitFor(WAIT);
      const total = await eventCount(alice);
      await alice.getByRole('link', { name: 'Watch the replay' }).click();
      await alice.getByRole('heading', { name: `Replay of game ${gameId}`, level: 1 }).waitFor(WAIT);
      const position = alice.getByText(/^Step \d+ of \d+$/);
      const packets = Number(/of (\d+)$/.exec(await position.innerText())![1]);
      assert.ok(packets > 10, `${packets} packets`);
      assert.equal(await position.innerText(), `Step 1 of ${packets}`);
      assert.equal(await eventCount(alice), 0);
      await alice.getByRole('button', { name: 'Step forward' }).click();
      await alice.getByRole('button', { name: 'Step forward' }).click();
      await alice.getByText(`Step 3 of ${packets}`).waitFor(WAIT);
      assert.ok((await eventCount(alice)) > 0);
      await alice.getByRole('button', { name: 'Step back' }).click();
      await alice.getByText(`Step 2 of ${packets}`).waitFor(WAIT);
      await alice.getByRole('button', { name: 'Play' }).click();
      await alice.getByText(`Step 5 of ${packets}`).waitFor(WAIT);
      await alice.getByRole('button', { name: 'Pause' }).click();
      const paused = await position.innerText();
      for (let n = Number(/^Step (\d+)/.exec(paused)![1]); n < packets; n++)
        await alice.getByRole('button', { name: 'Step forward' }).click();
      await alice.getByText(`Step ${packets} of ${packets}`).waitFor(WAIT);
      assert.equal(await eventCount(alice), total);
      await alice.locator('.game-log li').first().getByText('The game is over: Computer 1 won.').waitFor(WAIT);
      problems.push(...(await accessibilityProblems(alice)));

      // The table's home lists the game; in Russian, at a phone's width.
      await alice.getByRole('link', { name: 'Game', exact: true }).click();
      await alice.getByRole('link', { name: `Game ${gameId}, over: watch the replay` }).waitFor(WAIT);
      await alice.setViewportSize({ width: 390, height: 844 });
      await alice.getByLabel('Language', { exact: true }).selectOption('ru');
      await alice.getByRole('heading', { name: 'Игровой стол', level: 1 }).waitFor(WAIT);
      await alice.getByRole('link', { name: `Игра ${gameId} окончена: смотреть повтор` }).click();
      await alice.getByRole('heading', { name: `Повтор игры ${gameId}`, level: 1 }).waitFor(WAIT);
      await alice.getByRole('button', { name: 'Шаг вперёд' }).click();
      await alice.getByText(`Шаг 2 из ${packets}`).waitFor(WAIT);
      await alice
        .locator('.game-log li')
        .filter({ hasText: /^Alice выбросил \d и \d\.$/ })
        .waitFor(WAIT);
      assert.equal(await overflows(alice), false);
      problems.push(...(await accessibilityProblems(alice)));

      assert.deepEqual(problems, []);
    } finally {
      await browser?.close();
      await server?.close();
    }
  },
);
