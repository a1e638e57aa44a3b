import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allMethods } from '../src/domains.js';
import { responseProblems } from './response-check.js';
import { sdkRuleProblems, sdkRules } from './sdk-rules/index.js';

/**
 * The second check every answer of the suite passes (test/response-check.ts): the reference
 * client's rules. Here it must refuse each answer shape that client refuses, and accept
 * the shapes it accepts.
 */

const user = { user_id: 1, nick: 'Alice', gender: 1, avatar: 'a.png', nicks_old: [], games: 0, games_wins: 0, xp: 0, xp_level: 0 };
const short = { user_id: 1, nick: 'Alice', gender: 1, avatar: 'a.png' };
const answer = (data: unknown) => ({ code: 0, data });
const inventory = (equipped: unknown) => answer({ count: 0, items: [], collections: [], equipped });

test('rank: a visible rank shown as {hidden: 0} is refused wherever a user appears; the four forms and no rank pass', () => {
  const hiddenZero = { ...user, rank: { hidden: 0 } };
  assert.match(sdkRuleProblems('users.get', {}, answer([hiddenZero])).join(), /reference client would refuse .*\/0\/rank/);
  assert.match(sdkRuleProblems('users.get', { type: 'short' }, answer([{ ...short, rank: { hidden: 0 } }])).join(), /\/0\/rank/);
  assert.match(sdkRuleProblems('friends.get', {}, answer({ count: 1, friends: [hiddenZero] })).join(), /\/friends\/0\/rank/);
  assert.match(
    sdkRuleProblems(
      'inventory.get',
      { add_legacy: 0, add_user: 1 },
      answer({ count: 0, items: [], collections: [], user: hiddenZero }),
    ).join(),
    /\/user\/rank/,
  );
  const chat = { messages: [], status: { closed: false, slowmode: false, emoteonly: false }, item_protos: [] };
  assert.match(
    sdkRuleProblems('gchat.get', {}, answer({ ...chat, users: [{ ...short, rank: { hidden: 0 } }] })).join(),
    /\/users\/0\/rank/,
  );
  for (const rank of [{ hidden: 1 }, { qual: 3 }, { expired: 1 }, { id: 4, pts: 1200 }, undefined])
    assert.deepEqual(sdkRuleProblems('users.get', {}, answer([{ ...user, rank }])), [], JSON.stringify(rank));
  for (const rank of [{ hidden: true }, { id: 4 }, { pts: 3 }, { expired: 0 }, {}])
    assert.notDeepEqual(sdkRuleProblems('users.get', {}, answer([{ ...user, rank }])), [], JSON.stringify(rank));
});

test('placeholders: one without avatar_key is refused, and so is one carrying the flags of an active user', () => {
  const placeholder = { user_id: 9, nick: 'Unknown user', avatar: '', inactive: 'not_exists' };
  for (const params of [{}, { type: 'short' }]) {
    assert.match(sdkRuleProblems('users.get', params, answer([placeholder])).join(), /\/0\/avatar_key/);
    assert.deepEqual(sdkRuleProblems('users.get', params, answer([{ ...placeholder, avatar_key: '' }])), []);
    assert.match(sdkRuleProblems('users.get', params, answer([{ ...placeholder, avatar_key: '', gender: 0 }])).join(), /refuse .*\/0\//);
  }
  assert.deepEqual(
    sdkRuleProblems('users.get', {}, answer([{ domain: 'gone', nick: 'Blocked', avatar: '', avatar_key: 'k', inactive: 'global_ban' }])),
    [],
  );
  assert.notDeepEqual(sdkRuleProblems('users.get', {}, answer([{ ...placeholder, avatar_key: '', inactive: 'deleted' }])), []);
});

test('the equipped tree: a board without cards, generator or joke is refused; a full one passes', () => {
  const params = { add_legacy: 0, add_equipped: 'tree' };
  const full = { cards: { 1: [15] }, generator: 16, joke: 0 };
  assert.deepEqual(sdkRuleProblems('inventory.get', params, inventory({ game: { classic: full } })), []);
  assert.deepEqual(sdkRuleProblems('inventory.get', params, inventory({ game: {} })), []);
  for (const slot of ['cards', 'generator', 'joke'] as const) {
    const board: Record<string, unknown> = { ...full };
    delete board[slot];
    assert.match(
      sdkRuleProblems('inventory.get', params, inventory({ game: { classic: board } })).join(),
      new RegExp(`/equipped/game/classic/${slot}`),
      slot,
    );
  }
  assert.match(sdkRuleProblems('inventory.get', params, inventory({ game: { quick: { ...full, generator: null } } })).join(), /generator/);
});

test('bits are numbers, void methods answer no data, msg_id is a string, errors carry a description', () => {
  assert.match(sdkRuleProblems('users.get', {}, answer([{ ...user, vip: true }])).join(), /\/0\/vip/);
  assert.match(sdkRuleProblems('users.get', {}, answer([{ ...user, gender: 2 }])).join(), /\/0\/gender/);
  assert.match(sdkRuleProblems('friends.add', {}, { code: 0, data: {} }).join(), /no data key/);
  assert.deepEqual(sdkRuleProblems('friends.add', {}, { code: 0 }), []);
  assert.match(sdkRuleProblems('gchat.send', {}, answer({ msg_id: 12 })).join(), /msg_id/);
  assert.match(sdkRuleProblems('users.get', {}, { code: 0 }).join(), /data is missing/);
  assert.match(sdkRuleProblems('users.get', {}, { code: 2 }).join(), /description/);
  assert.match(sdkRuleProblems('users.get', {}, { code: 7, description: 'slow', data: [3] }).join(), /data/);
  assert.deepEqual(sdkRuleProblems('no.suchMethod', {}, answer({ anything: 1 })), [], 'a method without rules is not held to any');
});

test('the suite holds every answer to these rules, beside the published schema', () => {
  const usersGet = allMethods().find((m) => m.name === 'users.get');
  const problems = responseProblems(usersGet, 200, answer([{ ...user, rank: { hidden: 0 } }]), {});
  assert.ok(
    problems.some((p) => /reference client would refuse/.test(p)),
    problems.join('\n'),
  );
  // Every method of the server that the reference client knows has a rule.
  const ours = new Set(allMethods().map((m) => m.name));
  for (const name of [
    'users.get',
    'friends.get',
    'friends.getRequests',
    'inventory.get',
    'inventory.craft',
    'gchat.get',
    'gchat.send',
    'auth.signin',
    'im.send',
    'im.dialogsGet',
    'im.historyGet',
  ])
    assert.ok(ours.has(name) && name in sdkRules, name);
});
