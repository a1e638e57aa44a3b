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
