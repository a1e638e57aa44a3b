import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers.js';

test('unknown method answers 5', async () => {
  const server = await startTestServer();
  try {
    const answer = await server.call('nope.nothing', {});
    assert.equal(answer.status, 200);
    assert.equal(answer.body.code, 5);
    assert.ok(answer.headers['x-request-id']);
    const health = await server.app.inject({ method: 'GET', url: '/readyz' });
    assert.deepEqual(health.json(), { status: 'ok' });
  } finally {
    await server.close();
  }
});
