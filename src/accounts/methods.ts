import { defineMethod } from '../api/method.js';
import { P } from '../api/params.js';
import { Session, SIGNUP_LIMITS } from '../auth/index.js';
import { ACCOUNT_TOKEN_TTL } from './account-tokens.js';
import { CONFIRM_PASSWORD_LIMIT } from './confirm-password.js';
import { EMAIL_CHANGE_LIMITS, updateEmail, updatePassword, verifyEmail } from './credentials.js';
import { NICK_CHANGE_LIMIT, accountInfo, updateInfo } from './profile.js';
import { RESET_ANSWER_MS, RESET_REQUEST_LIMITS, requestPasswordReset, resetPassword } from './reset.js';
import { DOMAIN_MAX, DOMAIN_MIN, NICK_RULE, PASSWORD_MAX, PASSWORD_MIN } from '../users/index.js';
import { AccountInfo, RecoveryCodes, SessionList, TotpSetupResult } from './schemas.js';
import { listSessions, revokeSessions } from './sessions-list.js';
import { signUp } from './signup.js';
import { totpDisable, totpEnable, totpSetup } from './two-factor.js';

const HOURS = ACCOUNT_TOKEN_TTL / 3600;
const PASSWORD_RULE = `${PASSWORD_MIN} to ${PASSWORD_MAX} characters, not one of the 10,000 most common passwords`;
const DOMAIN_RULE =
  `${DOMAIN_MIN} to ${DOMAIN_MAX} characters of a-z 0-9 _ . (stored in lower case), not all digits, not a reserved word, ` +
  'unique whatever the case';
const EMAIL_RULE =
  "one plain address, no display name, comment or list: a local part of letters and digits of any script and !#$%&'*+/=?^_`{|}~- " +
  '(dots between them), @, and a domain of two or more dot-separated labels of letters, digits and inner hyphens';
const TOKEN = P.string({ minLength: 1, maxLength: 512, description: `the token from the e-mail (single use, valid ${HOURS} hours)` });
const PASSWORD_PARAM = (description: string) => P.string({ maxLength: 1024, description });
const CODE_PARAM = P.string({ maxLength: 64, description: "the authenticator's 6-digit code, or one of the recovery codes" });

export const authSignup = defineMethod({
  name: 'auth.signup',
  summary: 'Create an account',
  description:
    "Answers the new account's first Session and sends the address a confirmation token (account.verifyEmail). " +
    `Password: ${PASSWORD_RULE}. Nick: ${NICK_RULE}. Domain (optional): ${DOMAIN_RULE}. A taken e-mail address answers ` +
    '1601 and creates nothing (the owner of the address is told by e-mail, at most once an hour); a taken domain 1602. ' +
    `From one address: past ${SIGNUP_LIMITS.captchaAfterAddressAttempts} sign-ups within an hour, code 8 unless \`captcha\` ` +
    `carries a solved captcha (without a captcha verifier, one sign-up at a time, the first at once, then one per delay that doubles, the others 7, as for sign-in); past ${SIGNUP_LIMITS.ceilingAddressAttempts}, code 7; ` +
    `past ${SIGNUP_LIMITS.ceilingEmailAttempts} attempts for one e-mail address within an hour, code 7. 1603 when the ` +
    'server does not take sign-ups (--signup closed).',
  auth: 'none',
  params: P.object({
    email: P.string({ maxLength: 254, description: `e-mail address, ${EMAIL_RULE}; compared without regard to case` }),
    password: PASSWORD_PARAM(PASSWORD_RULE),
    nick: P.string({ maxLength: 100, description: NICK_RULE }),
    domain: P.optional(P.string({ maxLength: 100, description: DOMAIN_RULE })),
    captcha: P.optional(P.string({ maxLength: 4096, description: 'the solved captcha (response token), when code 8 asked for one' })),
  }),
  result: Session,
  errors: {
    8: 'captcha needed',
    1601: 'the e-mail address belongs to an account',
    1602: 'the domain belongs to another account',
    1603: 'sign-up is closed on this server',
  },
  handler: async (ctx, params) => signUp(ctx.services, { ...params, ip: ctx.ip, userAgent: ctx.userAgent }),
});

export const accountVerifyEmail = defineMethod({
  name: 'account.verifyEmail',
  summary: 'Confirm an e-mail address with the token sent to it',
  description:
    'The token (from the message auth.signup or account.updateEmail sent) confirms its address and makes it the ' +
    "account's: `email_verified` becomes 1. Needs no access token, so the link in the message works in a browser. " +
    'Password-reset tokens sent to an earlier address stop working. A change of address ends (1604) when the ' +
    'password is changed or reset before it is confirmed.',
  auth: 'none',
  extension: true,
  params: P.object({ token: TOKEN }),
  errors: { 1601: 'another account took the address meanwhile', 1604: 'the token is unknown, used or expired' },
  handler: async (ctx, params) => {
    await verifyEmail(ctx.services, params.token);
    return undefined;
  },
});

