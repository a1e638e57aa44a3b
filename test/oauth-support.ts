import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { TestServer } from './helpers.js';
import { admin } from './admin-support.js';

export const CALLBACK = 'https://app.example/callback';
export const OTHER_CALLBACK = 'https://app.example/other';

export interface RegisteredApp {
  app_id: number;
  app_secret?: string;
}

/** Registers an app through the admin API. */
export async function registerApp(
  server: TestServer,
  params: { name?: string; redirect_uris?: string; scopes?: number; public_client?: 0 | 1 } = {},
): Promise<RegisteredApp> {
  const created = await admin(server, 'createApp', {
    name: 'Score Keeper',
    redirect_uris: `${CALLBACK} ${OTHER_CALLBACK}`,
    scopes: 11,
    ...params,
  });
  return { app_id: created.app.app_id, ...(created.app_secret !== undefined ? { app_secret: created.app_secret } : {}) };
}

/** A PKCE verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(48).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface PageAnswer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/**
 * A browser of the dialog over HTTP: it keeps the cookies the dialog sets and submits its
 * forms with their hidden fields, as a browser does.
 */
export class DialogClient {
  private readonly cookies = new Map<string, string>();

  constructor(
    private readonly server: TestServer,
    private readonly ip = '127.0.0.1',
  ) {}

  private remember(headers: PageAnswer['headers']): void {
    const set = headers['set-cookie'];
    for (const line of set === undefined ? [] : Array.isArray(set) ? set : [String(set)]) {
      const [pair] = line.split(';');
      const equals = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, equals), pair!.slice(equals + 1));
    }
  }

  private cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
  }

  async open(params: Record<string, string | number | undefined>): Promise<PageAnswer> {
    const query = new URLSearchParams(
      Object.entries(params)
        .filter((entry): entry is [string, string | number] => entry[1] !== undefined)
        .map(([k, v]) => [k, String(v)]),
    );
    return this.get(`/oauth?${query.toString()}`);
  }

  async get(url: string): Promise<PageAnswer> {
    const response = await this.server.app.inject({ method: 'GET', url, headers: this.cookieHeader(), remoteAddress: this.ip });
    this.remember(response.headers);
    return { status: response.statusCode, headers: response.headers, body: response.body };
  }

  /** Submits the page's form `formId` with these fields added (the button's `action` among them). */
  async submit(page: PageAnswer, formId: string, fields: Record<string, string>): Promise<PageAnswer> {
    const form = formOf(page.body, formId);
    const body = new URLSearchParams({ ...form, ...fields }).toString();
    return this.post(body);
  }

  async post(body: string): Promise<PageAnswer> {
    const response = await this.server.app.inject({
      method: 'POST',
      url: '/oauth',
      headers: { ...this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: body,
      remoteAddress: this.ip,
    });
    this.remember(response.headers);
    return { status: response.statusCode, headers: response.headers, body: response.body };
  }

  /** Follows a 303 of the dialog to itself. */
  async follow(answer: PageAnswer): Promise<PageAnswer> {
    assert.equal(answer.status, 303, answer.body);
    const location = String(answer.headers.location);
    assert.ok(location.startsWith('/oauth?'), location);
    return this.get(location);
  }

  forgetSignIn(): void {
    this.cookies.delete('gp_oauth_session');
  }
}

const unescape = (text: string) => text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));

/** The hidden fields of a form of the page. */
export function formOf(html: string, formId: string): Record<string, string> {
  const start = html.indexOf(`id="${formId}"`);
  assert.ok(start >= 0, `the page has no form ${formId}: ${html}`);
  const form = html.slice(start, html.indexOf('</form>', start));
  const fields: Record<string, string> = {};
  for (const match of form.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g))
    fields[unescape(match[1]!)] = unescape(match[2]!);
  return fields;
}

/** Where a 303 of the dialog sends the browser, parsed. */
export function redirectedTo(answer: PageAnswer): URL {
  assert.equal(answer.status, 303, `expected a redirect, got ${answer.status}: ${answer.body}`);
  return new URL(String(answer.headers.location));
}

/** Signs in on the dialog's page and answers the page shown next (following the redirect to the dialog). */
export async function signInOnDialog(client: DialogClient, page: PageAnswer, email: string, password: string): Promise<PageAnswer> {
  const answer = await client.submit(page, 'signin', { action: 'signin', email, password });
  return answer.status === 303 ? client.follow(answer) : answer;
}

/** The whole dialog for a user without two-factor sign-in: answers the code the app receives. */
export async function codeFromDialog(
  client: DialogClient,
  params: Record<string, string | number | undefined>,
  email: string,
  password: string,
): Promise<{ code: string; url: URL }> {
  let page = await client.open({ response_type: 'code', redirect_uri: CALLBACK, ...params });
  if (page.status === 200 && page.body.includes('id="signin"')) page = await signInOnDialog(client, page, email, password);
  if (page.status === 200) page = await client.submit(page, 'consent', { action: 'allow' });
  const url = redirectedTo(page);
  const code = url.searchParams.get('code');
  assert.ok(code, `no code in ${url}`);
  return { code, url };
}
