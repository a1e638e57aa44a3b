import { dictionary } from '@zxcvbn-ts/language-common';
import { remove as removeConfusables } from 'confusables';
import { badParam } from '../api/errors.js';

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 128;

export const NICK_MIN = 2;
export const NICK_MAX = 24;
/** The nick rules as the method documentation states them. */
export const NICK_RULE = `${NICK_MIN} to ${NICK_MAX} characters, no control characters, not a reserved word (nor one spelt with look-alike letters)`;
export const DOMAIN_MIN = 3;
export const DOMAIN_MAX = 32;
/**
 * A password as its rules read it: NFC (a letter typed as one code point or as a letter and
 * its accent is one character), lower case, each run of one character made one, and a
 * password that is one part said again and again ("abcabcabc") that part.
 */
function passwordReading(password: string): string {
  const collapsed = password
    .normalize('NFC')
    .toLowerCase()
    .replace(/(.)\1+/gsu, '$1');
  return /^(.+?)\1+$/su.exec(collapsed)?.[1] ?? collapsed;
}

/**
 * The common passwords (zxcvbn-ts's list, compiled from leaked password sets), as the rules
 * read them: "PASSWORD", "passsword" and "passwordpassword" are all "password".
 */
const COMMON_PASSWORDS = new Set(dictionary['passwords-common'].map(passwordReading));
/** How many common passwords are refused. */
export const COMMON_PASSWORDS_REFUSED = dictionary['passwords-common'].length;
/** The password rules as the method documentation states them. */
export const PASSWORD_RULE =
  `${PASSWORD_MIN} to ${PASSWORD_MAX} characters (counted in Unicode NFC), not one character repeated, not one of the ` +
  `${COMMON_PASSWORDS_REFUSED.toLocaleString('en')} common passwords whatever its case and however its characters or parts are repeated`;

/**
 * Words no player may take as a domain or a nick: they would pass for the service itself or
 * for a page of it.
 */
export const RESERVED_NAMES = new Set([
  'admin',
  'administrator',
  'api',
  'app',
  'auth',
  'bot',
  'bots',
  'docs',
  'help',
  'healthz',
  'info',
  'login',
  'logout',
  'mod',
  'moderator',
  'moderators',
  'news',
  'null',
  'official',
  'openapi',
  'owner',
  'readyz',
  'register',
  'root',
  'security',
  'settings',
  'shop',
  'signin',
  'signup',
  'staff',
  'superadmin',
  'support',
  'system',
  'undefined',
  'user',
  'users',
  'www',
]);

/** Characters, not UTF-16 units. */
const lengthOf = (text: string) => [...text].length;

/**
 * The rules of a new password: 10 to 128 characters counted in NFC, valid Unicode, not one
 * character repeated, and not a common password however its case is set or its characters
 * or parts repeated.
 */
export function checkNewPassword(password: string, name = 'password'): void {
  const length = lengthOf(password.normalize('NFC'));
  if (length < PASSWORD_MIN) throw badParam(name, `must be at least ${PASSWORD_MIN} characters`);
  if (length > PASSWORD_MAX) throw badParam(name, `must be at most ${PASSWORD_MAX} characters`);
  // Hashed as UTF-8, where every lone surrogate becomes U+FFFD, as every byte of invalid UTF-8
  // in a request already has: such passwords would all be one.
  if (/[\p{Cs}\uFFFD]/u.test(password))
    throw badParam(name, 'must be valid Unicode text (it holds a lone surrogate or a replacement character)');
  if (/^(.)\1*$/su.test(password.normalize('NFC'))) throw badParam(name, 'must not be one character repeated');
  if (COMMON_PASSWORDS.has(passwordReading(password)))
    throw badParam(
      name,
      `is one of the ${COMMON_PASSWORDS_REFUSED.toLocaleString('en')} common passwords (whatever its case and repeats): choose another`,
    );
}

/** The nick as stored: trimmed, inner runs of white space made one space. */
export function checkNick(raw: string): string {
  const nick = raw.trim().replace(/\s+/g, ' ');
  const length = lengthOf(nick);
  if (length < NICK_MIN || length > NICK_MAX) throw badParam('nick', `must be ${NICK_MIN} to ${NICK_MAX} characters`);
  if (/[\p{C}\p{Default_Ignorable_Code_Point}]/u.test(nick)) throw badParam('nick', 'must not contain control or invisible characters');
  if (isReservedName(nick)) throw badParam('nick', 'is reserved');
  return nick;
}

