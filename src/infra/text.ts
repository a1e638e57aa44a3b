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
