import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ADMIN_KEY } from './admin-support.js';
import { ALICE, PASSWORD, authWorld } from './auth-fixtures.js';
import { missing } from './components.js';
import { startProcesses, type Processes } from './race-support.js';
import { wire, type WireAnswer } from './transport-support.js';
import { CALLBACK, DialogClient, codeFromDialog, registerApp, type RegisteredApp } from './oauth-support.js';

/**
 * One code exchanged many times at once, over sockets (on PostgreSQL through two processes on
 * one database and Redis): at most one Session, and a later use revokes it in every process.
 */
describe('one OAuth code exchanged many times at once', { skip: missing.redis }, () => {
  let processes: Processes;
  let app: RegisteredApp;

  before(async () => {
    processes = await startProcesses({ world: await authWorld(), config: { adminKey: ADMIN_KEY, rateLimit: false } });
    app = await registerApp(processes.servers[0]!);
  });
  after(() => processes.close());

  const exchange = (index: number, code: string): Promise<WireAnswer> =>
    wire(`${processes.urls[index % 2]}/api/oauth.exchangeCode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ app_id: app.app_id, app_secret: app.app_secret, code, redirect_uri: CALLBACK }),
    });

  const usersGet = (index: number, token: string): Promise<WireAnswer> =>
    wire(`${processes.urls[index % 2]}/api/users.get`, { headers: { authorization: `Bearer ${token}` } });

  test('at most one Session, and the other uses revoke it', async () => {
    for (let round = 0; round < 5; round++) {
      const { code } = await codeFromDialog(
        new DialogClient(processes.servers[0]!),
        { app_id: app.app_id, scope: 1 },
        ALICE.email,
        PASSWORD,
      );
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => exchange(i, code)));
      const codes = answers.map((answer) => answer.body?.code);
      assert.equal(codes.filter((c) => c === 0).length, 1, `round ${round}: ${JSON.stringify(codes)}`);
      assert.equal(codes.filter((c) => c === 2001).length, 7, `round ${round}: ${JSON.stringify(codes)}`);
      const session = answers.find((answer) => answer.body.code === 0)!.body.data;
      // Every use after the first revoked the session, in both processes, before answering.
      for (let i = 0; i < 2; i++) assert.equal((await usersGet(i, session.access_token)).body.code, 1, `round ${round}`);
      const refreshed = await wire(`${processes.urls[0]}/api/auth.refresh`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: session.refresh_token }),
      });
      assert.equal(refreshed.body.code, 1);
    }
    const issued = await processes.servers[0]!.db.kysely.selectFrom('sessions')
      .select(['revoked_at'])
      .where('app_id', '=', app.app_id)
      .execute();
    assert.equal(issued.length, 5);
    assert.ok(issued.every((session) => session.revoked_at !== null));
  });
});