/** Symbols, digits and letter pairs read as the letters they pass for ("$upport", "adm1n", "he|p", "rnoderator"). */
const READ_AS_LETTERS: readonly [RegExp, string][] = [
  [/[$5]/g, 's'],
  [/[@4]/g, 'a'],
  [/[!|1l]/g, 'i'],
  [/0/g, 'o'],
  [/3/g, 'e'],
  [/7/g, 't'],
  [/rn/g, 'm'],
  [/vv/g, 'w'],
];
/** Symbols that may stand for letters, or only punctuate ("_admin!"): a name is read both ways. */
const LETTER_SYMBOLS = /[$@!|]/g;
/** Left out before a name is read: spaces and punctuation between its letters ("ad min", "r.noderator"). */
const SEPARATORS = /[^\p{L}\p{N}$@!|]/gu;
const LATIN = /\p{Script=Latin}/u;

/**
 * How a name reads, for comparing it with the reserved words: compatibility forms folded
 * (fullwidth letters, ligatures); when it has Latin letters, look-alikes of other scripts among
 * them replaced by the Latin letters they imitate ("Аdmin" with a Cyrillic A; a name in another
 * script alone is a word of that script, not a disguise); separators left out; digits and letter
 * pairs read as letters, I and l alike; symbols read as letters, and left out.
 */
function readingsOf(name: string): string[] {
  const folded = name.normalize('NFKC');
  const word = (LATIN.test(folded) ? removeConfusables(folded) : folded).toLowerCase().replace(SEPARATORS, '');
  return [word, word.replace(LETTER_SYMBOLS, '')].map((text) =>
    READ_AS_LETTERS.reduce((read, [pattern, letters]) => read.replace(pattern, letters), text),
  );
}

const RESERVED_READINGS = new Set([...RESERVED_NAMES].flatMap(readingsOf));

/**
 * First segments of the paths the server serves, and files every web client asks a site for: a
 * domain is a path too (`/p/{domain}`) and must not pass for one of them.
 */
const SERVED_PATHS = new Set([
  'about',
  'admin',
  'api',
  'assets',
  'docs',
  'favicon.ico',
  'favicon.svg',
  'friends',
  'healthz',
  'index.html',
  'inventory',
  'lobby',
  'm1tv',
  'market',
  'media',
  'messages',
  'metrics',
  'oauth',
  'openapi.json',
  'profile',
  'promo',
  'readyz',
  'robots.txt',
  'settings',
  'signin',
  'signup',
  'table',
  'trades',
  'ws',
]);

/** Whether a name is a reserved word, spelt plainly or with look-alikes (the rule nicks follow). */
function isReservedName(name: string): boolean {
  return RESERVED_NAMES.has(name.toLowerCase()) || readingsOf(name).some((reading) => RESERVED_READINGS.has(reading));
}

/**
 * The domain as stored: lower case; 3 to 32 of a-z 0-9 _ . ; safe as a path segment (no
 * leading, trailing or doubled dot); not read as a number (that would be a user id: all
 * digits, or a number as JavaScript reads one, such as 1e5 or 0x1); not a reserved word, as a
 * whole or in any of its dotted parts, nor a path the server serves.
 */
export function checkDomain(raw: string): string {
  const domain = raw.trim().toLowerCase();
  if (domain.length < DOMAIN_MIN || domain.length > DOMAIN_MAX)
    throw badParam('domain', `must be ${DOMAIN_MIN} to ${DOMAIN_MAX} characters`);
  if (!/^[a-z0-9_.]+$/.test(domain)) throw badParam('domain', 'may hold only a-z, 0-9, "_" and "."');
  if (/^\d+$/.test(domain)) throw badParam('domain', 'must not be all digits (that would be a user id)');
  if (Number.isFinite(Number(domain))) throw badParam('domain', 'must not read as a number (that would be a user id)');
  if (domain.startsWith('.') || domain.endsWith('.') || domain.includes('..'))
    throw badParam('domain', 'must not begin or end with "." nor hold ".." (it is part of a URL)');
  if (SERVED_PATHS.has(domain) || isReservedName(domain) || domain.split('.').some(isReservedName)) throw badParam('domain', 'is reserved');
  return domain;
}
