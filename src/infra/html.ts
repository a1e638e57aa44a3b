/** `text` safe in HTML text and in a quoted attribute value: `& < > " '` as numeric character references. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
