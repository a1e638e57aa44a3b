import { defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { createBot, issueBotToken } from './bots.js';
import { NICK_RULE } from '../users/index.js';
import { Strict, Uint } from '../api/schema-types.js';
import { Type } from '@sinclair/typebox';
import { Session, SigninResult } from './schemas.js';
import { refreshSession, signOut } from './sessions.js';
import { signIn } from './signin.js';
import { completeTotpChallenge } from './totp.js';

const TOKEN_PARAM = { minLength: 1, maxLength: 512 };
const DEVICE_TOKEN_PARAM = P.optional(
  P.string({
    maxLength: 512,
    description: 'the device_token of an earlier sign-in of this account on this device (not part of the reference service)',
  }),
);

export const authSignin = defineMethod({
  name: 'auth.signin',
  summary: 'Sign in with e-mail and password',
  description:
    'Answers a Session, or `{ totp_session_token }` (valid 5 minutes) for accounts with two-factor authentication, ' +
    'to be completed with auth.totpVerify. The e-mail is matched case-insensitively. A wrong e-mail and a wrong password ' +
    'answer the same code 1. After 5 failed sign-ins for one account within 15 minutes (10 within an hour, from all addresses ' +
    'together) or 20 from one address, a captcha is needed (code 8 until `captcha` carries a solved one); without a captcha ' +
    'verifier, attempts past it are judged one at a time instead: the first at once, then one every 30 s, doubling with every ' +
    'further failure up to 15 minutes; the others answer code 7 with `retry_after`. ' +
    'After 100 failures for one account within an hour, code 7 with `retry_after`. None of this holds back a sign-in from an ' +
    'address the account signed in from before, or with its `device_token`: those have 10 failures per 15 minutes of their own. ' +
    'Accounts marked so need a captcha on every sign-in: code 8 once the password is right. The access token is bound to the ' +
    'address it was issued for.',
  auth: 'none',
  params: P.object({
    email: P.string({ maxLength: 254, description: 'e-mail address of the user' }),
    password: P.string({ maxLength: 1024, description: 'at least 10 characters' }),
    captcha: P.optional(P.string({ maxLength: 4096, description: 'the solved captcha (response token), when code 8 asked for one' })),
    device_token: DEVICE_TOKEN_PARAM,
  }),
  result: SigninResult,
  errors: {
    1: 'wrong e-mail or password',
    2: 'password shorter than 10 characters',
    7: 'too many failed sign-ins for this account or address; data.retry_after',
    8: 'captcha needed',
    412: 'account is globally blocked',
  },
  handler: async (ctx, params) =>
    signIn(ctx.services, {
      email: params.email,
      password: params.password,
      captcha: params.captcha,
      deviceToken: params.device_token,
      ip: ctx.ip,
      userAgent: ctx.userAgent,
    }),
});

export const authTotpVerify = defineMethod({
  name: 'auth.totpVerify',
  summary: 'Complete a sign-in with the TOTP code',
  description:
    'RFC 6238 (SHA-1, 6 digits, 30 s, one step of drift either way). A code once accepted is never accepted again ' +
    "for the account. One of the account's recovery codes (account.totpEnable) is accepted once in place of `code`. " +
    'A totp_session_token survives 5 wrong codes; the next attempt answers 414. An account accepts 10 wrong codes per ' +
    '15 minutes across all its sign-ins; past them 414 until the window ends (the description says in how many seconds).',
  auth: 'none',
  params: P.object({
    totp_session_token: P.string({ ...TOKEN_PARAM, description: 'from the auth.signin answer' }),
    code: P.string({ maxLength: 32, description: 'the 6-digit code of the authenticator, or a recovery code' }),
    device_token: DEVICE_TOKEN_PARAM,
  }),
  result: Session,
  errors: {
    2: 'wrong code',
    412: 'account is globally blocked',
    413: 'wrong TOTP session token (unknown, used or expired)',
    414: "TOTP sign-in attempted too often: the token is spent, or the account's wrong codes are used up",
  },
  handler: async (ctx, params) =>
    completeTotpChallenge(ctx.services, params.totp_session_token, params.code, ctx.ip, ctx.userAgent, params.device_token),
});

export const authRefresh = defineMethod({
  name: 'auth.refresh',
  summary: 'Exchange a refresh token for a new session',
  description:
    'Rotation: answers a new Session with a new refresh token; the presented refresh token and the access token issued ' +
    "with it stop working. The new access token is bound to the caller's current address. Presenting a refresh token that " +
    'was already used revokes every session of that sign-in (theft detection) and answers 1; but within --refresh-reuse-grace ' +
    'seconds of its rotation (10 by default) and from the address the rotation was made for, it answers 1 and keeps the sign-in ' +
    '(one client refreshing twice at once), and the description says so.',
  auth: 'none',
  params: P.object({
    refresh_token: P.string({ ...TOKEN_PARAM, description: 'refresh_token of the latest Session; each one works once' }),
  }),
  result: Session,
  errors: { 1: 'refresh token unknown, expired, revoked or already used' },
  handler: async (ctx, params) => refreshSession(ctx.services, params.refresh_token, ctx.ip, ctx.userAgent),
});

export const botsGetToken = defineMethod({
  name: 'bots.getToken',
  summary: 'Create a new access token for a bot',
  description:
    "Called with the bot owner's token. The token is bound to `ip` (default: the caller's address), does not expire " +
    '(`expires_in` and `expires` are 0) and has no refresh token. Every earlier token of the bot stops working at once.',
  auth: 'required',
  params: P.object({
    user_id: P.uint({ description: 'user id of the bot' }),
    ip: P.optional(P.string({ maxLength: 64, description: 'IPv4 or IPv6 address the token is bound to' })),
  }),
  result: Session,
  errors: { 2: 'ip is not an IP address', 412: 'the bot account is globally blocked', 1801: "bot does not exist (or is not the caller's)" },
  handler: async (ctx, params) => issueBotToken(ctx.services, ctx.caller, { botId: params.user_id, ip: params.ip, callerIp: ctx.ip }),
});

export const botsCreate = defineMethod({
  name: 'bots.create',
  summary: 'Create a bot owned by the caller',
  description:
    "Called with the owner's token (a bot cannot create bots: 4). The nick follows the rules of auth.signup. The owner then " +
    'issues its tokens with bots.getToken. One user may own at most `--bots-per-owner` bots (default 5); past it, 1802.',
  auth: 'required',
  params: P.object({ nick: P.string({ maxLength: 100, description: `display name of the bot: ${NICK_RULE}` }) }),
  result: Type.Object({ user_id: Uint }, Strict),
  errors: { 1802: 'the caller already owns as many bots as one user may create' },
  handler: async (ctx, params) => createBot(ctx.services, ctx.caller, params.nick),
});

export const authSignout = defineMethod({
  name: 'auth.signout',
  summary: 'End the current session',
  description: 'Revokes the presented access token and its refresh token in every process. Not part of the reference service.',
  auth: 'required',
  extension: true,
  params: P.object({}),
  handler: async (ctx) => {
    await signOut(ctx.services, ctx.caller);
    return undefined;
  },
});
