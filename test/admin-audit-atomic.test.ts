import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { MAX_PARAM_DEPTH } from '../src/api/depth.js';
import { keyFingerprint } from '../src/api/admin-key.js';
import { allAdminMethods } from '../src/domains.js';
import { ManualClock } from '../src/infra/clock.js';
import type { Database } from '../src/db/connection.js';
import { startTestServer, type TestServer } from './helpers.js';
import { catalogWorld, tokenFor, user } from './item-fixtures.js';
import { differences, nested, snapshot } from './fuzz-support.js';
import { ADMIN_KEY as SUITE_ADMIN_KEY, PASSWORD, smallWorld, startAdminServer } from './admin-support.js';

/**
 * No admin action without its audit entry: an action's writes and its entry commit together
 * or not at all, a call answers only once its entry is stored, parameters nested too deeply
 * are refused with code 2 before anything is done, on every method, and no answer carries an
 * internal error's text.
 */

const ADMIN_KEY = 'audit-atomic-admin-key';
const admin = { headers: { 'x-admin-key': ADMIN_KEY } };

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

  test('secrets nested in parameters are redacted from the audit entry as top-level ones are', async () => {
    const nestedOnly = await server.call(
      'admin.createUser',
      { user: { email: 'n@example.com', password: 'NESTED-SECRET-pw-1', nick: 'n' } },
      admin,
    );
    assert.equal(nestedOnly.body.code, 2);
    const both = await server.call(
      'admin.createUser',
      {
        email: 'm@example.com',
        password: 'TOP-LEVEL-SECRET-pw-2',
        nick: 'm',
        profile: [
          { Totp_Secret: 'NESTED-SECRET-3', links: [{ 'access%5Ftoken': 'NESTED-SECRET-4', promocode: 'NESTED-SECRET-5', kept: 'shown' }] },
        ],
      },
      admin,
    );
    assert.equal(both.body.code, 0);
    const log = (await server.call('admin.auditLog', { action: 'admin.createUser' }, admin)).body.data;
    assert.deepEqual(
      log.entries.map((e: any) => [e.result_code, e.params]),
      [
        [
          0,
          {
            email: 'm@example.com',
            password: '[redacted]',
            nick: 'm',
            profile: [{ Totp_Secret: '[redacted]', links: [{ 'access%5Ftoken': '[redacted]', promocode: '[redacted]', kept: 'shown' }] }],
          },
        ],
        [2, { user: { email: 'n@example.com', password: '[redacted]', nick: 'n' } }],
      ],
    );
    assert.doesNotMatch(JSON.stringify(log), /SECRET-(pw-)?\d/);
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
      // A call that only reads does not answer without its entry either.
      const read = await server.call('admin.getUser', { user_id: 2 }, admin);
      assert.deepEqual([read.status, read.body], [500, { code: 3, description: 'internal server error' }]);
      await sql`alter table audit_log_gone rename to audit_log`.execute(server.db.kysely);
      assert.equal(await lastAuditId(server.db), 0, 'no entry of either call');
      // With the log back, the same call is carried out and recorded.
      assert.equal((await server.call('admin.banUser', { user_id: 2 }, admin)).body.code, 0);
      assert.equal(await banned(server, 2), 1);
      assert.deepEqual(
        (await entriesAfter(server.db, 0)).map((e) => [e.action, e.result_code]),
        [['admin.banUser', 0]],
      );
    } finally {
      await server.close();
    }
  });
});

/** The audit log's entries after `afterId`, oldest first. */
async function entriesAfter(db: Database, afterId: number) {
  const rows = await db.kysely.selectFrom('audit_log').selectAll().where('audit_id', '>', afterId).orderBy('audit_id').execute();
  return rows.map((row) => ({ ...row, params: JSON.parse(row.params) as Record<string, unknown> }));
}

async function lastAuditId(db: Database): Promise<number> {
  const row = await db.kysely
    .selectFrom('audit_log')
    .select((eb) => eb.fn.max('audit_id').as('id'))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}

/**
 * A trigger that makes the database refuse every audit entry recording a success (code 0), as
 * written or as updated: the audit log accepts failures only.
 */
