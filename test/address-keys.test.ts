import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_SECRET_KEY, newDatabaseLocation, startTestServer, type StartOptions } from './helpers.js';

/**
 * Per-address budgets are spread over their slots by a keyed hash: addresses chosen by someone
 * who does not hold the deployment's secret key do not spend a chosen address's budget. Each
 * pair below shared a slot under the former unkeyed hash; the servers here use a fixed key, so
 * that where each address lands is the same on every run.
 */

async function serverWithFixedKey(options: StartOptions) {
  const location = { ...(await newDatabaseLocation()), secretKey: TEST_SECRET_KEY };
  const server = await startTestServer({ ...options, location });
  return {
    server,
    async close() {
      await server.close();
      await location.dispose();
    },
  };
}

test('wrong admin keys from one address do not lock out the admin at another', async () => {
  const { server, close } = await serverWithFixedKey({ config: { adminKey: 'the-right-admin-key-123', trustProxy: true } });
  try {
    const fromAttacker = {
      http: 'GET' as const,
      headers: { 'x-admin-key': 'a-wrong-admin-key', 'x-forwarded-for': '2001:db8:beef:1e52::1' },
    };
    const codes = [];
    for (let i = 0; i < 22; i++) codes.push((await server.call('admin.getUser', { user_id: 1 }, fromAttacker)).body.code);
    assert.deepEqual(codes, [...Array(20).fill(1), 7, 7]);
    const admin = await server.call(
      'admin.getUser',
      { user_id: 1 },
      { http: 'GET', headers: { 'x-admin-key': 'the-right-admin-key-123', 'x-forwarded-for': '203.0.113.10' } },
    );
    assert.notEqual(admin.body.code, 7);
    assert.notEqual(admin.body.code, 1);
  } finally {
    await close();
  }
});

test('requests from one address do not spend the request budget of another', async () => {
  const { server, close } = await serverWithFixedKey({ config: { trustProxy: true, rateLimitPerIp: { max: 5, windowSeconds: 60 } } });
  try {
    const codes = [];
    for (let i = 0; i < 7; i++)
      codes.push((await server.call('no.such.method', {}, { headers: { 'x-forwarded-for': '2001:db8:cafe:1b62::7' } })).body.code);
    assert.deepEqual(codes, [5, 5, 5, 5, 5, 7, 7]);
    const victim = await server.call('users.get', { user_ids: '1' }, { http: 'GET', headers: { 'x-forwarded-for': '198.51.100.23' } });
    assert.equal(victim.body.code, 0);
  } finally {
    await close();
  }
});
