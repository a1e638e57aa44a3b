/** How long a redirect URI may be, and how many one app may register. */
export const MAX_REDIRECT_URI_LENGTH = 512;
export const MAX_REDIRECT_URIS = 10;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Why `text` cannot be a redirect URI, or null when it can: an absolute https URL (or http on a
 * loopback address, for apps on the player's own machine: RFC 8252), without a fragment or
 * credentials (RFC 9700, 4.1 and 2.1: redirect URIs are compared exactly, so they must be
 * written completely).
 */
export function redirectUriProblem(text: string): string | null {
  if (text.length === 0) return 'it is empty';
  if (text.length > MAX_REDIRECT_URI_LENGTH) return `it is longer than ${MAX_REDIRECT_URI_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'it is not an absolute URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)))
    return 'it must use https (http only on a loopback address)';
  if (url.hash !== '' || text.includes('#')) return 'it must not have a fragment';
  if (url.username !== '' || url.password !== '') return 'it must not carry credentials';
  return null;
}

/**
 * The redirect URIs of a `redirect_uris` parameter: separated by whitespace, each valid, at
 * least one and at most MAX_REDIRECT_URIS. Answers the problem as text when there is one.
 */
export function parseRedirectUris(text: string): string[] | string {
  const uris = [...new Set(text.split(/\s+/).filter((uri) => uri !== ''))];
  if (uris.length === 0) return 'at least one redirect URI is needed';
  if (uris.length > MAX_REDIRECT_URIS) return `at most ${MAX_REDIRECT_URIS} redirect URIs`;
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) return `${uri.slice(0, 100)}: ${problem}`;
  }
  return uris;
}

/** `redirectUri` with the answer's parameters added to its query. */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}
