import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers.js';
import { allMethods } from '../src/domains.js';
import type { World } from '../src/world/schema.js';

/**
 * Answers every method can give that the transport makes (request limit, admin key), each
 * checked against that method's published schema like every answer in the suite.
 */

const ADMIN_KEY = 'answers-admin-key-0123456789';
const adminMethods = allMethods().filter((m) => m.auth === 'admin');

test('every method answers code 7 with HTTP 429 and Retry-After once the address is over its limit', async () => {
  const server = await startTestServer({ config: { rateLimit: true, rateLimitPerIp: { max: 0, windowSeconds: 60 }, adminKey: ADMIN_KEY } });
  try {
    for (const method of allMethods()) {
      for (const http of ['GET', 'POST'] as const) {
        const answer = await server.call(method.name, {}, { http, headers: { 'x-admin-key': ADMIN_KEY } });
        assert.equal(answer.status, 429, `${http} ${method.name}`);
        assert.equal(answer.body.code, 7);
        assert.ok(answer.body.data.retry_after > 0);
        assert.equal(answer.headers['retry-after'], String(answer.body.data.retry_after));
      }
    }
  } finally {
    await server.close();
  }
});

test('every admin method answers 4 while no admin key is configured, and 1 to a wrong key', async () => {
  const closed = await startTestServer();
  try {
    for (const method of adminMethods) {
      const answer = await closed.call(method.name, {}, { headers: { 'x-admin-key': ADMIN_KEY } });
      assert.deepEqual(answer.body, { code: 4, description: 'the admin API is disabled: no admin key is configured' }, method.name);
    }
  } finally {
    await closed.close();
  }
  const open = await startTestServer({ config: { adminKey: ADMIN_KEY } });
  try {
    // One address per call: wrong keys from one address are refused with 7 after a while.
    for (const [i, method] of adminMethods.entries()) {
      const answer = await open.call(method.name, {}, { headers: { 'x-admin-key': `${ADMIN_KEY}-wrong` }, ip: `10.1.0.${i + 1}` });
      assert.deepEqual(answer.body, { code: 1, description: 'wrong or missing admin key' }, method.name);
    }
  } finally {
    await open.close();
  }
});

test('admin methods about one account answer 101 for an unknown one', async () => {
  const server = await startTestServer({ config: { adminKey: ADMIN_KEY }, world: { users: [{ user_id: 1, nick: 'Only' }] } });
  try {
    const headers = { 'x-admin-key': ADMIN_KEY };
    const calls: [string, Record<string, unknown>][] = [
      ['admin.clearTotp', { user_id: 999 }],
      ['admin.muteUser', { user_id: 999, duration: 60 }],
      ['admin.setPrivacy', { user_id: 'nobody-here', inventory_privacy: 'friends' }],
    ];
    for (const [name, params] of calls) {
      const answer = await server.call(name, params, { headers });
      assert.equal(answer.body.code, 101, `${name}: ${JSON.stringify(answer.body)}`);
      assert.equal(typeof answer.body.description, 'string');
    }
  } finally {
    await server.close();
  }
});

test('admin.exportWorld answers equipped items of both kinds and friendships in the published form', async () => {
  const world: World = {
    collections: [{ collection_id: 1, title: 'Classic' }],
    item_protos: [
      { item_proto_id: 1, type: 0, title: 'Card', quality_id: 1, collection_id: 1, monopoly_id: 1 },
      { item_proto_id: 2, type: 5, title: 'Badge', quality_id: 1 },
    ],
    users: [
      { user_id: 1, nick: 'Ann' },
      { user_id: 2, nick: 'Ben' },
    ],
    items: [
      { item_id: 1, user_id: 1, item_proto_id: 1, ts_owned: 100, equip: { game: 'classic', slot: 'cards', monopoly_id: 1 } },
      { item_id: 2, user_id: 1, item_proto_id: 2, ts_owned: 100, equip: { slot: 'badge' } },
    ],
    friends: [[1, 2]],
  };
  const server = await startTestServer({ config: { adminKey: ADMIN_KEY }, world });
  try {
    const answer = await server.call('admin.exportWorld', {}, { headers: { 'x-admin-key': ADMIN_KEY } });
    assert.equal(answer.body.code, 0);
    const exported = answer.body.data.world;
    assert.deepEqual(
      exported.items.map((item: { item_id: number; equip?: unknown }) => [item.item_id, item.equip]),
      [
        [1, { game: 'classic', slot: 'cards', monopoly_id: 1 }],
        [2, { slot: 'badge' }],
      ],
    );
    assert.equal(exported.friends.length, 1);
  } finally {
    await server.close();
  }
});
