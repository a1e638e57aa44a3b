/**
 * Whether a message is made only of emoticons: one or more `:name:` codes from the list,
 * optionally separated by whitespace (`:smile: :fire:`, `:gg::gg:`), and nothing else.
 */
export function isOnlyEmoticons(text: string, emoticons: ReadonlySet<string>): boolean {
  const words = text.split(/\s+/).filter((w) => w !== '');
  if (words.length === 0) return false;
  return words.every((word) => {
    if (!/^(?::[^:\s]+:)+$/.test(word)) return false;
    const names = word.slice(1, -1).split('::');
    return names.every((name) => emoticons.has(name));
  });
}
