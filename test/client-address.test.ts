import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { listen, signIn, transportWorld, wire } from './transport-support.js';

/**
 * Behind our proxies the client address is the rightmost X-Forwarded-For entry that is not
 * one of them: what a client writes to the left cannot forge it, and a value that is not an
 * IP address is refused before anything is done with it.
 */

const ADMIN_KEY = 'client-address-admin-key';

/** The client address the server saw for one admin call (as its audit entry records it). */
async function seenAs(server: TestServer, url: string, forwardedFor: string): Promise<{ status: number; code: number; ip?: string }> {
  const before = await server.db.kysely
    .selectFrom('audit_log')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  const answer = await wire(`${url}/api/admin.getUser?user_id=1`, {
    headers: { 'x-admin-key': ADMIN_KEY, 'x-forwarded-for': forwardedFor },
  });
  const rows = await server.db.kysely.selectFrom('audit_log').select(['ip']).orderBy('audit_id').execute();
  const ip = rows.length > Number(before.n) ? rows[rows.length - 1]!.ip : undefined;
  return { status: answer.status, code: answer.body?.code, ip };
}

describe('client addresses behind one proxy (plain --trust-proxy)', () => {
  let server: TestServer;
  let url: string;
  before(async () => {
    server = await startTestServer({
      world: transportWorld(),
      config: { trustProxy: true, adminKey: ADMIN_KEY, rateLimitPerIp: { max: 5, windowSeconds: 60 } },
    });
    url = await listen(server);
  });
  after(() => server.close());

  test('the rightmost entry is the client: entries a client prepends are never read', async () => {
    assert.deepEqual(await seenAs(server, url, '203.0.113.9'), { status: 200, code: 0, ip: '203.0.113.9' });
    assert.deepEqual(await seenAs(server, url, '198.51.100.1, 203.0.113.10'), { status: 200, code: 0, ip: '203.0.113.10' });
  });

  test("a stolen token does not work from elsewhere by naming its owner's address first", async () => {
    const token = await signIn(server, 'alice@example.com', '203.0.113.20');
    const call = (forwardedFor: string) =>
      wire(`${url}/api/friends.get?access_token=${token}`, { headers: { 'x-forwarded-for': forwardedFor } });
    assert.equal((await call('203.0.113.20')).body.code, 0);
    assert.equal((await call('203.0.113.20, 198.51.100.66')).body.code, 1);
  });

  test('per-address limits cannot be dodged by rotating the leftmost entry', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 8; i++) {
      const answer = await wire(`${url}/api/gchat.get`, { headers: { 'x-forwarded-for': `10.9.${i}.1, 198.51.100.77` } });
      codes.push(answer.body.code);
    }
    assert.deepEqual(codes, [0, 0, 0, 0, 0, 7, 7, 7]);
  });

  test('a client address that is not an IP address is refused with code 2 and never stored', async () => {
    for (const value of ['not-an-ip<script>', '203.0.113.1, not-an-ip<script>', '', '999.1.1.1']) {
      const answer = await wire(`${url}/api/admin.getUser?user_id=1`, { headers: { 'x-admin-key': ADMIN_KEY, 'x-forwarded-for': value } });
      if (value === '') {
        // An empty header names no client: the proxy's own address is the client.
        assert.equal(answer.body.code, 0, value);
        continue;
      }
      assert.equal(answer.status, 200, value);
      assert.deepEqual(answer.body, { code: 2, description: 'X-Forwarded-For: the client address is not an IP address' });
    }
    const stored = await server.db.kysely.selectFrom('audit_log').select(['ip']).execute();
    assert.ok(
      stored.every((row) => /^[0-9a-f.:]+$/.test(row.ip)),
      JSON.stringify(stored),
    );
  });
});

describe('client addresses behind several proxies', () => {
  test('a hop count skips that many proxies from the right', async () => {
    const server = await startTestServer({ world: transportWorld(), config: { trustProxy: 2, adminKey: ADMIN_KEY } });
    try {
      const url = await listen(server);
      assert.equal((await seenAs(server, url, '198.51.100.1, 203.0.113.30, 10.0.0.2')).ip, '203.0.113.30');
    } finally {
      await server.close();
    }
  });

  test('a list of proxy addresses and ranges: the rightmost entry outside it is the client', async () => {
    const server = await startTestServer({
      world: transportWorld(),
      config: { trustProxy: ['127.0.0.1', '10.0.0.0/8'], adminKey: ADMIN_KEY },
    });
    try {
      const url = await listen(server);
      assert.equal((await seenAs(server, url, '198.51.100.1, 203.0.113.40, 10.1.2.3, 10.0.0.9')).ip, '203.0.113.40');
      assert.equal((await seenAs(server, url, '10.1.2.3')).ip, '10.1.2.3', 'every entry is a proxy: the leftmost is the client');
    } finally {
      await server.close();
    }
  });
});
