import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers.js';
import { missing } from './components.js';

/**
 * The admin-key failure limit holds under concurrency: however many wrong keys arrive at once,
 * in however many processes, no more than the limit of them is ever compared.
 */

const ADMIN_KEY = 'the-right-admin-key-123';
const LIMIT = 20;

async function burst(servers: TestServer[], count: number): Promise<Record<number, number>> {
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      servers[i % servers.length]!.call(
        'admin.getUser',
        { user_id: 1 },
        { http: 'GET', ip: '198.51.100.9', headers: { 'x-admin-key': `wrong-key-${i}-padding` } },
      ),
    ),
  );
  const tally: Record<number, number> = {};
  for (const answer of answers) tally[answer.body.code] = (tally[answer.body.code] ?? 0) + 1;
  return tally;
}

test('one process: of 400 concurrent wrong keys exactly 20 are compared', async () => {
  const server = await startTestServer({ config: { adminKey: ADMIN_KEY, rateLimit: false } });
  try {
    assert.deepEqual(await burst([server], 400), { 1: LIMIT, 7: 400 - LIMIT });
  } finally {
    await server.close();
  }
});

test('two processes on one Redis: of 400 concurrent wrong keys exactly 20 are compared', { skip: missing.redis }, async () => {
  const first = await startTestServer({ redis: true, config: { adminKey: ADMIN_KEY, rateLimit: false } });
  const second = await startTestServer({ redis: true, location: first.location, config: { adminKey: ADMIN_KEY, rateLimit: false } });
  try {
    assert.deepEqual(await burst([first, second], 400), { 1: LIMIT, 7: 400 - LIMIT });
    // The right key from that address waits too; from another address it works.
    assert.equal(
      (await first.call('admin.getUser', { user_id: 1 }, { http: 'GET', ip: '198.51.100.9', headers: { 'x-admin-key': ADMIN_KEY } })).body
        .code,
      7,
    );
    assert.notEqual(
      (await second.call('admin.getUser', { user_id: 1 }, { http: 'GET', ip: '198.51.100.10', headers: { 'x-admin-key': ADMIN_KEY } })).body
        .code,
      7,
    );
  } finally {
    await second.close();
    await first.close();
  }
});
