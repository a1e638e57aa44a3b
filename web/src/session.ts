import type { Middleware } from 'openapi-fetch';
import { api, ok, useAccessToken, ApiFailure } from './api/client';
import { Store } from './store';

export interface Session {
  user_id: number;
  access_token: string;
  /** When the access token stops working, Unix seconds by this device's clock. */
  expires: number;
  refresh_token?: string;
}

/** A session as the server answers it; its lifetime is counted from now, whatever the two clocks say. */
export function sessionFrom(
  answer: { user_id: number; access_token: string; expires_in: number; refresh_token?: string },
  earlier?: Session,
): Session {
  return {
    user_id: answer.user_id,
    access_token: answer.access_token,
    expires: Math.floor(Date.now() / 1000) + answer.expires_in,
    refresh_token: answer.refresh_token ?? earlier?.refresh_token,
  };
}

const STORAGE_KEY = 'session';
/** Refreshed this long before the access token expires, seconds. */
const REFRESH_AHEAD = 60;

function stored(): Session | undefined {
  try {
    const session = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null') as Session | null;
    return session && typeof session.access_token === 'string' ? session : undefined;
  } catch {
    return undefined;
  }
}

export const session = new Store<Session | undefined>(stored());
useAccessToken(() => session.value?.access_token);

let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let refreshing: Promise<void> | undefined;

/** Keeps the session (or its end), and plans the refresh of its token before it expires. */
export function setSession(next: Session | undefined): void {
  if (next) localStorage.setItem(STORAGE_KEY, JSON.stringify(next));
  else localStorage.removeItem(STORAGE_KEY);
  clearTimeout(refreshTimer);
  session.set(next);
  if (next?.refresh_token) {
    const wait = Math.max(0, next.expires - REFRESH_AHEAD - Date.now() / 1000);
    refreshTimer = setTimeout(() => void refreshNow(), Math.min(wait * 1000, 2 ** 31 - 1));
  }
}

/** Exchanges the refresh token for a new session; a refused one ends the session. */
export function refreshNow(): Promise<void> {
  const current = session.value;
  if (!current?.refresh_token) return Promise.resolve();
  refreshing ??= ok(api.POST('/api/auth.refresh', { body: { refresh_token: current.refresh_token } }))
    .then(({ data }) => setSession(sessionFrom(data, current)))
    .catch((error: unknown) => {
      if (error instanceof ApiFailure && error.code !== -1 && error.code !== 3 && error.code !== 7) setSession(undefined);
    })
    .finally(() => (refreshing = undefined));
  return refreshing;
}

const NOT_SIGNED_IN = 1;
const copies = new WeakMap<Request, Request>();

/**
 * An access token the server no longer takes (it expired while the device slept, or its clock is
 * off) is refreshed once and the call made again with the new one: the player stays signed in.
 */
const refreshOnExpiry: Middleware = {
  onRequest({ request }) {
    if (session.value?.refresh_token && request.headers.has('authorization') && !request.url.includes('/api/auth.'))
      copies.set(request, request.clone());
    return request;
  },
  async onResponse({ request, response }) {
    const copy = copies.get(request);
    copies.delete(request);
    if (!copy || !(response.headers.get('content-type') ?? '').includes('json')) return response;
    const answer = (await response.clone().json()) as { code?: unknown };
    if (answer.code !== NOT_SIGNED_IN) return response;
    const before = session.value?.access_token;
    await refreshNow();
    const token = session.value?.access_token;
    if (!token || token === before) return response;
    copy.headers.set('authorization', `Bearer ${token}`);
    return fetch(copy);
  },
};
api.use(refreshOnExpiry);

export async function signOut(): Promise<void> {
  try {
    await ok(api.POST('/api/auth.signout'));
  } catch {
    // Signed out here whatever the server says.
  }
  setSession(undefined);
}

// A page opened after the token expired (or close to it) refreshes first.
if (session.value) setSession(session.value);
