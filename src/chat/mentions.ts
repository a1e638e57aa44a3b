/**
 * A mention is `@` followed by a user id: digits without a leading zero, not glued to a word
 * on either side (`mail@2` and `@2x` are not mentions, `(@2)` and `@2,` are). The ids are
 * returned once each, in order of first appearance; whether the users exist is checked by
 * the caller.
 */
const MENTION = /(?<![\p{L}\p{N}_])@([1-9]\d*)(?![\p{L}\p{N}_])/gu;

export function mentionedIds(text: string): number[] {
  const ids: number[] = [];
  for (const match of text.matchAll(MENTION)) {
    const id = Number(match[1]);
    if (Number.isSafeInteger(id) && !ids.includes(id)) ids.push(id);
  }
  return ids;
}