async function refuseSuccessEntries(db: Database): Promise<void> {
  if (db.dialect === 'sqlite') {
    for (const event of ['insert', 'update'])
      await sql
        .raw(
          `create trigger audit_refuses_success_${event} before ${event} on audit_log when new.result_code = 0 begin select raise(abort, 'the audit log refuses this entry'); end`,
        )
        .execute(db.kysely);
  } else {
    await sql
      .raw(
        `create or replace function audit_refuses_success() returns trigger language plpgsql as $$ begin if new.result_code = 0 then raise exception 'the audit log refuses this entry'; end if; return new; end $$`,
      )
      .execute(db.kysely);
    await sql
      .raw(
        'create trigger audit_refuses_success before insert or update on audit_log for each row execute function audit_refuses_success()',
      )
      .execute(db.kysely);
  }
}

async function acceptEveryEntry(db: Database): Promise<void> {
  if (db.dialect === 'sqlite') {
    for (const event of ['insert', 'update']) await sql.raw(`drop trigger audit_refuses_success_${event}`).execute(db.kysely);
  } else {
    await sql.raw('drop trigger audit_refuses_success on audit_log').execute(db.kysely);
  }
}

const SECRET = /password|secret|token|captcha|admin_key|^(code|promocode)$/i;

/**
 * One call of every admin method, in an order where each finds what it acts on (the user to
 * unban was banned by the call before). Methods that only read are marked: they change nothing
 * even when they succeed.
 */
function everyAdminCall(now: number): { method: string; params: Record<string, unknown>; reads?: true }[] {
  return [
    { method: 'admin.getUser', params: { user_id: 1 }, reads: true },
    { method: 'admin.searchUsers', params: { query: 'bo' }, reads: true },
    { method: 'admin.createUser', params: { email: 'dave@example.com', password: 'a long enough password', nick: 'Dave' } },
    { method: 'admin.updateUser', params: { user_id: 2, nick: 'Robert', password: 'another long password' } },
    { method: 'admin.setTotp', params: { user_id: 3 } },
    { method: 'admin.clearTotp', params: { user_id: 3 } },
    // A ban ends the trades of the banned (Erin's trade 2, in the same transaction as the entry); admin.cancelTrade needs trade 1 open.
    { method: 'admin.banUser', params: { user_id: 'erin' } },
    { method: 'admin.unbanUser', params: { user_id: 'erin' } },
    { method: 'admin.muteUser', params: { user_id: 1, duration: 600 } },
    { method: 'admin.setPrivacy', params: { user_id: 1, inventory_privacy: 'nobody' } },
    { method: 'admin.killSessions', params: { user_id: 3 } },
    { method: 'admin.createBot', params: { owner_id: 1, nick: 'Robo' } },
    { method: 'admin.upsertItemProto', params: { item_proto: JSON.stringify({ item_proto_id: 300, type: 0, title: 'Fresh Street' }) } },
    { method: 'admin.upsertCollection', params: { collection_id: 20, title: 'Fresh' } },
    { method: 'admin.grantItems', params: { user_id: 2, item_proto_id: 100, copies: 2 } },
    { method: 'admin.revokeItem', params: { item_id: 500, reason: 'granted by mistake' } },
    { method: 'admin.makeFriends', params: { user_id: 1, other_user_id: 2 } },
    { method: 'admin.endFriendship', params: { user_id: 1, other_user_id: 2 } },
    { method: 'admin.addFriendRequest', params: { user_id: 1, other_user_id: 3 } },
    { method: 'admin.block', params: { user_id: 3, other_user_id: 2 } },
    { method: 'admin.unblock', params: { user_id: 3, other_user_id: 2 } },
    { method: 'admin.getChatStatus', params: {}, reads: true },
    { method: 'admin.setChatStatus', params: { closed: 1, slowmode: 1 } },
    { method: 'admin.deleteMessage', params: { msg_id: 'm-audit-1' } },
    { method: 'admin.postSystemMessage', params: { type: 4, user_id: 1, item_proto_ids: '100,101' } },
    { method: 'admin.listDraws', params: { user_id: 1 }, reads: true },
    { method: 'admin.exportDraws', params: { user_id: 1 }, reads: true },
    { method: 'admin.createPromocode', params: { code: 'FRESH-CODE', item_proto_ids: '100' } },
    { method: 'admin.listPromocodes', params: {}, reads: true },
    { method: 'admin.disablePromocode', params: { code: 'fresh-code' } },
    { method: 'admin.imHistory', params: { user_id: 1, partner_id: 2 }, reads: true },
    { method: 'admin.imDelete', params: { msg_id: 1 } },
    { method: 'admin.grantMoney', params: { user_id: 2, amount: 12.5, reason: 'prize' } },
    { method: 'admin.revokeMoney', params: { user_id: 2, amount: 2.5, reason: 'granted by mistake' } },
    { method: 'admin.listListings', params: {}, reads: true },
    { method: 'admin.cancelListing', params: { thing_id: 503, reason: 'reported' } },
    { method: 'admin.freezeMarket', params: { user_id: 3, frozen: 1, reason: 'reported' } },
    { method: 'admin.importWorld', params: { world: JSON.stringify({ collections: [{ collection_id: 30, title: 'Imported' }] }) } },
    { method: 'admin.exportWorld', params: {}, reads: true },
    { method: 'admin.listTrades', params: { user_id: 1 }, reads: true },
    { method: 'admin.getTrade', params: { trade_id: 1 }, reads: true },
    { method: 'admin.cancelTrade', params: { trade_id: 1, reason: `checked at ${now}` } },
    { method: 'admin.auditLog', params: { count: 5 }, reads: true },
    { method: 'admin.createApp', params: { name: 'Fresh App', redirect_uris: 'https://fresh.example/cb', scopes: 1 } },
    { method: 'admin.updateApp', params: { app_id: 1, name: 'Renamed App' } },
    { method: 'admin.listApps', params: {}, reads: true },
    { method: 'admin.disableApp', params: { app_id: 1 } },
    { method: 'admin.missionCreate', params: { name: 'Win a game', goal: 'win', target: 1, reward_type: 'item', reward: 100 } },
    { method: 'admin.missionUpdate', params: { mission_id: 1, target: 3 } },
    { method: 'admin.missionList', params: {}, reads: true },
    { method: 'admin.missionDelete', params: { mission_id: 1 } },
  ];
}

