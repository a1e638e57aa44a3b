import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, Code } from '../api/errors.js';
import type { Caller } from '../api/method.js';
import { completeTotpChallenge, signIn, type SessionData } from '../auth/index.js';
import { constantTimeEqual, newToken, sha256 } from '../infra/secrets.js';
import type { Services } from '../services.js';
import { redirectUrisOf } from './apps.js';
import { CHALLENGE, issueCode } from './codes.js';
import { consentCovers, rememberConsent } from './grants.js';
import { STYLESHEET, STYLESHEET_PATH, consentPage, errorPage, secondFactorPage, signInPage, type CarriedFields } from './page.js';
import { appById, type AppRow } from './queries.js';
import { redirectWith } from './redirect-uris.js';
import { isScopeMask, scopeWords } from './scopes.js';

/** The player's sign-in on the dialog (an access token of their own), and the secret the forms' CSRF token is derived from. */
const SESSION_COOKIE = 'gp_oauth_session';
const CSRF_COOKIE = 'gp_oauth_csrf';
const MAX_STATE_LENGTH = 1024;

/** The parameters of the dialog, as the app sent them and as the forms carry them on. */
const REQUEST_FIELDS = ['app_id', 'scope', 'redirect_uri', 'response_type', 'state', 'code_challenge', 'code_challenge_method'] as const;

interface DialogRequest {
  app: AppRow;
  redirectUri: string;
  scopes: number;
  state?: string;
  codeChallenge?: string;
  fields: CarriedFields;
}

/** What a request to the dialog comes to: a valid request, a page saying why not, or an error for the app. */
type Checked = { request: DialogRequest } | { refusal: string } | { redirect: string };

const field = (raw: Record<string, unknown>, name: string): string | undefined => {
  const value = raw[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Checks the dialog's parameters (RFC 6749, 4.1.2.1): an unknown or disabled app and a redirect
 * URI not registered for it are said on the page (never redirected to); any other problem is
 * sent to the app as `error`.
 */
async function checkRequest(services: Services, raw: Record<string, unknown>): Promise<Checked> {
  const appId = field(raw, 'app_id');
  if (appId === undefined || !/^\d{1,15}$/.test(appId)) return { refusal: 'The app is not known (app_id is missing or not a number).' };
  const app = await appById(services.db.kysely, Number(appId));
  if (!app) return { refusal: 'The app is not known.' };
  if (app.active !== 1) return { refusal: 'The app is disabled.' };
  const redirectUri = field(raw, 'redirect_uri');
  if (redirectUri === undefined || !redirectUrisOf(app).includes(redirectUri))
    return { refusal: 'The address the app asks to return to is not registered for it.' };

  const state = field(raw, 'state');
  const fail = (error: string, description: string): Checked => ({
    redirect: redirectWith(redirectUri, { error, error_description: description, state }),
  });
  if (state !== undefined && state.length > MAX_STATE_LENGTH) return fail('invalid_request', `state is longer than ${MAX_STATE_LENGTH}`);
  const responseType = field(raw, 'response_type');
  // The implicit flow (response_type=access_token) puts tokens in the browser's history: RFC 9700, 2.1.2.
  if (responseType !== 'code') return fail('unsupported_response_type', 'only response_type=code is supported');
  const scopeText = field(raw, 'scope') ?? '0';
  const scopes = /^\d{1,3}$/.test(scopeText) ? Number(scopeText) : -1;
  if (!isScopeMask(scopes) || (scopes & app.scopes) !== scopes) return fail('invalid_scope', 'the app may not ask for these scopes');
  const codeChallenge = field(raw, 'code_challenge');
  const method = field(raw, 'code_challenge_method');
  if (codeChallenge !== undefined && (method !== 'S256' || !CHALLENGE.test(codeChallenge)))
    return fail('invalid_request', 'code_challenge must be an S256 challenge, with code_challenge_method=S256');
  if (codeChallenge === undefined && method !== undefined) return fail('invalid_request', 'code_challenge_method without code_challenge');
  if (codeChallenge === undefined && app.public_client === 1) return fail('invalid_request', 'this app must send a PKCE code_challenge');
  const fields = Object.fromEntries(REQUEST_FIELDS.map((name) => [name, field(raw, name)]));
  return { request: { app, redirectUri, scopes, state, codeChallenge, fields } };
}

function cookiesOf(request: FastifyRequest): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const equals = part.indexOf('=');
    if (equals > 0) cookies.set(part.slice(0, equals).trim(), part.slice(equals + 1).trim());
  }
  return cookies;
}

