/**
 * Takes the README's screenshots of the web client (docs/screenshots/): a server on the demo
 * world in a temporary folder, Chromium (TEST_CHROMIUM, else chromium), signed in as alice.
 *
 *   npx tsx scripts/web-screenshots.ts
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchBrowser, startDemoServer } from './demo-server.js';

const out = join(new URL('..', import.meta.url).pathname, 'docs/screenshots');
const server = await startDemoServer();
const origin = server.origin;
const browser = await launchBrowser();
try {
  mkdirSync(out, { recursive: true });
  const context = await browser.newContext({ viewport: { width: 1200, height: 760 }, locale: 'en-US' });
  const page = await context.newPage();
  await page.goto(`${origin}/signin`);
  await page.screenshot({ path: join(out, 'signin.png') });
  await page.getByLabel('E-mail', { exact: true }).fill('alice@example.com');
  await page.getByLabel('Password', { exact: true }).fill('alice-demo-password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('Live').first().waitFor();
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(out, 'home.png') });
  await page.goto(`${origin}/profile/2`);
  await page.getByRole('button', { name: 'Block' }).waitFor();
  await page.screenshot({ path: join(out, 'profile.png') });
  await page.goto(`${origin}/inventory`);
  await page
    .getByRole('button', { name: /Case: Details/ })
    .first()
    .click();
  await page.getByRole('table', { name: 'Published odds' }).waitFor();
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(out, 'inventory.png') });
  await page.goto(`${origin}/trades/new?to=2`);
  await page.getByRole('button', { name: 'Send the offer' }).waitFor();
  await page.screenshot({ path: join(out, 'trade-new.png') });
  await page.goto(`${origin}/settings`);
  await page.getByRole('button', { name: 'Set up' }).click();
  await page.locator('img.qr').waitFor();
  await page.screenshot({ path: join(out, 'settings.png') });
  await page.goto(`${origin}/shop`);
  await page.getByRole('list', { name: 'Shop' }).waitFor();
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(out, 'shop.png') });
  await page.goto(`${origin}/table/`);
  await page.getByRole('button', { name: 'Start the game' }).click();
  const panel = page.getByRole('region', { name: 'Your move' });
  for (let moves = 0; moves < 12; moves++) {
    await panel.locator('.actions button:enabled').first().waitFor();
    const names = await panel.locator('.actions button:enabled').allInnerTexts();
    const name = names.find((n) => /^(Buy for|Pay [\d,]+$|Roll the dice|Leave the auction|Reject the deal)/.test(n)) ?? names[0]!;
    await panel.getByRole('button', { name, exact: true }).click();
    await page.waitForTimeout(300);
  }
  await page.locator('.board .cell.owned').first().waitFor();
  await page.screenshot({ path: join(out, 'table.png') });
  await panel.locator('.actions button:enabled').first().waitFor();
  page.once('dialog', (dialog) => void dialog.accept());
  await panel.getByRole('button', { name: 'Leave the game' }).click();
  await page.getByRole('link', { name: 'Watch the replay' }).click();
  await page.getByRole('button', { name: 'Play' }).waitFor();
  await page.getByRole('button', { name: 'Step forward' }).click();
  const phone = await browser.newContext({ viewport: { width: 390, height: 780 }, locale: 'ru-RU', deviceScaleFactor: 1 });
  const mobile = await phone.newPage();
  await mobile.goto(`${origin}/signin`);
  await mobile.evaluate((session) => localStorage.setItem('session', session), await page.evaluate(() => localStorage.getItem('session')!));
  await mobile.goto(`${origin}/`);
  await mobile.getByText('На связи').first().waitFor();
  await mobile.waitForTimeout(500);
  await mobile.screenshot({ path: join(out, 'home-phone-ru.png') });
  await mobile.goto(`${origin}/messages/2`);
  await mobile.getByRole('heading', { level: 1 }).filter({ hasText: 'Диалог' }).waitFor();
  for (const text of ['Привет! Сыграем вечером?', 'Меняю кубики на кейс, если интересно.']) {
    await mobile.getByLabel('Ваше сообщение', { exact: true }).fill(text);
    await mobile.getByRole('button', { name: 'Отправить' }).click();
    await mobile.getByText(text).waitFor();
  }
  await mobile.screenshot({ path: join(out, 'messages-phone-ru.png') });
  await mobile.goto(`${origin}/market`);
  await mobile.getByRole('heading', { name: 'Маркет', level: 1 }).waitFor();
  await mobile.waitForTimeout(300);
  await mobile.screenshot({ path: join(out, 'market-phone-ru.png') });
  await mobile.goto(`${origin}/table/`);
  await mobile
    .getByRole('link', { name: /окончена: смотреть повтор/ })
    .first()
    .click();
  await mobile.getByRole('button', { name: 'Шаг вперёд' }).waitFor();
  const forward = mobile.getByRole('button', { name: 'Шаг вперёд' });
  for (let step = 0; step < 30 && (await forward.isEnabled()); step++) await forward.click();
  await mobile.waitForTimeout(300);
  await mobile.screenshot({ path: join(out, 'table-replay-phone-ru.png'), fullPage: true });

  // The lobby: Carol waits in a public room that Dave joins; Alice makes a room of her own and invites Bob.
  const others = [];
  for (const name of ['carol', 'dave']) {
    const other = await (await browser.newContext({ viewport: { width: 1200, height: 760 }, locale: 'en-US' })).newPage();
    await other.goto(`${origin}/signin`);
    await other.getByLabel('E-mail', { exact: true }).fill(`${name}@example.com`);
    await other.getByLabel('Password', { exact: true }).fill(`${name}-demo-password`);
    await other.getByRole('button', { name: 'Sign in' }).click();
    await other.getByText('Live').first().waitFor();
    await other.goto(`${origin}/lobby`);
    others.push(other);
  }
  const [carol, dave] = others as [Page, Page];
  await carol.getByLabel('Players', { exact: true }).selectOption('3');
  await carol.getByRole('button', { name: 'Create', exact: true }).click();
  await dave.getByRole('button', { name: /^Join the room of Carol/ }).click();
  await carol.getByRole('button', { name: 'Remove: Dave' }).waitFor();
  await page.goto(`${origin}/lobby`);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await page.getByRole('button', { name: 'Invite', exact: true }).click();
  await page.getByText('The invitation to Bob is sent.').waitFor();
  await page.getByRole('listitem', { name: /^Room of Carol/ }).waitFor();
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(out, 'lobby.png') });
  await mobile.goto(`${origin}/lobby`);
  await mobile.getByRole('heading', { name: 'Ваша комната', level: 2 }).waitFor();
  await mobile.waitForTimeout(300);
  await mobile.screenshot({ path: join(out, 'lobby-phone-ru.png') });
  // Carol starts: /m1tv lists the game to watch.
  await carol.getByRole('button', { name: 'Start the game' }).click();
  await carol.waitForURL(/\/table\//);
  await page.goto(`${origin}/m1tv`);
  await page.getByRole('link', { name: /^Watch the game of/ }).waitFor();
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(out, 'm1tv.png') });
} finally {
  await browser.close();
  await server.close();
}
