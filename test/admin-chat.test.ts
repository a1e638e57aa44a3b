import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ok, type TestServer } from './helpers.js';
import { admin, adminCall, fails, signIn, withAdminServer } from './admin-support.js';

const chat = async (server: TestServer) => ok(await server.call('gchat.get', {}, { http: 'GET' }));

test('admin.setChatStatus changes only the given flags and gchat.get and gchat.send follow at once', () =>
  withAdminServer(async (server) => {
    const token = await signIn(server, 'alice@example.com');
    const closed = await admin(server, 'setChatStatus', { closed: 1 });
    assert.deepEqual(closed.status, { closed: true, slowmode: false, emoteonly: false });
    assert.deepEqual((await chat(server)).status, { closed: true, slowmode: false, emoteonly: false });
    const refused = fails(await server.call('gchat.send', { message: 'anyone there?' }, { token }), 1203);
    assert.equal((refused.data as { type: string }).type, 'DISABLED');

    const slow = await admin(server, 'setChatStatus', { closed: 0, slowmode: 1, slowmode_interval: 30 });
    assert.deepEqual(slow, { status: { closed: false, slowmode: true, emoteonly: false }, slowmode_interval: 30 });
    assert.deepEqual((await chat(server)).status, { closed: false, slowmode: true, emoteonly: false });
    ok(await server.call('gchat.send', { message: 'first' }, { token }));
    fails(await server.call('gchat.send', { message: 'second' }, { token }), 7);
    server.clock.advance(31);
    ok(await server.call('gchat.send', { message: 'after the interval' }, { token }));

    await admin(server, 'setChatStatus', { slowmode: 0, emoteonly: 1 });
    assert.deepEqual((await chat(server)).status, { closed: false, slowmode: false, emoteonly: true });
    const words = fails(await server.call('gchat.send', { message: 'words are not emoticons' }, { token }), 1203);
    assert.equal((words.data as { type: string }).type, 'EMOTES_ONLY');

    fails(await adminCall(server, 'setChatStatus', { slowmode_interval: 0 }), 2);
    fails(await adminCall(server, 'setChatStatus', { closed: 2 }), 2);
  }));

test('admin.postSystemMessage posts messages of types 2, 3 and 4 that gchat.get shows with their users and prototypes', () =>
  withAdminServer(async (server) => {
    const drop = await admin(server, 'postSystemMessage', { type: 2, user_id: 1, case_item_proto_id: 200, drop_item_proto_id: 100 });
    const gift = await admin(server, 'postSystemMessage', { type: 3, user_id: 'alice', user_id_receiver: 'bob', item_proto_id: 101 });
    const promo = await admin(server, 'postSystemMessage', { type: 4, user_id: 3, item_proto_ids: '100,101' });
    for (const posted of [drop, gift, promo]) assert.equal(typeof posted.msg_id, 'string');

    const data = await chat(server);
    const byId = new Map(data.messages.map((m: any) => [m.msg_id, m]));
    assert.deepEqual(
      { ...(byId.get(drop.msg_id) as object), ts: 0 },
      { type: 2, user_id: 1, msg_id: drop.msg_id, ts: 0, case_item_proto_id: 200, drop_item_proto_id: 100 },
    );
    assert.deepEqual(
      { ...(byId.get(gift.msg_id) as object), ts: 0 },
      { type: 3, user_id: 1, msg_id: gift.msg_id, ts: 0, user_id_receiver: 2, item_proto_id: 101 },
    );
    assert.deepEqual(
      { ...(byId.get(promo.msg_id) as object), ts: 0 },
      { type: 4, user_id: 3, msg_id: promo.msg_id, ts: 0, item_proto_ids: [100, 101] },
    );
    assert.deepEqual(data.users.map((u: any) => u.user_id).sort(), [1, 2, 3]);
    assert.deepEqual(data.item_protos.map((p: any) => p.item_proto_id).sort(), [100, 101, 200]);

    fails(await adminCall(server, 'postSystemMessage', { type: 2, user_id: 1, case_item_proto_id: 200 }), 2);
    fails(await adminCall(server, 'postSystemMessage', { type: 3, user_id: 1, item_proto_id: 101 }), 2);
    fails(await adminCall(server, 'postSystemMessage', { type: 3, user_id: 1, user_id_receiver: 404, item_proto_id: 101 }), 101);
    fails(await adminCall(server, 'postSystemMessage', { type: 4, user_id: 404, item_proto_ids: '100' }), 101);
    fails(await adminCall(server, 'postSystemMessage', { type: 1, user_id: 1 }), 2);
    fails(await adminCall(server, 'postSystemMessage', { type: 5, user_id: 1 }), 2);
  }));

test('admin.deleteMessage removes a message from gchat.get at once', () =>
  withAdminServer(async (server) => {
    const token = await signIn(server, 'bob@example.com');
    const { msg_id } = ok(await server.call('gchat.send', { message: 'something rude' }, { token }));
    const kept = ok(await server.call('gchat.send', { message: 'something nice' }, { token }));
    assert.ok((await chat(server)).messages.some((m: any) => m.msg_id === msg_id));
    assert.deepEqual(await admin(server, 'deleteMessage', { msg_id }), { msg_id });
    const after = (await chat(server)).messages.map((m: any) => m.msg_id);
    assert.ok(!after.includes(msg_id));
    assert.ok(after.includes(kept.msg_id));
    fails(await adminCall(server, 'deleteMessage', { msg_id }), 2);
    fails(await adminCall(server, 'deleteMessage', { msg_id: 'no-such-message' }), 2);
  }));