function cookie(request: FastifyRequest, name: string, value: string, maxAge: number): string {
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return `${name}=${value}; Path=/oauth; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
}

const csrfToken = (secret: string) => sha256(`oauth-dialog-form:${secret}`);

/** The headers of every page of the dialog: no framing, no scripts, forms only to itself and the app. */
function securityHeaders(reply: FastifyReply, formTarget?: string): FastifyReply {
  const formAction = formTarget === undefined ? "'none'" : `'self' ${new URL(formTarget).origin}`;
  return reply
    .header(
      'content-security-policy',
      `default-src 'none'; style-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    )
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store');
}

/** The dialog's pages and redirects for one request. */
class Dialog {
  private readonly cookies: Map<string, string>;
  private csrfSecret: string;

  constructor(
    private readonly services: Services,
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
  ) {
    this.cookies = cookiesOf(request);
    const secret = this.cookies.get(CSRF_COOKIE);
    this.csrfSecret = secret !== undefined && /^[A-Za-z0-9_-]{43}$/.test(secret) ? secret : '';
  }

  /** The signed-in player: a session of their own (not one an app obtained, not a bot's). */
  async player(): Promise<Caller | undefined> {
    const token = this.cookies.get(SESSION_COOKIE);
    if (token === undefined) return undefined;
    const caller = await this.services.tokens.resolve(token, this.request.ip);
    return caller && caller.scopes === undefined && !caller.isBot ? caller : undefined;
  }

  csrfValid(raw: Record<string, unknown>): boolean {
    const sent = field(raw, 'csrf');
    return this.csrfSecret !== '' && sent !== undefined && constantTimeEqual(sent, csrfToken(this.csrfSecret));
  }

  private formFields(request: DialogRequest, extra: CarriedFields = {}): CarriedFields {
    if (this.csrfSecret === '') {
      this.csrfSecret = newToken();
      this.reply.header('set-cookie', cookie(this.request, CSRF_COOKIE, this.csrfSecret, 3600));
    }
    return { ...request.fields, ...extra, csrf: csrfToken(this.csrfSecret) };
  }

  html(status: number, body: string, formTarget?: string): FastifyReply {
    return securityHeaders(this.reply, formTarget).status(status).type('text/html; charset=utf-8').send(body);
  }

  redirect(location: string): FastifyReply {
    return securityHeaders(this.reply).status(303).header('location', location).send();
  }

  signInPage(request: DialogRequest, message?: string): FastifyReply {
    return this.html(200, signInPage(request.app.name, this.formFields(request), message), request.redirectUri);
  }

  secondFactorPage(request: DialogRequest, totpToken: string, message?: string): FastifyReply {
    const fields = this.formFields(request, { totp_session_token: totpToken });
    return this.html(200, secondFactorPage(request.app.name, fields, message), request.redirectUri);
  }

  /** Asks for consent, or where the player gave it already, answers the app at once. */
  async consent(request: DialogRequest, player: Caller): Promise<FastifyReply> {
    if (await consentCovers(this.services, player.userId, request.app.app_id, request.scopes)) return this.allow(request, player);
    const page = consentPage(request.app.name, scopeWords(request.scopes), this.formFields(request));
    return this.html(200, page, request.redirectUri);
  }

  async allow(request: DialogRequest, player: Caller): Promise<FastifyReply> {
    const grant = { appId: request.app.app_id, userId: player.userId, scopes: request.scopes };
    await rememberConsent(this.services, grant.userId, grant.appId, grant.scopes);
    const code = await issueCode(this.services, { ...grant, redirectUri: request.redirectUri, codeChallenge: request.codeChallenge });
    return this.redirect(redirectWith(request.redirectUri, { code, state: request.state }));
  }

  deny(request: DialogRequest): FastifyReply {
    return this.redirect(redirectWith(request.redirectUri, { error: 'access_denied', state: request.state }));
  }

  /** Keeps the player's new session in the dialog's cookie and shows the dialog again, now signed in. */
  signedIn(request: DialogRequest, session: SessionData): FastifyReply {
    this.reply.header('set-cookie', cookie(this.request, SESSION_COOKIE, session.access_token, session.expires_in));
    const query = new URLSearchParams(Object.entries(request.fields).filter((entry): entry is [string, string] => entry[1] !== undefined));
    return this.redirect(`/oauth?${query.toString()}`);
  }
}

