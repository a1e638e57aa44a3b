import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyFingerprint } from '../src/api/admin-key.js';
import { startTestServer } from './helpers.js';
import { ADMIN_KEY, PASSWORD, admin, adminCall, fails, smallWorld, startAdminServer } from './admin-support.js';

test('with no admin key configured every admin method answers 4', async () => {
  const server = await startTestServer();
  try {
    for (const name of ['getUser', 'createUser', 'auditLog', 'exportWorld']) {
      fails(await adminCall(server, name, { user_id: 1 }), 4);
      fails(await adminCall(server, name, { user_id: 1 }, { key: null }), 4);
    }
  } finally {
    await server.close();
  }
});

test('a wrong or missing admin key answers 1 and is not recorded', async () => {
  const server = await startAdminServer({ world: await smallWorld() });
  try {
    fails(await adminCall(server, 'getUser', { user_id: 1 }, { key: 'not-the-key-at-all' }), 1);
    fails(await adminCall(server, 'getUser', { user_id: 1 }, { key: null }), 1);
    fails(await adminCall(server, 'getUser', { user_id: 1 }, { key: `${ADMIN_KEY}x` }), 1);
    assert.equal((await admin(server, 'auditLog')).count, 0);
    const log = await admin(server, 'auditLog');
    assert.equal(log.count, 1, 'only the first auditLog call is recorded');
    assert.equal(log.entries[0].action, 'admin.auditLog');
  } finally {
    await server.close();
  }
});

test('repeated wrong keys from one address are rate limited, even when the right key follows', async () => {
  const server = await startAdminServer({ world: await smallWorld() });
  try {
    const ip = '203.0.113.7';
    let limited;
    for (let i = 0; i < 40 && !limited; i++) {
      const answer = await adminCall(server, 'getUser', { user_id: 1 }, { key: 'guessing-the-admin-key', ip });
      if (answer.body.code === 7) limited = answer;
      else fails(answer, 1);
    }
    assert.ok(limited, 'wrong keys are limited');
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.ok(limited.body.data.retry_after > 0);
    fails(await adminCall(server, 'getUser', { user_id: 1 }, { ip }), 7);
    // Another address is not affected.
    assert.equal((await admin(server, 'getUser', { user_id: 1 })).user.user_id, 1);
    // The window passes.
    server.clock.advance(limited.body.data.retry_after + 1);
    assert.equal(ok(await adminCall(server, 'getUser', { user_id: 1 }, { ip })).user.user_id, 1);
  } finally {
    await server.close();
  }
});

function ok(answer: Awaited<ReturnType<typeof adminCall>>) {
  assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
  return answer.body.data;
}

test('the audit log records every authorised call, newest first, without secrets', async () => {
  const server = await startAdminServer({ world: await smallWorld() });
  try {
    const created = await admin(server, 'createUser', { email: 'Dave@Example.com', password: 'a long enough password', nick: 'Dave' });
    fails(await adminCall(server, 'banUser', { user_id: 999 }), 101);
    fails(await adminCall(server, 'createUser', { email: 'eve@example.com', password: 'short', nick: 'Eve' }), 2);
    fails(await adminCall(server, 'muteUser', {}), 2);
    await admin(server, 'updateUser', { user_id: created.user.user_id, password: PASSWORD });
    await admin(server, 'importWorld', { world: JSON.stringify({ collections: [{ collection_id: 77, title: 'Audit' }] }) });
    fails(await adminCall(server, 'getUser', { user_id: 1 }, { key: 'wrong-key-wrong-key' }), 1);

    const log = await admin(server, 'auditLog', { count: 10 });
    assert.equal(log.count, 6);
    assert.deepEqual(
      log.entries.map((e: any) => [e.action, e.result_code]),
      [
        ['admin.importWorld', 0],
        ['admin.updateUser', 0],
        ['admin.muteUser', 2],
        ['admin.createUser', 2],
        ['admin.banUser', 101],
        ['admin.createUser', 0],
      ],
    );
    const ids = log.entries.map((e: any) => e.audit_id);
    assert.deepEqual(
      ids,
      [...ids].sort((a: number, b: number) => b - a),
    );
    for (const entry of log.entries) {
      assert.equal(entry.key_fingerprint, keyFingerprint(ADMIN_KEY));
      assert.equal(entry.ip, '127.0.0.1');
      assert.equal(entry.ts, Math.floor(server.clock.now() / 1000));
    }
    const text = JSON.stringify(log);
    assert.ok(!text.includes('a long enough password') && !text.includes(PASSWORD) && !text.includes(ADMIN_KEY), 'no secrets');
    const createEntry = log.entries[5];
    assert.equal(createEntry.params.email, 'Dave@Example.com');
    assert.equal(createEntry.params.password, '[redacted]');
    assert.deepEqual(log.entries[0].params.world.sections, { collections: 1 });
    assert.deepEqual(log.entries[4].params, { user_id: 999 });
  } finally {
    await server.close();
  }
});

test('admin.auditLog pages with offset and count, filters by action, and caps count at 100', async () => {
  const server = await startAdminServer({ world: await smallWorld() });
  try {
    for (let i = 0; i < 7; i++) await admin(server, 'getUser', { user_id: 1 + (i % 3) });
    // Each read of the log is itself recorded once answered: the first read saw the 7 calls before it.
    const unfiltered = await admin(server, 'auditLog', { count: 2 });
    assert.equal(unfiltered.count, 7);
    assert.equal((await admin(server, 'auditLog', { count: 2 })).count, 8);

    const page = (offset: number) => admin(server, 'auditLog', { action: 'admin.getUser', offset, count: 3 });
    const pages = [await page(0), await page(3), await page(6)];
    assert.deepEqual(
      pages.map((p) => p.entries.length),
      [3, 3, 1],
    );
    assert.ok(pages.every((p) => p.count === 7));
    const entries = pages.flatMap((p) => p.entries);
    assert.ok(entries.every((e: any) => e.action === 'admin.getUser'));
    const ids = entries.map((e: any) => e.audit_id);
    assert.deepEqual(
      ids,
      [...ids].sort((a: number, b: number) => b - a),
    );
    assert.equal(new Set(ids).size, 7);
    assert.deepEqual(entries.map((e: any) => e.params.user_id).reverse(), [1, 2, 3, 1, 2, 3, 1]);
    fails(await adminCall(server, 'auditLog', { count: 101 }), 6);
    const beyond = await admin(server, 'auditLog', { offset: 1000 });
    assert.deepEqual(beyond.entries, []);
  } finally {
    await server.close();
  }
});

test('admin methods are extensions, declare a result schema and answer on GET too', async () => {
  const server = await startAdminServer({ world: await smallWorld() });
  try {
    const answer = await server.call('admin.getUser', { user_id: 'alice' }, { http: 'GET', headers: { 'x-admin-key': ADMIN_KEY } });
    assert.equal(answer.body.data.user.user_id, 1);
    const { allAdminMethods } = await import('../src/domains.js');
    for (const method of allAdminMethods()) {
      assert.equal(method.auth, 'admin', method.name);
      assert.equal(method.extension, true, method.name);
      assert.ok(method.result, `${method.name} has a result schema`);
      assert.equal((method.result as { additionalProperties?: boolean }).additionalProperties, false, `${method.name} result is strict`);
    }
  } finally {
    await server.close();
  }
});
