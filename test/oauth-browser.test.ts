import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { WAIT, launchChromium, missing } from './components.js';
import { admin, startAdminServer } from './admin-support.js';
import { ALICE, PASSWORD, TOTP_USER, authWorld, totpCode } from './auth-fixtures.js';
import { listen } from './transport-support.js';
import { pkcePair } from './oauth-support.js';

/**
 * A third-party app on a loopback address: `/start` sends the browser to the dialog with a
 * state and a PKCE challenge; `/callback` checks the state, exchanges the code from its own
 * side (as an app's server does) and shows who signed in.
 */
async function startLoopbackApp(
  platform: string,
  appOf: () => { app_id: number; app_secret: string },
): Promise<{ server: Server; origin: string }> {
  const pkce = pkcePair();
  const state = 'state-of-the-loopback-app';
  let origin = '';
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', origin);
    const send = (status: number, text: string) => response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(text);
    if (url.pathname === '/start' || url.pathname === '/frame') {
      const dialog = new URL(`${platform}/oauth`);
      const params = { app_id: String(appOf().app_id), scope: '2', redirect_uri: `${origin}/callback`, response_type: 'code', state };
      for (const [name, value] of Object.entries({ ...params, code_challenge: pkce.challenge, code_challenge_method: 'S256' }))
        dialog.searchParams.set(name, value);
      if (url.pathname === '/frame') return send(200, `<iframe src="${dialog.toString().replace(/&/g, '&amp;')}"></iframe>`);
      return void response.writeHead(302, { location: dialog.toString() }).end();
    }
    if (url.pathname === '/callback') {
      if (url.searchParams.get('state') !== state) return send(400, '<p id="outcome">wrong state</p>');
      const error = url.searchParams.get('error');
      if (error) return send(200, `<p id="outcome">refused: ${error}</p>`);
      const { app_id, app_secret } = appOf();
      const body = {
        app_id,
        app_secret,
        code: url.searchParams.get('code'),
        redirect_uri: `${origin}/callback`,
        code_verifier: pkce.verifier,
      };
      void fetch(`${platform}/api/oauth.exchangeCode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
        .then(
          (answer) => answer.json() as Promise<{ code: number; data?: { user_id: number; access_token: string; refresh_token?: string } }>,
        )
        .then(async (answer) => {
          if (answer.code !== 0) return send(200, `<p id="outcome">exchange answered ${answer.code}</p>`);
          const me = (await (
            await fetch(`${platform}/api/users.get`, { headers: { authorization: `Bearer ${answer.data!.access_token}` } })
          ).json()) as { data: { user_id: number; nick: string }[] };
          const refresh = answer.data!.refresh_token === undefined ? 'no refresh token' : 'a refresh token';
          // The games scope opens the player's games.
          const games = (await (
            await fetch(`${platform}/api/games.my`, { headers: { authorization: `Bearer ${answer.data!.access_token}` } })
          ).json()) as { code: number; data?: { count: number } };
          const seen = games.code === 0 ? `${games.data!.count} games` : `games.my answered ${games.code}`;
          send(200, `<p id="outcome">signed in as ${me.data[0]!.nick} (${me.data[0]!.user_id}) with ${refresh}, ${seen}</p>`);
        });
      return;
    }
    send(404, 'not here');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, origin };
}

test(
  'the OAuth dance in Chromium: sign-in, second factor, consent, redirect to a loopback app that exchanges the code',
  { timeout: 600_000, skip: missing.chromium },
  async () => {
    const platform = await startAdminServer({ world: await authWorld() });
    let browser: Browser | undefined;
    let loopback: Server | undefined;
    try {
      const platformOrigin = await listen(platform);
      const registered = { app_id: 0, app_secret: '' };
      const app = await startLoopbackApp(platformOrigin, () => registered);
      loopback = app.server;
      const created = await admin(platform, 'createApp', { name: 'Loopback <Scores>', redirect_uris: `${app.origin}/callback`, scopes: 3 });
      Object.assign(registered, { app_id: created.app.app_id, app_secret: created.app_secret });

      browser = await launchChromium();
      const context = await browser.newContext();
      const page = await context.newPage();
      const blocked: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy|Refused/.test(message.text())) blocked.push(message.text());
      });
      await page.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith(`${platformOrigin}/`) || url.startsWith(`${app.origin}/`)) return route.continue();
        return route.abort();
      });

      // Signed out: the dialog asks for the e-mail and password, then the code of the authenticator.
      await page.goto(`${app.origin}/start`, WAIT);
      assert.ok(page.url().startsWith(`${platformOrigin}/oauth?`), page.url());
      assert.match(await page.locator('h1').innerText(), /Loopback <Scores>/);
      await page.fill('input[name=email]', TOTP_USER.email);
      await page.fill('input[name=password]', PASSWORD);
      await Promise.all([page.waitForURL(`${platformOrigin}/oauth`, WAIT), page.click('button[value=signin]')]);
      await page.fill('input[name=code]', totpCode(platform.clock.now()));
      await Promise.all([page.waitForURL(/\/oauth\?/, WAIT), page.click('button[value=totp]')]);

      // The consent names the app and what it asks for in plain words.
      assert.deepEqual(await page.locator('#scopes li').allInnerTexts(), [
        'See your profile, your friends and your inventory as you see them yourself',
        'See the history of your games and replay them move by move',
      ]);
      // The page's own style sheet applies under its CSP.
      assert.equal(await page.locator('#message').count(), 0);
      assert.equal(await page.evaluate(() => getComputedStyle(document.body).maxWidth), '448px');
      await Promise.all([page.waitForURL(`${app.origin}/callback?**`, WAIT), page.click('button[value=allow]')]);
      await page.locator('#outcome').waitFor(WAIT);
      assert.equal(await page.locator('#outcome').innerText(), `signed in as Tess (${TOTP_USER.user_id}) with no refresh token, 0 games`);

      // Signed in and consent remembered: the dialog answers the app at once.
      await page.goto(`${app.origin}/start`, WAIT);
      await page.locator('#outcome').waitFor(WAIT);
      assert.equal(await page.locator('#outcome').innerText(), `signed in as Tess (${TOTP_USER.user_id}) with no refresh token, 0 games`);

      // Another browser, another player, who denies.
      const other = await (await browser.newContext()).newPage();
      await other.goto(`${app.origin}/start`, WAIT);
      await other.fill('input[name=email]', ALICE.email);
      await other.fill('input[name=password]', PASSWORD);
      await Promise.all([other.waitForURL(/\/oauth\?/, WAIT), other.click('button[value=signin]')]);
      await Promise.all([other.waitForURL(`${app.origin}/callback?**`, WAIT), other.click('button[value=deny]')]);
      assert.equal(await other.locator('#outcome').innerText(), 'refused: access_denied');

      // The dialog cannot be framed (clickjacking): the frame stays without its form.
      const framing = await (await browser.newContext()).newPage();
      await framing.goto(`${app.origin}/frame`, WAIT);
      const frame = framing.frames().find((f) => f !== framing.mainFrame());
      assert.ok(frame);
      await framing.waitForLoadState('load', WAIT);
      assert.equal(await frame.locator('form').count(), 0, `the dialog rendered inside a frame: ${frame.url()}`);
      assert.deepEqual(
        blocked.filter((text) => !text.includes('frame-ancestors')),
        [],
      );
    } finally {
      await browser?.close();
      await new Promise((resolve) => loopback?.close(resolve));
      await platform.close();
    }
  },
);
