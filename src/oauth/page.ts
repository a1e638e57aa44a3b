/** The OAuth dialog's HTML: no script at all, one style sheet of its own (dialog.css), every value escaped. */

import { escapeHtml } from '../infra/html.js';

export const STYLESHEET_PATH = '/oauth/dialog.css';

export const STYLESHEET = `body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}form{margin:1rem 0}label{display:block;margin:.6rem 0}input[type=email],input[type=password],input[type=text]{display:block;width:100%;padding:.4rem;box-sizing:border-box}
button{padding:.5rem 1.2rem;margin-right:.6rem;font-size:1rem}.message{color:#a00}ul{padding-left:1.2rem}.app{font-weight:bold}`;

/** The dialog's request, carried from page to page in hidden fields. */
export type CarriedFields = Record<string, string | undefined>;

function hidden(fields: CarriedFields): string {
  return Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body>
${body}
</body>
</html>`;
}

const messageLine = (message: string | undefined) => (message ? `<p class="message" id="message">${escapeHtml(message)}</p>` : '');

export function signInPage(appName: string, fields: CarriedFields, message?: string): string {
  return page(
    'Sign in',
    `<h1>Sign in to continue to <span class="app">${escapeHtml(appName)}</span></h1>
${messageLine(message)}
<form method="post" action="/oauth" id="signin">${hidden(fields)}
<label>E-mail <input type="email" name="email" autocomplete="username" maxlength="254" required></label>
<label>Password <input type="password" name="password" autocomplete="current-password" maxlength="1024" required></label>
<button type="submit" name="action" value="signin">Sign in</button>
</form>`,
  );
}

export function secondFactorPage(appName: string, fields: CarriedFields, message?: string): string {
  return page(
    'Two-factor sign-in',
    `<h1>Enter the code of your authenticator to continue to <span class="app">${escapeHtml(appName)}</span></h1>
${messageLine(message)}
<form method="post" action="/oauth" id="totp">${hidden(fields)}
<label>Code (or a recovery code) <input type="text" name="code" autocomplete="one-time-code" inputmode="numeric" maxlength="32" required></label>
<button type="submit" name="action" value="totp">Continue</button>
</form>`,
  );
}

export function consentPage(appName: string, abilities: string[], fields: CarriedFields): string {
  return page(
    `Allow ${appName}?`,
    `<h1><span class="app">${escapeHtml(appName)}</span> asks for access to your account</h1>
<p>If you allow it, it will be able to:</p>
<ul id="scopes">${abilities.map((ability) => `<li>${escapeHtml(ability)}</li>`).join('')}</ul>
<p>It will not learn your password. You can take this back at any time in your account's settings.</p>
<form method="post" action="/oauth" id="consent">${hidden(fields)}
<button type="submit" name="action" value="allow">Allow</button>
<button type="submit" name="action" value="deny">Deny</button>
</form>`,
  );
}

export function errorPage(message: string): string {
  return page(
    'Sign-in with this app is not possible',
    `<h1>Sign-in with this app is not possible</h1>\n<p id="error">${escapeHtml(message)}</p>`,
  );
}
