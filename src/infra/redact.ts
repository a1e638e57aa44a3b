/**
 * Parameters whose values never reach the log or the audit log, by their decoded, lower-case
 * names. A world file carries passwords and TOTP secrets; a promo code is good to whoever holds it.
 */
const SECRET_NAMES = new Set(['code', 'code_verifier', 'world', 'promocode']);
const SECRET_PATTERN = /password|secret|token|captcha|admin_key/;

/** Decodings of a name tried before it counts as unreadable: `pass%2577ord` is `password` decoded twice. */
const MAX_DECODINGS = 4;

function decodedName(raw: string): string {
  let name = raw.replace(/\+/g, ' ');
  try {
    for (let i = 0; i < MAX_DECODINGS && name.includes('%'); i++) name = decodeURIComponent(name);
  } catch {
    // Malformed escapes: the name cannot be read, so neither is the value written.
    return 'password';
  }
  // Still encoded after every decoding, or holding control characters: unreadable as well.
  if (name.includes('%') || [...name].some((c) => c.charCodeAt(0) < 0x20)) return 'password';
  // `promocode[]` and `promocode[0]` name a list of the same parameter.
  return name
    .trim()
    .toLowerCase()
    .replace(/(\[[^\]]*\])+$/, '');
}

/** Whether a parameter named `raw` (`pass%77ord` is `password`) holds a secret. */
export function isSecretName(raw: string): boolean {
  const name = decodedName(raw);
  return SECRET_NAMES.has(name) || SECRET_PATTERN.test(name);
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
      if (equals === -1 || !isSecretName(name)) return pair;
      return `${name}=[redacted]`;
    });
  return `${url.slice(0, start)}?${query.join('&')}`;
}