describe('every admin action and its audit entry commit together', () => {
  const clock = new ManualClock();
  const now = Math.floor(clock.now() / 1000);
  const calls = everyAdminCall(now);
  let server: TestServer;
  before(async () => {
    const world = await smallWorld();
    server = await startAdminServer({
      clock,
      world: {
        ...world,
        users: [...world.users!, { user_id: 4, nick: 'Erin', domain: 'erin' }],
        items: [
          { item_id: 500, user_id: 1, item_proto_id: 100 },
          { item_id: 501, user_id: 1, item_proto_id: 101 },
          { item_id: 502, user_id: 4, item_proto_id: 101 },
          { item_id: 503, user_id: 2, item_proto_id: 100 },
        ],
        private_messages: [{ msg_id: 1, from: 1, to: 2, text: 'hello', ts_created: now }],
        trades: [
          { trade_id: 1, user_id_from: 1, user_id_to: 2, create_time: now, things_from: [{ item_id: 501, item_proto_id: 101 }] },
          { trade_id: 2, user_id_from: 4, user_id_to: 3, create_time: now, things_from: [{ item_id: 502, item_proto_id: 101 }] },
        ],
        gchat: { messages: [{ msg_id: 'm-audit-1', type: 1, user_id: 2, ts: now, text: 'hello' }] },
        missions: [
          {
            mission_id: 1,
            name: 'Play two games',
            goal: 'play',
            target: 2,
            reward_type: 'money',
            reward: 1,
            progress: [{ user_id: 1, week: 1767571200, counter: 1 }],
          },
        ],
      },
    });
    // An app for the calls that change one.
    const app = await server.call(
      'admin.createApp',
      { name: 'App', redirect_uris: 'https://app.example/cb' },
      { headers: { 'x-admin-key': SUITE_ADMIN_KEY } },
    );
    assert.equal(app.body.data.app.app_id, 1);
    // A listing for the call that ends one.
    const sold = await server.call('market.sell', { thing_id: 503, price: 10 }, { token: await tokenFor(server, 2) });
    assert.equal(sold.body.code, 0, JSON.stringify(sold.body));
    // Sessions for the calls that end them.
    await tokenFor(server, 2);
    await tokenFor(server, 3);
  });
  after(() => server.close());

  test('the calls below cover every admin method', () => {
    assert.deepEqual(
      calls.map((c) => c.method).sort(),
      allAdminMethods()
        .map((m) => m.name)
        .sort(),
    );
  });

  test('an action whose entry the database refuses answers 3 and changes nothing; accepted, it has exactly one entry with code 0', async () => {
    for (const { method, params, reads } of calls) {
      const before = await snapshot(server.db);
      let since = await lastAuditId(server.db);
      await refuseSuccessEntries(server.db);
      try {
        const refused = await server.call(method, params, { headers: { 'x-admin-key': SUITE_ADMIN_KEY } });
        assert.deepEqual([refused.status, refused.body], [500, { code: 3, description: 'internal server error' }], method);
      } finally {
        await acceptEveryEntry(server.db);
      }
      assert.deepEqual(differences(before, await snapshot(server.db)), [], `${method}: nothing changes`);
      assert.deepEqual(
        (await entriesAfter(server.db, since)).map((e) => [e.action, e.result_code]),
        [[method, 3]],
        `${method}: recorded as the failure it answered`,
      );

      since = await lastAuditId(server.db);
      const done = await server.call(method, params, { headers: { 'x-admin-key': SUITE_ADMIN_KEY } });
      assert.equal(done.body.code, 0, `${method}: ${JSON.stringify(done.body).slice(0, 300)}`);
      const entries = await entriesAfter(server.db, since);
      assert.deepEqual(
        entries.map((e) => [e.action, e.result_code, e.key_fingerprint, e.ip, e.ts]),
        [[method, 0, keyFingerprint(SUITE_ADMIN_KEY), '127.0.0.1', now]],
        method,
      );
      assert.deepEqual(Object.keys(entries[0]!.params).sort(), Object.keys(params).sort(), method);
      for (const [name, value] of Object.entries(params))
        if (SECRET.test(name)) assert.equal(entries[0]!.params[name], '[redacted]', `${method} ${name}`);
        else if (name !== 'world') assert.equal(entries[0]!.params[name], value, `${method} ${name}`);
      const changed = differences(before, await snapshot(server.db));
      if (reads) assert.deepEqual(changed, [], `${method} only reads`);
      else assert.notDeepEqual(changed, [], `${method} changes the database`);
    }
  });
});

