// E-mail addresses as accounts hold and look them up: every layer that reads an address
// (sign-up, sign-in, operators, world files) takes it through these two functions.
import { domainToASCII, domainToUnicode } from 'node:url';
import { badParam } from '../api/errors.js';

/** Letters, digits and combining marks of any script: internationalised addresses (RFC 6531). */
const WORD_CHARACTER = String.raw`\p{L}\p{N}\p{M}`;
/** RFC 5322 atext, without the dots that separate its atoms. */
const LOCAL_CHARACTER = `[${WORD_CHARACTER}!#$%&'*+/=?^_\`{|}~-]`;
/**
 * A local part that is one dot-atom, and a domain (in its ASCII form, as IDNA writes it) of two or
 * more labels. No quotes, brackets, comments, commas, semicolons, spaces or control characters,
 * which mail software reads as names, routes or further recipients.
 */
const LOCAL_PATTERN = new RegExp(`^${LOCAL_CHARACTER}+(?:\\.${LOCAL_CHARACTER}+)*$`, 'u');
const ASCII_LABEL = '[a-z0-9](?:[a-z0-9-]*[a-z0-9])?';
const DOMAIN_PATTERN_ASCII = new RegExp(`^${ASCII_LABEL}(?:\\.${ASCII_LABEL})+$`);

export function normaliseEmail(email: string): string {
  const mailbox = mailboxOf(email.trim());
  if (
    mailbox === undefined ||
    mailbox.address.length < 3 ||
    mailbox.address.length > 254 ||
    !LOCAL_PATTERN.test(mailbox.local) ||
    !DOMAIN_PATTERN_ASCII.test(mailbox.asciiDomain)
  )
    throw badParam('email', 'is not an e-mail address');
  return mailbox.address;
}

/**
 * An address as accounts are looked up by it (sign-in, world files): the mailbox it reaches
 * (see mailboxOf), or, for text that is no address, the text in lower case, as addresses were
 * stored before they were checked.
 */
export function emailLookupKey(email: string): string {
  const text = email.trim();
  return mailboxOf(text)?.address ?? text.toLowerCase();
}

/** Characters that show nothing (joiners, variation selectors...): no part of an address. */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/u;

/**
 * The mailbox an address reaches: the domain as IDNA maps it (UTS #46, as mail software does
 * before it delivers: compatibility forms such as fullwidth letters folded, invisible characters
 * dropped, any case), kept in Unicode (`address`) and ASCII; the local part in compatibility form,
 * lower case. Two spellings of one mailbox are thus one address. Undefined when there is none.
 */
function mailboxOf(text: string): { address: string; local: string; asciiDomain: string } | undefined {
  const at = text.lastIndexOf('@');
  if (at < 0) return undefined;
  const local = text.slice(0, at).normalize('NFKC').toLowerCase();
  const asciiDomain = domainToASCII(text.slice(at + 1));
  if (asciiDomain === '' || INVISIBLE.test(local)) return undefined;
  return { address: `${local}@${domainToUnicode(asciiDomain)}`, local, asciiDomain };
}