export const authRequestPasswordReset = defineMethod({
  name: 'auth.requestPasswordReset',
  summary: 'Send a password-reset token by e-mail',
  description:
    'Always answers `{"code": 0}`, whether an account has the address or not, and not before ' +
    `${RESET_ANSWER_MS} ms have passed either way; only the owner of an account with that address receives a token ` +
    `(single use, ${HOURS} hours; a newer one replaces it). At most ${RESET_REQUEST_LIMITS.perEmail} requests for one ` +
    `address and ${RESET_REQUEST_LIMITS.perAddress} from one client address per hour, then code 7.`,
  auth: 'none',
  extension: true,
  params: P.object({ email: P.string({ maxLength: 254, description: 'e-mail address of the account' }) }),
  handler: async (ctx, params) => {
    await requestPasswordReset(ctx.services, { email: params.email, ip: ctx.ip });
    return undefined;
  },
});

export const authResetPassword = defineMethod({
  name: 'auth.resetPassword',
  summary: 'Set a new password with a reset token',
  description:
    `The token from auth.requestPasswordReset and the new password (${PASSWORD_RULE}). For an account with two-factor ` +
    'sign-in and a confirmed address, `code` is required too (an authenticator code or a recovery code): without it 12 ' +
    '(not counted), wrong 2, and past 5 wrong codes within 15 minutes 7. An account whose address was never confirmed ' +
    'is asked no code: its two-factor sign-in, recovery codes and any setup in progress end. Every session of the ' +
    'account ends, in every process, before this answers, and so do pending changes of address (account.updateEmail); ' +
    'the address counts as confirmed.',
  auth: 'none',
  extension: true,
  params: P.object({
    token: TOKEN,
    password: PASSWORD_PARAM(`the new password: ${PASSWORD_RULE}`),
    code: P.optional(CODE_PARAM),
  }),
  errors: { 12: 'the account has two-factor sign-in: send its code', 1604: 'the token is unknown, used or expired' },
  handler: async (ctx, params) => {
    await resetPassword(ctx.services, params);
    return undefined;
  },
});

export const accountInfoMethod = defineMethod({
  name: 'account.info',
  summary: "The caller's own account",
  description: 'The full user (as users.get shows it) plus `email`, `email_verified`, `hasTotp` and `hasPassword`.',
  auth: 'required',
  params: P.object({}),
  result: AccountInfo,
  handler: async (ctx) => accountInfo(ctx.services, ctx.caller.userId),
});

export const accountUpdateInfo = defineMethod({
  name: 'account.updateInfo',
  summary: "Change the caller's nick, gender or domain",
  description:
    `Only the given fields change. Nick: ${NICK_RULE}; a changed nick goes into \`nicks_old\` (the last 20 are kept), ` +
    `at most ${NICK_CHANGE_LIMIT.max} changes a day (then 7). Domain: ${DOMAIN_RULE}. Every server process shows the ` +
    'change from the moment this answers.',
  auth: 'required',
  params: P.object({
    nick: P.optional(P.string({ maxLength: 100, description: NICK_RULE })),
    gender: P.optional(P.uint({ maximum: 1, description: '0 or 1' })),
    domain: P.optional(P.string({ maxLength: 100, description: DOMAIN_RULE })),
  }),
  errors: { 1602: 'the domain belongs to another account' },
  handler: async (ctx, params) => {
    await updateInfo(ctx.services, ctx.caller.userId, params);
    return undefined;
  },
});

const CONFIRM_RULE = `past ${CONFIRM_PASSWORD_LIMIT.max} wrong passwords within an hour, 7`;

export const accountUpdatePassword = defineMethod({
  name: 'account.updatePassword',
  summary: "Change the caller's password",
  description:
    `The new password: ${PASSWORD_RULE}. Answers a new Session; every other session of the account (the calling one ` +
    'included) ends in every process before this answers, and so do password-reset tokens and pending changes of ' +
    `address (account.updateEmail). A wrong current password answers 1605; ${CONFIRM_RULE}.`,
  auth: 'required',
  params: P.object({
    password_current: PASSWORD_PARAM('the password now'),
    password_new: PASSWORD_PARAM(`the new password: ${PASSWORD_RULE}`),
  }),
  result: Session,
  errors: { 1605: 'the current password is wrong' },
  handler: async (ctx, params) =>
    updatePassword(ctx.services, {
      userId: ctx.caller.userId,
      current: params.password_current,
      next: params.password_new,
      ip: ctx.ip,
      userAgent: ctx.userAgent,
    }),
});