/** What a refused sign-in tells the player. */
function signInProblem(error: unknown): string {
  if (!(error instanceof ApiError)) throw error;
  switch (error.code) {
    case Code.AUTH:
    case Code.BAD_PARAM:
      return 'Wrong e-mail or password.';
    case Code.RATE_LIMIT:
      return 'Too many attempts: try again later.';
    case Code.CAPTCHA:
      return 'This sign-in needs a captcha, which this page cannot show: sign in to the game itself first, then come back.';
    case Code.GLOBAL_BAN:
      return 'This account is blocked.';
    default:
      throw error;
  }
}

function secondFactorProblem(error: unknown): string | undefined {
  if (!(error instanceof ApiError)) throw error;
  if (error.code === Code.BAD_PARAM) return 'Wrong code.';
  if (error.code === Code.GLOBAL_BAN) return 'This account is blocked.';
  if (error.code === Code.BAD_TOTP_SESSION || error.code === Code.TOTP_TOO_OFTEN) return undefined;
  throw error;
}

async function post(dialog: Dialog, services: Services, request: FastifyRequest, checked: DialogRequest): Promise<FastifyReply> {
  const raw = (request.body ?? {}) as Record<string, unknown>;
  const action = field(raw, 'action');
  if (action === 'signin') {
    const email = field(raw, 'email') ?? '';
    const password = field(raw, 'password') ?? '';
    if (email.length > 254 || password.length > 1024) return dialog.signInPage(checked, 'Wrong e-mail or password.');
    try {
      const outcome = await signIn(services, { email, password, ip: request.ip, userAgent: request.headers['user-agent'] });
      if ('totp_session_token' in outcome) return dialog.secondFactorPage(checked, outcome.totp_session_token);
      return dialog.signedIn(checked, outcome);
    } catch (error) {
      return dialog.signInPage(checked, signInProblem(error));
    }
  }
  if (action === 'totp') {
    const token = field(raw, 'totp_session_token') ?? '';
    const code = field(raw, 'code') ?? '';
    if (token.length > 512 || code.length > 32) return dialog.signInPage(checked, 'The sign-in expired: start again.');
    try {
      return dialog.signedIn(checked, await completeTotpChallenge(services, token, code, request.ip, request.headers['user-agent']));
    } catch (error) {
      const problem = secondFactorProblem(error);
      if (problem === undefined) return dialog.signInPage(checked, 'The sign-in expired or had too many wrong codes: start again.');
      return dialog.secondFactorPage(checked, token, problem);
    }
  }
  const player = await dialog.player();
  if (!player) return dialog.signInPage(checked);
  if (action === 'allow') return dialog.allow(checked, player);
  if (action === 'deny') return dialog.deny(checked);
  return dialog.consent(checked, player);
}

/**
 * The OAuth dialog at `/oauth`, a page of its own: sign-in when needed (e-mail and password,
 * then the second factor), the app's name and what it asks for in plain words, allow or deny.
 */
export function registerDialog(app: FastifyInstance, services: Services): void {
  app.get(STYLESHEET_PATH, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(STYLESHEET),
  );

  app.get('/oauth', async (request, reply) => {
    const dialog = new Dialog(services, request, reply);
    const checked = await checkRequest(services, request.query as Record<string, unknown>);
    if ('refusal' in checked) return dialog.html(400, errorPage(checked.refusal));
    if ('redirect' in checked) return dialog.redirect(checked.redirect);
    const player = await dialog.player();
    return player ? dialog.consent(checked.request, player) : dialog.signInPage(checked.request);
  });

  app.post('/oauth', async (request, reply) => {
    const dialog = new Dialog(services, request, reply);
    const raw = (request.body ?? {}) as Record<string, unknown>;
    if (typeof raw !== 'object' || !dialog.csrfValid(raw))
      return dialog.html(403, errorPage('The form expired or did not come from this page: open the app’s sign-in link again.'));
    const checked = await checkRequest(services, raw);
    if ('refusal' in checked) return dialog.html(400, errorPage(checked.refusal));
    if ('redirect' in checked) return dialog.redirect(checked.redirect);
    return post(dialog, services, request, checked.request);
  });
}
