/**
 * `text` as one flat string of its own, for JSON text that is built once by concatenation
 * and then copied into many answers. Concatenation makes a tree of pieces that V8 walks
 * again every time the text is copied into a larger string; flattening it in place (e.g. by
 * converting it to a number) keeps a wrapper that still points to the flat copy elsewhere in
 * memory, one more hop per copy that costs ~1 µs in a large heap when answers join dozens of
 * such texts. Decoding the text's bytes makes a new sequential string with nothing in
 * between. For well-formed text (as JSON.stringify writes it); short texts are kept as they are.
 */
export function flatText(text: string): string {
  return text.length < 64 ? text : Buffer.from(text, 'utf8').toString('utf8');
}

/**
 * Why neither database could keep `text` as it is, or undefined: U+0000 (PostgreSQL cannot
 * store it in text at all), or a lone surrogate (stored as one replacement character on
 * PostgreSQL, three on SQLite).
 */
export function unstorableTextProblem(text: string): string | undefined {
  if (text.includes('\0')) return 'must not contain NUL characters';
  if (/\p{Cs}/u.test(text)) return 'must be valid Unicode text (it holds a lone surrogate)';
  return undefined;
}

/**
 * The characters (code points, as JSON Schema counts them) of `text` when that decides whether
 * it is within `minLength` to `maxLength`, else its UTF-16 length: a character is one or two
 * units, so most strings need no counting.
 */
export function characterCountFor(
  text: string,
  { minLength = 0, maxLength = Infinity }: { minLength?: number; maxLength?: number },
): number {
  return text.length >= 2 * minLength && text.length <= maxLength ? text.length : [...text].length;
}

/**
 * Control characters other than tabs and line breaks, and the bidirectional embedding, override
 * and isolate controls (the marks LRM, RLM and ALM, which right-to-left writing needs, pass).
 */
const CONTROL = /(?![\t\n\r])\p{Cc}|[\u202A-\u202E\u2066-\u2069]/u;
/**
 * What shows nothing on its own: spaces and line breaks, characters meant to be ignored (format
 * characters, variation selectors, Hangul fillers), marks that only combine, the braille blank.
 */
const BLANK = /[\p{Z}\s\p{Default_Ignorable_Code_Point}\p{Cf}\p{Mn}\p{Me}\u2800]/gu;

/**
 * A message a user writes (the chat, private messages) without surrounding spaces, or why it is
 * refused: empty, longer than `maxLength` characters, invisible, or holding control characters
 * or lone surrogates.
 */
export function checkedMessageText(rawText: string, maxLength: number): { text: string } | { problem: string } {
  if (/\p{Cs}/u.test(rawText)) return { problem: 'must be valid Unicode text (it holds a lone surrogate)' };
  const text = rawText.trim();
  const length = [...text].length;
  if (length < 1 || length > maxLength) return { problem: `must be 1 to ${maxLength} characters once surrounding spaces are removed` };
  if (CONTROL.test(text)) return { problem: 'must not contain control characters (tabs and line breaks aside) or bidirectional overrides' };
  if (text.replace(BLANK, '') === '') return { problem: 'must contain a visible character' };
  return { text };
}
