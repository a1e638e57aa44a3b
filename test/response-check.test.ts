import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { allMethods } from '../src/domains.js';
import { watchResponses } from './response-check.js';

/**
 * The watch every test server carries (test/helpers.ts) fails answers that drift from the
 * published schemas. Here a stand-in transport answers real methods with wrong bodies, and
 * the watch must name each one.
 */

const proto = { item_proto_id: 5, type: 0, image: '', title: 'Card', description: 'A card', quality_id: 1 };

/** Bodies for data.getItemProtos and gchat.get, by name: one right answer, then wrong ones. */
const bodies: Record<string, { status?: number; body: unknown }> = {
  right: { body: { code: 0, data: { item_protos: [proto], collections: [] } } },
  'right-error': { body: { code: 6, description: 'too many objects' } },
  'extra-top-level': { body: { code: 0, data: { item_protos: [], collections: [] }, debug: 'x' } },
  'extra-in-data': { body: { code: 0, data: { item_protos: [], collections: [], total: 0 } } },
  'extra-deep': { body: { code: 0, data: { item_protos: [{ ...proto, cost_internal: 3 }], collections: [] } } },
  'string-for-integer': { body: { code: 0, data: { item_protos: [{ ...proto, item_proto_id: '5' }], collections: [] } } },
  'null-for-string': { body: { code: 0, data: { item_protos: [{ ...proto, title: null }], collections: [] } } },
  'missing-field': { body: { code: 0, data: { item_protos: [{ ...proto, title: undefined }], collections: [] } } },
  'negative-id': { body: { code: 0, data: { item_protos: [{ ...proto, item_proto_id: -5 }], collections: [] } } },
  'object-for-array': { body: { code: 0, data: { item_protos: { 5: proto }, collections: [] } } },
  'undeclared-code': { body: { code: 701, description: 'private' } },
  'error-without-description': { body: { code: 6 } },
  'error-with-data': { body: { code: 6, description: 'too many', data: { max: 50 } } },
  'rate-limit-as-200': { body: { code: 7, description: 'slow down', data: { retry_after: 2 } } },
  'no-code': { body: { data: [] } },
};

async function standIn() {
  const app = Fastify({ logger: false });
  const watch = watchResponses(app, allMethods());
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.get('/api/:method', async (request, reply) => {
    const { status, body } = bodies[(request.query as { answer: string }).answer];
    return reply
      .status(status ?? 200)
      .type('application/json')
      .send(JSON.stringify(body));
  });
  await app.ready();
  return { app, watch };
}

test('the response watch names every answer that differs from the published schema', async () => {
  const { app, watch } = await standIn();
  try {
    const problemsOf = async (method: string, answer: string) => {
      const response = await app.inject({ method: 'GET', url: `/api/${method}?answer=${answer}` });
      return watch.take(String(response.headers['x-request-id'])).join('\n');
    };
    assert.equal(await problemsOf('data.getItemProtos', 'right'), '');
    assert.equal(await problemsOf('data.getItemProtos', 'right-error'), '');
    const wrong: Record<string, RegExp> = {
      'extra-top-level': /data\.getItemProtos answered a body its published schema does not allow/,
      'extra-in-data': /does not allow .*\/data/,
      'extra-deep': /does not allow .*\/data\/item_protos\/0/,
      'string-for-integer': /does not allow .*item_protos\/0\/item_proto_id/,
      'null-for-string': /does not allow .*item_protos\/0\/title/,
      'missing-field': /does not allow/,
      'negative-id': /does not allow .*item_protos\/0\/item_proto_id/,
      'object-for-array': /does not allow .*item_protos/,
      'undeclared-code': /answered code 701, which it does not declare/,
      'error-without-description': /does not allow/,
      'error-with-data': /does not allow/,
      'rate-limit-as-200': /code 7 came with HTTP status 200, expected 429/,
      'no-code': /the body has no numeric code/,
    };
    for (const [answer, expected] of Object.entries(wrong)) assert.match(await problemsOf('data.getItemProtos', answer), expected, answer);
    // The same body is right for one method and wrong for another.
    assert.match(await problemsOf('gchat.get', 'right'), /gchat\.get answered a body its published schema does not allow/);
    assert.deepEqual(watch.unreported(), []);
  } finally {
    await app.close();
  }
});

test('answers to real HTTP requests nobody checked are reported at the end', async () => {
  const { app, watch } = await standIn();
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const right = await fetch(`http://127.0.0.1:${port}/api/data.getItemProtos?answer=right`);
    assert.equal((await right.json()).code, 0);
    assert.deepEqual(watch.unreported(), []);
    await (await fetch(`http://127.0.0.1:${port}/api/data.getItemProtos?answer=extra-deep`)).text();
    const reported = watch.unreported();
    assert.equal(reported.length, 1);
    assert.match(reported[0], /^GET \/api\/data\.getItemProtos: data\.getItemProtos answered a body its published schema does not allow/);
    assert.deepEqual(watch.unreported(), [], 'reported once');
  } finally {
    await app.close();
  }
});
