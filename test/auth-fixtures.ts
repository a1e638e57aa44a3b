import assert from 'node:assert/strict';
import { Secret, TOTP } from 'otpauth';
import { Value } from '@sinclair/typebox/value';
import { hashPassword } from '../src/auth/passwords.js';
import { Session, TotpPending } from '../src/auth/schemas.js';
import type { World } from '../src/world/schema.js';
import type { CallOptions, TestServer } from './helpers.js';

export const PASSWORD = 'correct horse battery';
export const TOTP_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';

/** Accounts of the auth tests. */
export const ALICE = { user_id: 1, email: 'alice@example.com' };
export const TOTP_USER = { user_id: 2, email: 'totp@example.com' };
export const BANNED = { user_id: 3, email: 'banned@example.com' };
export const CAPTCHA_ALWAYS = { user_id: 4, email: 'careful@example.com' };
export const ALICE_BOT = { user_id: 5 };
export const TOTP_USER_BOT = { user_id: 6 };
export const BANNED_TOTP = { user_id: 7, email: 'banned-totp@example.com' };
export const BOB = { user_id: 8, email: 'bob@example.com' };
export const BOT_WITH_PASSWORD = { user_id: 9, email: 'bot@example.com' };

let passwordHash: Promise<string> | undefined;

/** The test world; the password is hashed once per test file. */
export async function authWorld(): Promise<World> {
  passwordHash ??= hashPassword(PASSWORD);
  const password_hash = await passwordHash;
  return {
    users: [
      { ...ALICE, email: 'Alice@Example.com', password_hash, nick: 'Alice' },
      { ...TOTP_USER, password_hash, totp_secret: TOTP_SECRET, nick: 'Tess' },
      { ...BANNED, password_hash, global_ban: 1, nick: 'Banned' },
      { ...CAPTCHA_ALWAYS, password_hash, captcha: 'always', nick: 'Careful' },
      { ...ALICE_BOT, nick: 'AliceBot', bot_owner: ALICE.user_id },
      { ...TOTP_USER_BOT, nick: 'TessBot', bot_owner: TOTP_USER.user_id },
      { ...BANNED_TOTP, password_hash, totp_secret: TOTP_SECRET, global_ban: 1, nick: 'BannedTess' },
      { ...BOB, password_hash, nick: 'Bob' },
      { ...BOT_WITH_PASSWORD, password_hash, nick: 'PasswordBot', bot_owner: BOB.user_id },
    ],
  };
}

/** The TOTP code of `secret` at a time (ms), from an independent TOTP implementation. */
export function totpCode(timestampMs: number, secret = TOTP_SECRET): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: timestampMs });
}

export function signin(
  server: TestServer,
  email: string,
  password = PASSWORD,
  extra: Record<string, unknown> = {},
  options: CallOptions = {},
) {
  return server.call('auth.signin', { email, password, ...extra }, options);
}

/** Signs a user without TOTP in and returns the Session. */
export async function sessionOf(server: TestServer, email: string, options: CallOptions = {}) {
  const answer = await signin(server, email, PASSWORD, {}, options);
  assert.equal(answer.body.code, 0, JSON.stringify(answer.body));
  assertSession(answer.body.data);
  return answer.body.data as { user_id: number; access_token: string; refresh_token: string; expires_in: number; expires: number };
}

/**
 * What a token is worth, seen through bots.getToken for a bot that does not exist:
 * 1801 = a valid user token, 4 = a valid bot token, 1 = not valid.
 */
export async function probe(server: TestServer, token: string, ip = '127.0.0.1'): Promise<number> {
  const answer = await server.call('bots.getToken', { user_id: 999_999 }, { token, ip });
  return answer.body.code;
}

export function assertSession(data: unknown, kind: 'user' | 'bot' = 'user'): void {
  assert.ok(Value.Check(Session, data), `not a Session: ${JSON.stringify(data)}`);
  const session = data as { access_token: string; refresh_token?: string; expires_in: number; expires: number };
  assert.ok(session.access_token.length >= 22 && /^[A-Za-z0-9_-]+$/.test(session.access_token), 'access token is URL-safe and long');
  if (kind === 'bot') {
    assert.equal(session.expires_in, 0);
    assert.equal(session.expires, 0);
    assert.equal('refresh_token' in session, false);
  } else {
    assert.ok(session.expires_in > 0);
    assert.equal(session.expires, session.expires_in);
    assert.ok(session.refresh_token && /^[A-Za-z0-9_-]{22,}$/.test(session.refresh_token));
  }
}

export function assertTotpPending(data: unknown): string {
  assert.ok(Value.Check(TotpPending, data), `not a TOTP challenge: ${JSON.stringify(data)}`);
  return (data as { totp_session_token: string }).totp_session_token;
}
