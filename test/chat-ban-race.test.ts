import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashPassword } from '../src/auth/passwords.js';
import type { World } from '../src/world/schema.js';
import { DB_KIND } from './helpers.js';
import { api, call, withServeProcesses, type ServerProcess } from './process-support.js';
import { missing } from './components.js';

const ADMIN_KEY = 'chat-ban-race-admin-key';
const asAdmin = { 'x-admin-key': ADMIN_KEY };
const PASSWORD = 'chat-ban-race-password';

/** Rounds of each race: each with a user no message of the window has named yet. */
const ROUNDS = 30;
/** Users who write alongside each race, so that the raced message waits its turn to be stored. */
const WRITERS = [1, 2, 3, 4, 5, 6];
/** A user with no session, whose sessions are ended only to wait for every process to hear what came before. */
const BARRIER = 9;
/** Users banned while their first message is sent, one per round. */
const BANNED_FIRST = Array.from({ length: ROUNDS }, (_, i) => 100 + i);
/** Globally blocked users unbanned while a message first mentions them, one per round. */
const UNBANNED_FIRST = Array.from({ length: ROUNDS }, (_, i) => 200 + i);

const emailOf = (userId: number) => `u${userId}@example.com`;

/** What users.get shows of a globally blocked account without a domain. */
const blocked = (userId: number) => ({ user_id: userId, nick: 'Blocked account', avatar: '', avatar_key: '', inactive: 'global_ban' });

/** A short form without `online`, which each process tells from its own presence records. */
function offline(user: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (user === undefined) return undefined;
  const { online: _online, ...rest } = user;
  return rest;
}

async function raceWorld(): Promise<World> {
  const password_hash = await hashPassword(PASSWORD);
  const account = (userId: number) => ({ user_id: userId, email: emailOf(userId), password_hash, nick: `User ${userId}` });
  return {
    users: [
      ...WRITERS.map(account),
      account(BARRIER),
      ...BANNED_FIRST.map(account),
      ...UNBANNED_FIRST.map((userId) => ({ ...account(userId), global_ban: 1 as const })),
    ],
  };
}

/** `count` `serve` processes on one new database, with Redis on PostgreSQL; gchat.get shows every message of the test. */
const withProcesses = async (count: number, body: (servers: ServerProcess[]) => Promise<void>) =>
  withServeProcesses({ count, world: await raceWorld(), redis: DB_KIND === 'postgres', env: { ADMIN_KEY, CHAT_HISTORY: '1000' } }, body);

/** Access tokens of the users, signed in one after the other (sign-ins at once from one address would be throttled). */
async function tokensOf(server: ServerProcess, userIds: number[]): Promise<Map<number, string>> {
  const tokens = new Map<number, string>();
  for (const userId of userIds)
    tokens.set(userId, (await api(server, 'auth.signin', { email: emailOf(userId), password: PASSWORD })).access_token);
  return tokens;
}

/**
 * Once every process has handled every bus message the given processes published so far: ending
 * sessions is confirmed by every process, and each process hears one publisher in order.
 */
async function everyProcessHeard(servers: ServerProcess[]): Promise<void> {
  for (const server of servers) await api(server, 'admin.killSessions', { user_id: BARRIER }, asAdmin);
}

/** The form gchat.get of each process shows of the user. */
async function chatFormsOf(servers: ServerProcess[], userId: number): Promise<(Record<string, unknown> | undefined)[]> {
  return Promise.all(servers.map(async (server) => (await api(server, 'gchat.get', {})).users.find((u: any) => u.user_id === userId)));
}

/** Messages by the writers, sent at once on `server`. */
function writersSay(server: ServerProcess, writers: Map<number, string>, round: number): Promise<unknown>[] {
  return [...writers.values()].map((token) => api(server, 'gchat.send', { access_token: token, message: `round ${round}` }));
}

/**
 * Rounds of a user's first message racing admin.banUser of that user (sent through one process,
 * banned through the next): once both have answered and every process has heard them, a message
 * that went through shows the user as blocked in every process, long before the chat's resync.
 */
async function banRacesFirstMessage(servers: ServerProcess[]): Promise<void> {
  const writers = await tokensOf(servers[0]!, WRITERS);
  const tokens = await tokensOf(servers[0]!, BANNED_FIRST);
  let shown = 0;
  for (const [round, userId] of BANNED_FIRST.entries()) {
    const sendVia = servers[round % servers.length]!;
    const banVia = servers[(round + 1) % servers.length]!;
    const [sent] = await Promise.all([
      call(sendVia, 'gchat.send', { access_token: tokens.get(userId), message: `first words of ${userId}` }),
      api(banVia, 'admin.banUser', { user_id: userId }, asAdmin),
      ...writersSay(sendVia, writers, round),
    ]);
    await everyProcessHeard(servers);
    const forms = await chatFormsOf(servers, userId);
    if (sent.code !== 0) {
      assert.deepEqual(
        forms,
        servers.map(() => undefined),
        `round ${round}: a refused message names nobody`,
      );
      continue;
    }
    shown++;
    assert.deepEqual(
      forms,
      servers.map(() => blocked(userId)),
      `round ${round}: the banned user ${userId} is shown blocked`,
    );
  }
  assert.ok(shown > 0, 'some first messages went through before the ban');
}

/**
 * Rounds of a message first mentioning a blocked user racing admin.unbanUser of that user: once
 * both have answered and every process has heard them, every process shows the user's profile.
 */
async function unbanRacesFirstMention(servers: ServerProcess[]): Promise<void> {
  const writers = await tokensOf(servers[0]!, WRITERS);
  const [mentioner, ...others] = writers.values();
  const otherWriters = new Map([...writers].filter(([, token]) => others.includes(token)));
  for (const [round, userId] of UNBANNED_FIRST.entries()) {
    const sendVia = servers[round % servers.length]!;
    const unbanVia = servers[(round + 1) % servers.length]!;
    await Promise.all([
      api(sendVia, 'gchat.send', { access_token: mentioner, message: `hello @${userId}` }),
      api(unbanVia, 'admin.unbanUser', { user_id: userId }, asAdmin),
      ...writersSay(sendVia, otherWriters, round),
    ]);
    await everyProcessHeard(servers);
    const [profile] = await api(servers[0]!, 'users.get', { user_ids: String(userId), type: 'short' });
    assert.equal(profile.inactive, undefined);
    const forms = await chatFormsOf(servers, userId);
    assert.deepEqual(
      forms.map(offline),
      servers.map(() => offline(profile)),
      `round ${round}: the unbanned user ${userId} is shown`,
    );
  }
}

/**
 * SQLite is written by one process, whose queries never wait on I/O: it handles the two calls one
 * after the other, and the race has no opening there. PostgreSQL runs it in one process and in two.
 */
const processes = DB_KIND === 'postgres' ? [1, 2] : [1];
const redisNeeded = DB_KIND === 'postgres' && missing.redis;

for (const count of processes) {
  const where = count === 1 ? 'one server process' : `${count} server processes joined by Redis`;
  test(`${where}: a ban racing a user's first message in the chat shows them blocked in gchat.get at once`, { skip: redisNeeded }, () =>
    withProcesses(count, banRacesFirstMessage),
  );
  test(`${where}: an unban racing a blocked user's first mention shows their profile in gchat.get at once`, { skip: redisNeeded }, () =>
    withProcesses(count, unbanRacesFirstMention),
  );
}
