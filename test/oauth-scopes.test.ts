import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestServer } from './helpers.js';
import { ok } from './helpers.js';
import { startAdminServer } from './admin-support.js';
import { ALICE, PASSWORD, authWorld, sessionOf } from './auth-fixtures.js';
import { CALLBACK, DialogClient, codeFromDialog, registerApp, signInOnDialog, type RegisteredApp } from './oauth-support.js';
import { Type } from '@sinclair/typebox';
import { allMethods } from '../src/domains.js';
import { SCOPE_BITS } from '../src/api/oauth-scopes.js';
import { MethodDispatcher } from '../src/api/dispatch.js';
import { defineMethod } from '../src/api/method.js';
import { P } from '../src/api/params.js';
import { Strict } from '../src/api/schema-types.js';

/**
 * What the OAuth scopes open to a session an app obtained, as the reference's docs say
 * (`pages/oauth/scopes.md`): `games` the player's games, `stat` the season pass, missions and
 * weekly top; `offline` only a refresh token. Every other signed-in method answers 4.
 */

/** The signed-in methods each scope opens: the reference's, of those this server has. */
const OPENED_BY: Record<string, string[]> = {
  games: ['games.getReplay', 'games.my'],
  stat: ['missions.get', 'seasonpass.get', 'users.getTopWeek'],
};

const MASKS = [0, 1, 2, 3, 8, 9, 10, 11];

