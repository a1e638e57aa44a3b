import assert from 'node:assert/strict';
import { issueBotSession, issueUserSession } from '../src/auth/sessions.js';
import type { Answer, TestServer } from './helpers.js';

/** The address test calls come from (test/helpers.ts). */
const TEST_IP = '127.0.0.1';

/** Signs a user (or, with `bot`, a bot) in as the auth capability does, and returns the access token. */
export async function sessionFor(server: TestServer, userId: number, options: { bot?: boolean } = {}): Promise<string> {
  const session = options.bot
    ? await issueBotSession(server.services, userId, TEST_IP)
    : await issueUserSession(server.services, userId, TEST_IP);
  return session.access_token;
}

/** Asserts an error answer with the given code. */
export function fails(answer: Answer, code: number): void {
  assert.equal(answer.body.code, code, `expected code ${code}, got ${JSON.stringify(answer.body)}`);
}

/** The user ids of a list of users, in order. */
export const idsOf = (users: { user_id?: number }[]) => users.map((u) => u.user_id);