describe('a failed admin action', () => {
  test('is recorded with the code it answered, and what it wrote before failing is undone', async () => {
    const server = await startAdminServer({ world: await smallWorld() });
    try {
      const call = (method: string, params: Record<string, unknown>) =>
        server.call(method, params, { headers: { 'x-admin-key': SUITE_ADMIN_KEY } });
      assert.equal((await call('admin.block', { user_id: 2, other_user_id: 1 })).body.code, 0);
      const before = await snapshot(server.db);
      const since = await lastAuditId(server.db);
      // Refused inside its transaction: alice may not ask bob, who blocks her.
      assert.equal((await call('admin.addFriendRequest', { user_id: 1, other_user_id: 2 })).body.code, 107);
      // A merge whose later entry is bad: the users it had written go too.
      const world = { users: [{ user_id: 40, nick: 'Forty' }], items: [{ user_id: 4040, item_proto_id: 100 }] };
      const imported = await call('admin.importWorld', { world: JSON.stringify(world) });
      assert.equal(imported.body.code, 2);
      assert.equal((await call('admin.banUser', { user_id: 999 })).body.code, 101);
      assert.equal((await call('admin.createUser', { email: 'x@example.com', password: PASSWORD.slice(0, 5), nick: 'X' })).body.code, 2);
      assert.deepEqual(differences(before, await snapshot(server.db)), []);
      assert.deepEqual(
        (await entriesAfter(server.db, since)).map((e) => [e.action, e.result_code]),
        [
          ['admin.addFriendRequest', 107],
          ['admin.importWorld', 2],
          ['admin.banUser', 101],
          ['admin.createUser', 2],
        ],
      );
    } finally {
      await server.close();
    }
  });
});