export const accountUpdateEmail = defineMethod({
  name: 'account.updateEmail',
  summary: "Change the caller's e-mail address",
  description:
    `Sends a confirmation token (${HOURS} hours) to the new address and a notice to the old one; the address changes ` +
    'once the token comes back through account.verifyEmail. Given the current, unconfirmed address, sends a new ' +
    `confirmation. A wrong password answers 1605; ${CONFIRM_RULE}. At most ${EMAIL_CHANGE_LIMITS.perAccount} requests of ` +
    `one account per hour, whatever they answer, and ${EMAIL_CHANGE_LIMITS.perEmail} naming one address, then code 7.`,
  auth: 'required',
  params: P.object({
    email: P.string({ maxLength: 254, description: `the new address, ${EMAIL_RULE}` }),
    password: PASSWORD_PARAM("the account's password"),
  }),
  errors: { 1601: 'the address belongs to another account', 1605: 'the password is wrong' },
  handler: async (ctx, params) => {
    await updateEmail(ctx.services, { userId: ctx.caller.userId, email: params.email, password: params.password });
    return undefined;
  },
});

export const accountTotpSetup = defineMethod({
  name: 'account.totpSetup',
  summary: 'Start switching two-factor sign-in on',
  description:
    'Answers a new secret with its otpauth:// URI for an authenticator app; nothing changes for sign-in until ' +
    'account.totpEnable confirms it. A new call replaces the secret.',
  auth: 'required',
  extension: true,
  params: P.object({}),
  result: TotpSetupResult,
  errors: { 1606: 'two-factor sign-in is on already' },
  handler: async (ctx) => totpSetup(ctx.services, ctx.caller.userId),
});

export const accountTotpEnable = defineMethod({
  name: 'account.totpEnable',
  summary: 'Switch two-factor sign-in on',
  description:
    "The authenticator's current code for the secret of account.totpSetup. Answers ten recovery codes, shown only " +
    'now: each is accepted once in place of a code (auth.totpVerify, account.totpDisable, auth.resetPassword). Past 5 ' +
    'wrong codes within 15 minutes, 7.',
  auth: 'required',
  extension: true,
  params: P.object({ code: P.string({ maxLength: 32, description: "the authenticator's 6-digit code" }) }),
  result: RecoveryCodes,
  errors: { 1606: 'two-factor sign-in is on already, or account.totpSetup was not called (or called again meanwhile)' },
  handler: async (ctx, params) => totpEnable(ctx.services, ctx.caller.userId, params.code),
});

export const accountTotpDisable = defineMethod({
  name: 'account.totpDisable',
  summary: 'Switch two-factor sign-in off',
  description:
    'The password and a code (authenticator or recovery); without a code 12, which does not count against the 5 wrong ' +
    `codes allowed within 15 minutes. The recovery codes stop working. ${CONFIRM_RULE}.`,
  auth: 'required',
  extension: true,
  params: P.object({ password: PASSWORD_PARAM("the account's password"), code: CODE_PARAM }),
  errors: { 12: 'no code was sent', 1605: 'the password is wrong', 1606: 'two-factor sign-in is off' },
  handler: async (ctx, params) => {
    await totpDisable(ctx.services, ctx.caller.userId, params);
    return undefined;
  },
});

export const accountSessionsGet = defineMethod({
  name: 'account.sessionsGet',
  summary: "The caller's sessions",
  description:
    'Every sign-in of the caller that can still be used (its refresh token has not expired), newest first; ' +
    '`current` marks the calling one. Refreshing keeps a sign-in one entry; its `session_id` is that of the latest refresh.',
  auth: 'required',
  extension: true,
  params: P.object({}),
  result: SessionList,
  handler: async (ctx) => listSessions(ctx.services, ctx.caller),
});

export const accountSessionsRevoke = defineMethod({
  name: 'account.sessionsRevoke',
  summary: 'End sessions of the caller',
  description:
    'Ends the sign-in `session_id` names (from account.sessionsGet; the current one too), or with `all_others=1` every ' +
    'sign-in but the current one. Their tokens stop working in every process before this answers. A session that ' +
    'has ended already (signed out, revoked, refreshed) answers 1607.',
  auth: 'required',
  extension: true,
  params: P.object({
    session_id: P.optional(P.uint({ minimum: 1, description: 'from account.sessionsGet' })),
    all_others: P.optional(P.bit({ description: '1: every session but the calling one' })),
  }),
  errors: { 1607: 'the caller has no such session' },
  handler: async (ctx, params) => {
    await revokeSessions(ctx.services, ctx.caller, { sessionId: params.session_id, allOthers: params.all_others });
    return undefined;
  },
});
