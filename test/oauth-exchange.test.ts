import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { listen } from './transport-support.js';
import type { TestServer } from './helpers.js';
import { ok } from './helpers.js';
import { ADMIN_KEY, admin, adminCall, fails, startAdminServer } from './admin-support.js';
import { ALICE, BOB, PASSWORD, TOTP_USER, authWorld, totpCode } from './auth-fixtures.js';
import { sdkRuleProblems } from './sdk-rules/index.js';
import {
  CALLBACK,
  DialogClient,
  OTHER_CALLBACK,
  codeFromDialog,
  formOf,
  pkcePair,
  redirectedTo,
  registerApp,
  signInOnDialog,
  type RegisteredApp,
} from './oauth-support.js';

/** Who an access token stands for, seen by users.get without user_id (open to an app's session). */
async function whoIs(server: TestServer, token: string): Promise<number> {
  const answer = await server.call('users.get', {}, { token });
  return answer.body.code === 0 ? answer.body.data[0].user_id : -answer.body.code;
}

describe('OAuth: apps, the dialog and oauth.exchangeCode', () => {
  let server: TestServer;
  let app: RegisteredApp;

  before(async () => {
    server = await startAdminServer({ world: await authWorld() });
    app = await registerApp(server);
  });
  after(() => server.close());

  const exchange = (params: Record<string, unknown>) =>
    server.call('oauth.exchangeCode', { app_id: app.app_id, app_secret: app.app_secret, redirect_uri: CALLBACK, ...params });

  test('the dance: sign-in, consent, code and state back, a Session with only the scopes granted', async () => {
    const client = new DialogClient(server);
    const first = await client.open({ app_id: app.app_id, scope: 2, redirect_uri: CALLBACK, response_type: 'code', state: 'xyz<&>' });
    assert.equal(first.status, 200);
    assert.match(first.body, /Sign in to continue to <span class="app">Score Keeper<\/span>/);
    const consent = await signInOnDialog(client, first, ALICE.email, PASSWORD);
    assert.equal(consent.status, 200);
    assert.match(consent.body, /See the history of your games/);
    assert.doesNotMatch(consent.body, /season pass|while you are away/);
    const url = redirectedTo(await client.submit(consent, 'consent', { action: 'allow' }));
    assert.equal(`${url.origin}${url.pathname}`, CALLBACK);
    assert.equal(url.searchParams.get('state'), 'xyz<&>');
    const code = url.searchParams.get('code')!;

    const params = { app_id: app.app_id, app_secret: app.app_secret, code, redirect_uri: CALLBACK };
    const answer = await server.call('oauth.exchangeCode', params);
    assert.deepEqual(sdkRuleProblems('oauth.exchangeCode', params, answer.body), []);
    const session = ok(answer);
    assert.deepEqual(Object.keys(session).sort(), ['access_token', 'expires', 'expires_in', 'user_id']);
    assert.equal(session.user_id, ALICE.user_id);
    // What a token stands for "me" answers; a signed-in method outside the scopes answers 4.
    assert.equal(await whoIs(server, session.access_token), ALICE.user_id);
    assert.equal(ok(await server.call('inventory.get', {}, { token: session.access_token })).count, 0);
    fails(await server.call('account.appsGet', {}, { token: session.access_token }), 4);
    fails(await server.call('bots.getToken', { user_id: 5 }, { token: session.access_token }), 4);
    fails(await server.call('auth.signout', {}, { token: session.access_token }), 4);
  });

  test('offline brings a refresh token; refreshing keeps the scopes', async () => {
    const { code } = await codeFromDialog(new DialogClient(server), { app_id: app.app_id, scope: 3 }, BOB.email, PASSWORD);
    const session = ok(await exchange({ code }));
    assert.equal(session.user_id, BOB.user_id);
    assert.ok(session.refresh_token);
    const refreshed = ok(await server.call('auth.refresh', { refresh_token: session.refresh_token }));
    assert.ok(refreshed.refresh_token);
    assert.equal(await whoIs(server, refreshed.access_token), BOB.user_id);
    fails(await server.call('account.appsGet', {}, { token: refreshed.access_token }), 4);
  });

  test('remembered consent: the same scopes again redirect at once; other scopes ask again', async () => {
    const fresh = await registerApp(server);
    const client = new DialogClient(server);
    await codeFromDialog(client, { app_id: fresh.app_id, scope: 8 }, BOB.email, PASSWORD);
    const again = await client.open({ app_id: fresh.app_id, scope: 8, redirect_uri: CALLBACK, response_type: 'code', state: 's2' });
    const url = redirectedTo(again);
    assert.equal(url.searchParams.get('state'), 's2');
    assert.ok(url.searchParams.get('code'));
    const wider = await client.open({ app_id: fresh.app_id, scope: 9, redirect_uri: CALLBACK, response_type: 'code' });
    assert.equal(wider.status, 200);
    assert.match(wider.body, /id="consent"/);
  });

  test('deny sends access_denied with the state', async () => {
    const fresh = await registerApp(server);
    const client = new DialogClient(server);
    const first = await client.open({ app_id: fresh.app_id, redirect_uri: CALLBACK, response_type: 'code', state: 'no' });
    const consent = await signInOnDialog(client, first, ALICE.email, PASSWORD);
    const url = redirectedTo(await client.submit(consent, 'consent', { action: 'deny' }));
    assert.equal(url.searchParams.get('error'), 'access_denied');
    assert.equal(url.searchParams.get('state'), 'no');
    assert.equal(url.searchParams.get('code'), null);
  });

  test('sign-in with the second factor on the dialog', async () => {
    const client = new DialogClient(server);
    const first = await client.open({ app_id: app.app_id, redirect_uri: CALLBACK, response_type: 'code' });
    const totp = await client.submit(first, 'signin', { action: 'signin', email: TOTP_USER.email, password: PASSWORD });
    assert.equal(totp.status, 200);
    assert.ok(formOf(totp.body, 'totp').totp_session_token);
    const wrong = await client.submit(totp, 'totp', {
      action: 'totp',
      code: '000000' === totpCode(server.clock.now()) ? '111111' : '000000',
    });
    assert.match(wrong.body, /Wrong code/);
    const consent = await client.follow(await client.submit(wrong, 'totp', { action: 'totp', code: totpCode(server.clock.now()) }));
    const url = redirectedTo(await client.submit(consent, 'consent', { action: 'allow' }));
    assert.equal(ok(await exchange({ code: url.searchParams.get('code') })).user_id, TOTP_USER.user_id);
  });

  test('a wrong password is said on the page', async () => {
    const client = new DialogClient(server);
    const first = await client.open({ app_id: app.app_id, redirect_uri: CALLBACK, response_type: 'code' });
    const again = await client.submit(first, 'signin', { action: 'signin', email: ALICE.email, password: 'not the password at all' });
    assert.equal(again.status, 200);
    assert.match(again.body, /Wrong e-mail or password/);
  });

  test('the page: no framing, no script, forms only to itself and the app, CSRF token required', async () => {
    const client = new DialogClient(server);
    const page = await client.open({ app_id: app.app_id, redirect_uri: CALLBACK, response_type: 'code' });
    assert.equal(
      page.headers['content-security-policy'],
      "default-src 'none'; style-src 'self'; form-action 'self' https://app.example; frame-ancestors 'none'; base-uri 'none'",
    );
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.equal(page.headers['cache-control'], 'no-store');
    assert.doesNotMatch(page.body, /<script|\son[a-z]+=/i);
    const fields = formOf(page.body, 'signin');
    for (const csrf of [undefined, 'forged']) {
      const body = new URLSearchParams({ ...fields, action: 'signin', email: ALICE.email, password: PASSWORD, csrf: csrf ?? '' });
      if (csrf === undefined) body.delete('csrf');
      const refused = await client.post(body.toString());
      assert.equal(refused.status, 403);
      assert.equal(refused.headers['set-cookie'], undefined);
    }
    // Another browser's token does not pass with this browser's cookie.
    const other = new DialogClient(server);
    const otherPage = await other.open({ app_id: app.app_id, redirect_uri: CALLBACK, response_type: 'code' });
    const body = new URLSearchParams({ ...fields, csrf: formOf(otherPage.body, 'signin').csrf!, action: 'signin', email: ALICE.email });
    assert.equal((await client.post(body.toString())).status, 403);
    const css = await client.get('/oauth/dialog.css');
    assert.equal(css.status, 200);
    assert.match(String(css.headers['content-type']), /text\/css/);
  });

  test('what the dialog refuses: on the page when the app or address is unknown, else as an error to the app', async () => {
    const client = new DialogClient(server);
    for (const params of [
      { app_id: 999, redirect_uri: CALLBACK },
      { app_id: 'x', redirect_uri: CALLBACK },
      { app_id: app.app_id, redirect_uri: 'https://evil.example/callback' },
      { app_id: app.app_id, redirect_uri: `${CALLBACK}/` },
      { app_id: app.app_id },
    ]) {
      const page = await client.open({ response_type: 'code', ...params });
      assert.equal(page.status, 400, JSON.stringify(params));
      assert.equal(page.headers.location, undefined);
      assert.match(page.body, /id="error"/);
    }
    const errorOf = async (params: Record<string, string | number>) =>
      redirectedTo(await client.open({ app_id: app.app_id, redirect_uri: CALLBACK, state: 'st', ...params })).searchParams;
    assert.equal((await errorOf({ response_type: 'access_token' })).get('error'), 'unsupported_response_type');
    assert.equal((await errorOf({})).get('error'), 'unsupported_response_type');
    assert.equal((await errorOf({ response_type: 'code', scope: 4 })).get('error'), 'invalid_scope');
    assert.equal((await errorOf({ response_type: 'code', scope: 'all' })).get('error'), 'invalid_scope');
    const plain = await errorOf({ response_type: 'code', code_challenge: pkcePair().challenge, code_challenge_method: 'plain' });
    assert.equal(plain.get('error'), 'invalid_request');
    assert.equal(plain.get('state'), 'st');
    const narrow = await registerApp(server, { scopes: 0 });
    const scoped = redirectedTo(await client.open({ app_id: narrow.app_id, redirect_uri: CALLBACK, response_type: 'code', scope: 2 }));
    assert.equal(scoped.searchParams.get('error'), 'invalid_scope');
  });

  test('every error of oauth.exchangeCode', async () => {
    const { code } = await codeFromDialog(new DialogClient(server), { app_id: app.app_id }, ALICE.email, PASSWORD);
    fails(await exchange({ app_id: 99_999, code }), 2004);
    fails(await exchange({ app_secret: 'not-the-secret', code }), 2003);
    const invalid = fails(await exchange({ code, redirect_uri: 'callback' }), 2007);
    assert.deepEqual(invalid.data, { details: 'it is not an absolute URL' });
    assert.equal(fails(await exchange({ code, redirect_uri: 'ftp://app.example/cb' }), 2007).data?.details !== undefined, true);
    fails(await exchange({ code, redirect_uri: OTHER_CALLBACK }), 2002);
    fails(await exchange({ code: 'no-such-code' }), 2001);
    // Refusals before the code was used leave it good.
    const session = ok(await exchange({ code }));
    assert.equal(session.user_id, ALICE.user_id);

    // A code of another app is no code.
    const other = await registerApp(server);
    const foreign = await codeFromDialog(new DialogClient(server), { app_id: other.app_id }, ALICE.email, PASSWORD);
    fails(await exchange({ code: foreign.code }), 2001);
    ok(
      await server.call('oauth.exchangeCode', {
        app_id: other.app_id,
        app_secret: other.app_secret,
        code: foreign.code,
        redirect_uri: CALLBACK,
      }),
    );

    // Expired after 60 s.
    const late = await codeFromDialog(new DialogClient(server), { app_id: app.app_id }, ALICE.email, PASSWORD);
    server.clock.advance(60_000);
    fails(await exchange({ code: late.code }), 2001);

    // Disabled: the exchange and the dialog refuse it, and its sessions end.
    const alive = await codeFromDialog(new DialogClient(server), { app_id: other.app_id }, BOB.email, PASSWORD);
    const otherSession = ok(
      await server.call('oauth.exchangeCode', {
        app_id: other.app_id,
        app_secret: other.app_secret,
        code: alive.code,
        redirect_uri: CALLBACK,
      }),
    );
    assert.equal(await whoIs(server, otherSession.access_token), BOB.user_id);
    assert.equal((await admin(server, 'disableApp', { app_id: other.app_id })).app.active, 0);
    assert.equal(await whoIs(server, otherSession.access_token), -1);
    fails(
      await server.call('oauth.exchangeCode', { app_id: other.app_id, app_secret: other.app_secret, code: 'x', redirect_uri: CALLBACK }),
      2005,
    );
    const page = await new DialogClient(server).open({ app_id: other.app_id, redirect_uri: CALLBACK, response_type: 'code' });
    assert.equal(page.status, 400);
    assert.match(page.body, /disabled/);
  });

  test('a code used twice: the second use answers 2001 and revokes the session of the first', async () => {
    const { code } = await codeFromDialog(new DialogClient(server), { app_id: app.app_id, scope: 1 }, BOB.email, PASSWORD);
    const session = ok(await exchange({ code }));
    assert.equal(await whoIs(server, session.access_token), BOB.user_id);
    const second = fails(await exchange({ code }), 2001);
    assert.match(String(second.description), /already used/);
    assert.equal(await whoIs(server, session.access_token), -1);
    fails(await server.call('auth.refresh', { refresh_token: session.refresh_token }), 1);
  });

  test('PKCE: required of a public client, checked when sent, refused when not asked for', async () => {
    const publicApp = await registerApp(server, { public_client: 1 });
    assert.equal(publicApp.app_secret, undefined);
    const client = new DialogClient(server);
    const without = redirectedTo(await client.open({ app_id: publicApp.app_id, redirect_uri: CALLBACK, response_type: 'code' }));
    assert.equal(without.searchParams.get('error'), 'invalid_request');

    const pair = pkcePair();
    const dialogParams = { app_id: publicApp.app_id, code_challenge: pair.challenge, code_challenge_method: 'S256' };
    const { code } = await codeFromDialog(client, dialogParams, ALICE.email, PASSWORD);
    const exchangePublic = (params: Record<string, unknown>) =>
      server.call('oauth.exchangeCode', { app_id: publicApp.app_id, app_secret: '', code, redirect_uri: CALLBACK, ...params });
    fails(await exchangePublic({}), 2001);
    fails(await exchangePublic({ code_verifier: pkcePair().verifier }), 2001);
    assert.equal(ok(await exchangePublic({ code_verifier: pair.verifier })).user_id, ALICE.user_id);

    // A confidential client may use PKCE; a verifier for a code given without a challenge is refused.
    const plainCode = await codeFromDialog(new DialogClient(server), { app_id: app.app_id }, ALICE.email, PASSWORD);
    fails(await exchange({ code: plainCode.code, code_verifier: pair.verifier }), 2001);
    const pkceCode = await codeFromDialog(
      new DialogClient(server),
      { app_id: app.app_id, code_challenge: pair.challenge, code_challenge_method: 'S256' },
      ALICE.email,
      PASSWORD,
    );
    assert.equal(ok(await exchange({ code: pkceCode.code, code_verifier: pair.verifier })).user_id, ALICE.user_id);
  });

  test('account.appsGet lists the consent; account.appsRevoke forgets it and ends the app’s sessions', async () => {
    const fresh = await registerApp(server, { name: 'Tournament Table' });
    const client = new DialogClient(server);
    const { code } = await codeFromDialog(client, { app_id: fresh.app_id, scope: 10 }, ALICE.email, PASSWORD);
    const session = ok(
      await server.call('oauth.exchangeCode', { app_id: fresh.app_id, app_secret: fresh.app_secret, code, redirect_uri: CALLBACK }),
    );
    const own = ok(await server.call('auth.signin', { email: ALICE.email, password: PASSWORD })).access_token as string;
    const listed = ok(await server.call('account.appsGet', {}, { token: own })).apps;
    const entry = listed.find((grant: { app_id: number }) => grant.app_id === fresh.app_id);
    assert.deepEqual({ ...entry, ts: 0 }, { app_id: fresh.app_id, name: 'Tournament Table', scope: 10, scopes: ['games', 'stat'], ts: 0 });
    assert.equal(await server.call('account.appsRevoke', { app_id: fresh.app_id }, { token: own }).then(ok), undefined);
    assert.equal(await whoIs(server, session.access_token), -1);
    assert.equal(await whoIs(server, own), ALICE.user_id);
    fails(await server.call('account.appsRevoke', { app_id: fresh.app_id }, { token: own }), 2004);
    // Asked again next time.
    const page = await client.open({ app_id: fresh.app_id, scope: 10, redirect_uri: CALLBACK, response_type: 'code' });
    assert.match(page.body, /id="consent"/);
  });

  test('admin: the secret once, stored hashed, never listed; bad redirect URIs and scopes refused; audited', async () => {
    const created = await admin(server, 'createApp', {
      name: ' Lobby ',
      redirect_uris: 'http://127.0.0.1:9000/cb  https://lobby.example/cb',
      scopes: 3,
    });
    assert.match(created.app_secret, /^[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(created.app, {
      app_id: created.app.app_id,
      name: 'Lobby',
      redirect_uris: ['http://127.0.0.1:9000/cb', 'https://lobby.example/cb'],
      scopes: 3,
      public_client: 0,
      active: 1,
      created_at: created.app.created_at,
    });
    const stored = await server.db.kysely
      .selectFrom('oauth_apps')
      .selectAll()
      .where('app_id', '=', created.app.app_id)
      .executeTakeFirstOrThrow();
    assert.notEqual(stored.secret_hash, created.app_secret);
    assert.ok(!JSON.stringify(await admin(server, 'listApps')).includes(created.app_secret));
    const audit = JSON.stringify(await server.db.kysely.selectFrom('audit_log').selectAll().execute());
    assert.ok(audit.includes('admin.createApp'));
    assert.ok(!audit.includes(created.app_secret));

    for (const redirect_uris of ['http://lobby.example/cb', 'https://lobby.example/cb#x', 'lobby', 'https://u:p@lobby.example/']) {
      const answer = fails(await adminCall(server, 'createApp', { name: 'Bad', redirect_uris }), 2);
      assert.match(String(answer.description), /redirect_uris/);
    }
    fails(await adminCall(server, 'createApp', { name: 'Bad', redirect_uris: CALLBACK, scopes: 4 }), 2);
    fails(await adminCall(server, 'updateApp', { app_id: 99_999, name: 'Nobody' }), 2004);
    fails(await adminCall(server, 'disableApp', { app_id: 99_999 }), 2004);
    const updated = await admin(server, 'updateApp', { app_id: created.app.app_id, name: 'Lobby 2', redirect_uris: CALLBACK, scopes: 0 });
    assert.deepEqual([updated.app.name, updated.app.redirect_uris, updated.app.scopes], ['Lobby 2', [CALLBACK], 0]);
    assert.equal((await admin(server, 'updateApp', { app_id: created.app.app_id, active: 0 })).app.active, 0);
    assert.equal((await admin(server, 'updateApp', { app_id: created.app.app_id, active: 1 })).app.active, 1);
    assert.ok((await admin(server, 'listApps')).apps.some((listed: { name: string }) => listed.name === 'Lobby 2'));
    fails(await adminCall(server, 'listApps', {}, { key: `${ADMIN_KEY}-wrong` }), 1);
  });

  test('the realtime feed refuses a session of an app', async () => {
    const { code } = await codeFromDialog(new DialogClient(server), { app_id: app.app_id }, ALICE.email, PASSWORD);
    const session = ok(await exchange({ code }));
    const url = (await listen(server)).replace('http', 'ws');
    const closed = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(`${url}/ws?access_token=${session.access_token}`);
      socket.on('close', (closeCode) => resolve(closeCode));
      socket.on('error', reject);
    });
    assert.equal(closed, 4001);
  });

  test('a world import that replaces the players forgets what they allowed; the apps stay', async () => {
    const fresh = await registerApp(server);
    const client = new DialogClient(server);
    await codeFromDialog(client, { app_id: fresh.app_id }, ALICE.email, PASSWORD);
    ok(await adminCall(server, 'importWorld', { mode: 'replace', world: JSON.stringify(await authWorld()) }));
    assert.deepEqual(await server.db.kysely.selectFrom('oauth_consents').selectAll().execute(), []);
    assert.deepEqual(await server.db.kysely.selectFrom('oauth_codes').selectAll().execute(), []);
    assert.ok((await admin(server, 'listApps')).apps.some((listed: { app_id: number }) => listed.app_id === fresh.app_id));
    // The player signs in again and is asked again.
    client.forgetSignIn();
    const page = await client.open({ app_id: fresh.app_id, redirect_uri: CALLBACK, response_type: 'code' });
    const consent = await signInOnDialog(client, page, ALICE.email, PASSWORD);
    assert.match(consent.body, /id="consent"/);
  });

  test('world files carry the apps without their secrets; a new secret is issued by the admin', async () => {
    const exported = await admin(server, 'exportWorld');
    const world = JSON.parse(typeof exported.world === 'string' ? exported.world : JSON.stringify(exported.world));
    const entry = world.apps.find((listed: { app_id: number }) => listed.app_id === app.app_id);
    assert.deepEqual(entry, {
      app_id: app.app_id,
      name: 'Score Keeper',
      redirect_uris: [CALLBACK, OTHER_CALLBACK],
      scopes: 11,
      active: 1,
    });
    assert.ok(!JSON.stringify(world).includes(app.app_secret!));

    const elsewhere = await startAdminServer({ world: { ...(await authWorld()), apps: world.apps } });
    try {
      const { code } = await codeFromDialog(new DialogClient(elsewhere), { app_id: app.app_id }, ALICE.email, PASSWORD);
      const call = (secret: string | undefined) =>
        elsewhere.call('oauth.exchangeCode', { app_id: app.app_id, app_secret: secret ?? '', code, redirect_uri: CALLBACK });
      // No secret came with the file: none matches, not even the old one or an empty one.
      fails(await call(app.app_secret), 2003);
      fails(await call(''), 2003);
      const renewed = await admin(elsewhere, 'updateApp', { app_id: app.app_id, new_secret: 1 });
      assert.match(renewed.app_secret, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(ok(await call(renewed.app_secret)).user_id, ALICE.user_id);
      // Imported again, the app keeps the secret it was given here.
      ok(await adminCall(elsewhere, 'importWorld', { mode: 'merge', world: JSON.stringify({ apps: [{ ...entry, name: 'Renamed' }] }) }));
      const again = await codeFromDialog(new DialogClient(elsewhere), { app_id: app.app_id }, BOB.email, PASSWORD);
      assert.equal(
        ok(
          await elsewhere.call('oauth.exchangeCode', {
            app_id: app.app_id,
            app_secret: renewed.app_secret,
            code: again.code,
            redirect_uri: CALLBACK,
          }),
        ).user_id,
        BOB.user_id,
      );
      fails(
        await adminCall(elsewhere, 'updateApp', { app_id: (await registerApp(elsewhere, { public_client: 1 })).app_id, new_secret: 1 }),
        2,
      );
    } finally {
      await elsewhere.close();
    }
  });
});
