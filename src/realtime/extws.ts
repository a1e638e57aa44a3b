/**
 * The ExtWS framing the reference service's clients speak on `/ws`: every frame is text
 * starting with a digit. `1{id, idle_timeout}` opens the connection; `2` is a ping and `3`
 * its pong, either side may ping; `4<event><json>` carries an event (its name is the text
 * up to the JSON, at most 31 characters; the JSON is an object or an array, or absent).
 */

export const PING = '2';
export const PONG = '3';
const OPEN = '1';
const MESSAGE = '4';
const MAX_EVENT_NAME = 31;

/** The frame that opens a connection: its id and how long the server waits for a sign of life, seconds. */
export function openFrame(id: string, idleTimeoutSeconds: number): string {
  return `${OPEN}${JSON.stringify({ id, idle_timeout: idleTimeoutSeconds })}`;
}

/** `4<event><json>`, from data already serialised as JSON text. */
export function eventFrame(event: string, json: string): string {
  return `${MESSAGE}${event}${json}`;
}

export type ClientFrame = { kind: 'ping' } | { kind: 'pong' } | { kind: 'event'; event: string; data: unknown } | { kind: 'invalid' };

/** What a client sent; anything that is not ExtWS (or whose JSON does not parse) is invalid. */
export function parseClientFrame(text: string): ClientFrame {
  if (text === PING) return { kind: 'ping' };
  if (text === PONG) return { kind: 'pong' };
  if (!text.startsWith(MESSAGE)) return { kind: 'invalid' };
  let end = 1;
  while (end < text.length && text[end] !== '{' && text[end] !== '[') end++;
  const event = text.slice(1, end);
  if (event.length === 0 || event.length > MAX_EVENT_NAME) return { kind: 'invalid' };
  if (end === text.length) return { kind: 'event', event, data: undefined };
  try {
    return { kind: 'event', event, data: JSON.parse(text.slice(end)) };
  } catch {
    return { kind: 'invalid' };
  }
}
