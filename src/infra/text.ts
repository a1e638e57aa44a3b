/**
 * `text` as one flat string, for JSON text that is built once by concatenation and then
 * copied into many answers. Concatenation makes a tree of pieces, and V8 walks the whole
 * tree again every time the text is copied into a larger string; converting it to a number
 * makes V8 flatten it in place, once (the technique of the `flatstr` package).
 */
export function flatText(text: string): string {
  // eslint-disable-next-line @typescript-eslint/no-unused-expressions
  (text as unknown as number) | 0;
  return text;
}