describe('OAuth scopes: the methods each opens to an app', () => {
  let server: TestServer;
  let app: RegisteredApp;
  let aliceToken: string;
  let gameId: number;
  const sessions = new Map<number, { access_token: string; refresh_token?: string }>();

  before(async () => {
    server = await startAdminServer({ world: await authWorld() });
    app = await registerApp(server, { scopes: 11 });
    aliceToken = (await sessionOf(server, ALICE.email)).access_token;
    gameId = ok(await server.call('games.createVsComputer', { computers: 1 }, { token: aliceToken })).game_id;
    const client = new DialogClient(server);
    for (const scope of MASKS) {
      const { code } = await codeFromDialog(client, { app_id: app.app_id, scope }, ALICE.email, PASSWORD);
      const params = { app_id: app.app_id, app_secret: app.app_secret, code, redirect_uri: CALLBACK };
      sessions.set(scope, ok(await server.call('oauth.exchangeCode', params)));
    }
  });
  after(() => server.close());

  const token = (scope: number) => sessions.get(scope)!.access_token;

  test('games: games.my and games.getReplay answer the app as they answer the player', async () => {
    const own = ok(await server.call('games.my', {}, { token: aliceToken }));
    assert.deepEqual(own, {
      count: 1,
      games: [{ game_id: gameId, status: 'live', user_ids: [ALICE.user_id, -1], ts_start: own.games[0].ts_start }],
    });
    const ownReplay = ok(await server.call('games.getReplay', { game_id: gameId }, { token: aliceToken }));
    for (const scope of [2, 3, 10, 11]) {
      assert.deepEqual(ok(await server.call('games.my', {}, { token: token(scope) })), own, `scope ${scope}`);
      assert.deepEqual(ok(await server.call('games.getReplay', { game_id: gameId }, { token: token(scope) })), ownReplay);
    }
  });

  test('without games: games.my and games.getReplay answer 4', async () => {
    for (const scope of [0, 1, 8, 9]) {
      assert.deepEqual((await server.call('games.my', {}, { token: token(scope) })).body, {
        code: 4,
        description: 'the app was not granted the games scope this method needs',
      });
      assert.deepEqual((await server.call('games.getReplay', { game_id: gameId }, { token: token(scope) })).body, {
        code: 4,
        description: 'the app was not granted the games scope this method needs',
      });
    }
  });

  test('stat: missions.get, seasonpass.get and users.getTopWeek answer the app as they answer the player, and 4 without it', async () => {
    for (const method of OPENED_BY.stat!) {
      const own = ok(await server.call(method, {}, { token: aliceToken }));
      for (const scope of [8, 9, 10, 11])
        assert.deepEqual(ok(await server.call(method, {}, { token: token(scope) })), own, `${method} ${scope}`);
      for (const scope of [0, 1, 2, 3])
        assert.deepEqual((await server.call(method, {}, { token: token(scope) })).body, {
          code: 4,
          description: 'the app was not granted the stat scope this method needs',
        });
    }
  });

  test('every signed-in method answers 4 unless a scope granted opens it; offline alone opens nothing', async () => {
    const required = allMethods().filter((m) => m.auth === 'required');
    const opened = (mask: number) =>
      Object.entries(OPENED_BY)
        .filter(([scope]) => (mask & SCOPE_BITS[scope as keyof typeof SCOPE_BITS]) !== 0)
        .flatMap(([, names]) => names);
    for (const scope of MASKS) {
      const refused: string[] = [];
      for (const method of required) {
        const answer = await server.call(method.name, {}, { token: token(scope) });
        if (answer.body.code === 4) refused.push(method.name);
      }
      const expected = required.map((m) => m.name).filter((name) => !opened(scope).includes(name));
      assert.deepEqual(refused, expected, `scope ${scope}`);
    }
    assert.ok(required.length > 40);
    // Where a token stands for "me", any grant will do.
    for (const method of allMethods().filter((m) => m.auth === 'optional' && !m.scope))
      assert.notEqual((await server.call(method.name, {}, { token: token(0) })).body.code, 4, method.name);
  });

  test('the scopes the methods declare are the reference’s', () => {
    const declared: Record<string, string[]> = { games: [], stat: [] };
    for (const method of allMethods()) if (method.scope) declared[method.scope]!.push(method.name);
    for (const names of Object.values(declared)) names.sort();
    assert.deepEqual(declared, OPENED_BY);
  });

  test('stat, and a scope on a method whose token is optional, through the dispatcher', async () => {
    // No method of this server needs stat yet: two declared here show what one that does answers.
    const result = Type.Object({ caller: Type.Integer() }, Strict);
    const methods = [
      defineMethod({
        name: 'sample.topWeek',
        summary: 'optional',
        auth: 'optional',
        scope: 'stat',
        params: P.object({}),
        result,
        handler: async (ctx) => ({ caller: ctx.caller?.userId ?? 0 }),
      }),
      defineMethod({
        name: 'sample.missions',
        summary: 'required',
        auth: 'required',
        scope: 'stat',
        params: P.object({}),
        result,
        handler: async (ctx) => ({ caller: ctx.caller.userId }),
      }),
    ];
    const dispatcher = new MethodDispatcher(server.services, methods);
    const answer = async (name: string, accessToken?: string) => {
      const call = { name, raw: {}, ip: '127.0.0.1', requestId: 'r', log: server.app.log, token: () => accessToken };
      try {
        return (await dispatcher.invoke(call)).answer;
      } catch (error) {
        return { code: (error as { code: number }).code, description: (error as Error).message };
      }
    };
    const refusal = { code: 4, description: 'the app was not granted the stat scope this method needs' };
    for (const name of ['sample.topWeek', 'sample.missions']) {
      for (const scope of [8, 9, 10, 11]) assert.deepEqual(await answer(name, token(scope)), { caller: ALICE.user_id }, `${name} ${scope}`);
      for (const scope of [0, 1, 2, 3]) assert.deepEqual(await answer(name, token(scope)), refusal, `${name} ${scope}`);
      assert.deepEqual(await answer(name, aliceToken), { caller: ALICE.user_id });
    }
    assert.deepEqual(await answer('sample.topWeek'), { caller: 0 });
    assert.deepEqual(await answer('sample.missions'), { code: 1, description: 'authorization required: send an access_token' });
  });

  test('a refreshed session keeps its scopes', async () => {
    const refreshed = ok(await server.call('auth.refresh', { refresh_token: sessions.get(3)!.refresh_token }));
    assert.equal(ok(await server.call('games.my', {}, { token: refreshed.access_token })).count, 1);
    const offlineOnly = ok(await server.call('auth.refresh', { refresh_token: sessions.get(9)!.refresh_token }));
    assert.equal((await server.call('games.my', {}, { token: offlineOnly.access_token })).body.code, 4);
  });

  test('the consent page says what each scope asked for lets the app do, in plain words', async () => {
    const fresh = await registerApp(server, { scopes: 11 });
    const client = new DialogClient(server);
    const first = await client.open({ app_id: fresh.app_id, scope: 11, redirect_uri: CALLBACK, response_type: 'code' });
    const consent = await signInOnDialog(client, first, ALICE.email, PASSWORD);
    const list = /<ul id="scopes">(.*?)<\/ul>/s.exec(consent.body)![1]!;
    assert.deepEqual(
      [...list.matchAll(/<li>(.*?)<\/li>/g)].map((m) => m[1]),
      [
        'See your profile, your friends and your inventory as you see them yourself',
        'Stay signed in to it while you are away (it may keep its access until you revoke it)',
        'See the history of your games and replay them move by move',
        'See your season pass progress (token balance included), your missions and your place in the weekly top',
      ],
    );
    const narrow = await client.open({ app_id: fresh.app_id, scope: 8, redirect_uri: CALLBACK, response_type: 'code' });
    const items = [.../<ul id="scopes">(.*?)<\/ul>/s.exec(narrow.body)![1]!.matchAll(/<li>(.*?)<\/li>/g)].map((m) => m[1]);
    assert.equal(items.length, 2);
    assert.match(items[1]!, /season pass/);
  });
});
