/** Query parameters whose values never reach the log, by their decoded, lower-case names. */
const SECRET_NAMES = new Set([
  'access_token',
  'refresh_token',
  'password',
  'code',
  'totp_session_token',
  'captcha',
  'device_token',
  'admin_key',
]);
const SECRET_PATTERN = /password|secret|token/;

function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' ')).trim().toLowerCase();
  } catch {
    // Malformed escapes: the name cannot be read, so neither is the value written.
    return 'password';
  }
}

/**
 * A request URL as logged: the value of every parameter whose name, once decoded
 * (`pass%77ord` is `password`), is a secret's is replaced, whatever its spelling.
 */
export function redactUrl(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const query = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      const decoded = decodedName(name);
      if (equals === -1 || !(SECRET_NAMES.has(decoded) || SECRET_PATTERN.test(decoded))) return pair;
      return `${name}=[redacted]`;
    });
  return `${url.slice(0, start)}?${query.join('&')}`;
}
