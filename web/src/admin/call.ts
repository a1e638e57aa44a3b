import { api, ok, ApiFailure } from '../api/client';
import type { paths } from '../api/schema';
import { Store } from '../store';

export type AdminPath = Extract<keyof paths, `/api/admin.${string}`>;
type Post<P extends AdminPath> = paths[P]['post'];
export type AdminBody<P extends AdminPath> =
  NonNullable<Post<P>['requestBody']> extends { content: { 'application/json': infer B } } ? B : Record<string, never>;
type Answer<P extends AdminPath> = Post<P>['responses'][200]['content']['application/json'];
export type AdminData<P extends AdminPath> = Extract<Answer<P>, { code: 0 }> extends { data: infer D } ? D : never;

/** The console's session: the admin key, kept for this tab only and forgotten after a while without use. */
const STORAGE_KEY = 'admin-session';
/** Idle time after which the key is forgotten, milliseconds. */
export const ADMIN_IDLE_MS = 15 * 60_000;

interface KeySession {
  key: string;
  expires: number;
}

function stored(): KeySession | undefined {
  try {
    const value = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as KeySession | null;
    return value && typeof value.key === 'string' && value.expires > Date.now() ? value : undefined;
  } catch {
    return undefined;
  }
}

export const adminKey = new Store<string | undefined>(stored()?.key);
let expiryTimer: ReturnType<typeof setTimeout> | undefined;

/** Keeps the key (for ADMIN_IDLE_MS more), or forgets it. */
export function setAdminKey(key: string | undefined): void {
  clearTimeout(expiryTimer);
  if (key === undefined) sessionStorage.removeItem(STORAGE_KEY);
  else {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ key, expires: Date.now() + ADMIN_IDLE_MS }));
    expiryTimer = setTimeout(() => setAdminKey(undefined), ADMIN_IDLE_MS);
  }
  if (adminKey.value !== key) adminKey.set(key);
}
if (adminKey.value) setAdminKey(adminKey.value);

/** An admin method called with the console's key; a refused key ends the console's session. */
export async function adminCall<P extends AdminPath>(path: P, body: AdminBody<P>, key = adminKey.value): Promise<AdminData<P>> {
  const post = api.POST as unknown as (
    path: string,
    init: { body: unknown; headers: Record<string, string> },
  ) => Promise<{ data?: { code: number }; error?: unknown; response: Response }>;
  try {
    const answer = (await ok(post(path, { body, headers: { 'x-admin-key': key ?? '' } }))) as { data?: unknown };
    if (key) setAdminKey(key);
    return answer.data as AdminData<P>;
  } catch (error) {
    if (error instanceof ApiFailure && error.code === 1) setAdminKey(undefined);
    throw error;
  }
}
