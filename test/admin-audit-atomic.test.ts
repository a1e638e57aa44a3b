import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { MAX_PARAM_DEPTH } from '../src/api/depth.js';
import { startTestServer, type TestServer } from './helpers.js';
import { catalogWorld, user } from './item-fixtures.js';

/**
 * No admin action without its audit entry: parameters nested too deeply are refused with code
 * 2 before anything is done, on every method; a call whose entry cannot be written does
 * nothing; no answer carries an internal error's text.
 */

const ADMIN_KEY = 'audit-atomic-admin-key';
const admin = { headers: { 'x-admin-key': ADMIN_KEY } };

/** JSON text of a value nested `depth` levels deep (written out: JSON.stringify itself runs out of stack on deep values). */
function nested(depth: number): string {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    open += i % 2 === 0 ? '[' : '{"a":';
    close = (i % 2 === 0 ? ']' : '}') + close;
  }
  return `${open}1${close}`;
}

const banned = async (server: TestServer, userId: number) =>
  (await server.db.kysely.selectFrom('users').select('global_ban').where('user_id', '=', userId).executeTakeFirstOrThrow()).global_ban;

describe('nested parameters and the audit log', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ world: { ...catalogWorld, users: [user(1), user(2), user(3)] }, config: { adminKey: ADMIN_KEY } });
  });
  after(() => server.close());

  /** A call whose JSON body carries `extra` as written. */
  const callWithExtra = async (method: string, params: Record<string, unknown>, extra: string) => {
    const payload = `${JSON.stringify(params).slice(0, -1)},"extra":${extra}}`;
    const response = await server.app.inject({
      method: 'POST',
      url: `/api/${method}`,
      headers: { ...admin.headers, 'content-type': 'application/json' },
      payload,
    });
    return { status: response.statusCode, body: response.json() as { code: number; description?: string; data?: any } };
  };

  test('an admin call with a deeply nested extra parameter answers 2 and does nothing', async () => {
    const answer = await callWithExtra('admin.banUser', { user_id: 2 }, nested(5000));
    assert.equal(answer.body.code, 2);
    assert.match(answer.body.description!, /nested too deeply/);
    assert.equal(await banned(server, 2), 0);
    // Just within the limit, the extra parameter is ignored as any unknown parameter is, and the entry records the call.
    assert.equal((await callWithExtra('admin.banUser', { user_id: 2 }, nested(MAX_PARAM_DEPTH - 1))).body.code, 0);
    assert.equal(await banned(server, 2), 1);
    const log = (await server.call('admin.auditLog', { action: 'admin.banUser' }, admin)).body.data;
    assert.equal(log.entries[0].result_code, 0);
    assert.equal(log.entries[0].params.user_id, 2);
  });

  test('every method refuses a JSON body nested too deeply with code 2', async () => {
    for (const method of ['gchat.get', 'users.get', 'auth.signin', 'admin.getUser']) {
      const answer = await callWithExtra(method, { user_ids: '1' }, nested(MAX_PARAM_DEPTH));
      assert.equal(answer.body.code, 2, method);
      assert.match(answer.body.description!, /nested too deeply/, method);
    }
  });

  test('JSON text nested too deeply answers 2 without internal error text, and nothing is stored', async () => {
    const proto = `{"item_proto_id":9999,"type":0,"title":"Deep","extra":${nested(5000)}}`;
    const answer = await server.call('admin.upsertItemProto', { item_proto: proto }, admin);
    assert.deepEqual(answer.body, {
      code: 2,
      description: `parameter item_proto: is nested too deeply (at most ${MAX_PARAM_DEPTH} levels of arrays and objects)`,
    });
    const stored = await server.db.kysely
      .selectFrom('item_protos')
      .select('item_proto_id')
      .where('item_proto_id', '=', 9999)
      .executeTakeFirst();
    assert.equal(stored, undefined);
    const world = `{"users":[{"user_id":50,"nick":"deep","extra":${nested(5000)}}]}`;
    const imported = await server.call('admin.importWorld', { world }, admin);
    assert.equal(imported.body.code, 2);
    assert.doesNotMatch(imported.body.description!, /stack|Error/);
  });
});

describe('an admin action whose audit entry cannot be written', () => {
  test("is not carried out, and answers 3 without the error's text", async () => {
    const server = await startTestServer({ world: { users: [user(1), user(2)] }, config: { adminKey: ADMIN_KEY } });
    try {
      // The audit log becomes unwritable (as a full disk or a lost table would make it).
      await sql`alter table audit_log rename to audit_log_gone`.execute(server.db.kysely);
      const answer = await server.call('admin.banUser', { user_id: 2 }, admin);
      assert.equal(answer.status, 500);
      assert.deepEqual(answer.body, { code: 3, description: 'internal server error' });
      assert.equal(await banned(server, 2), 0);
    } finally {
      await server.close();
    }
  });
});
