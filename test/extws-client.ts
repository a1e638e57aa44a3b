import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { httpStatusFor } from '../src/api/errors.js';
import { allMethods } from '../src/domains.js';
import { responseProblems } from './response-check.js';

/** A frame as an ExtWS client reads it: the type digit, the event name and the JSON after it. */
export interface ExtwsFrame {
  type: number;
  event?: string;
  data?: any;
  text: string;
}

const methodsByName = new Map(allMethods().map((m) => [m.name, m]));

/** Reads a frame the way the reference clients do: a digit, an event name up to the JSON, the JSON. */
export function parseFrame(text: string): ExtwsFrame {
  const type = text.charCodeAt(0) - 48;
  let end = 1;
  while (end < text.length && text[end] !== '{' && text[end] !== '[') end++;
  const event = text.slice(1, end);
  return { type, text, ...(event ? { event } : {}), ...(end < text.length ? { data: JSON.parse(text.slice(end)) } : {}) };
}

/**
 * A realtime client speaking ExtWS as the reference service's clients do: it answers the
 * server's `2` with `3` (unless told to stay silent), records every frame, and emits `api`
 * calls, checking each answer as the suite checks HTTP answers.
 */
export class ExtwsClient {
  readonly frames: ExtwsFrame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  /** Answer pings (a silent client is dropped by the heartbeat). */
  answerPings = true;
  private waiters: { match: (f: ExtwsFrame) => boolean; resolve: (f: ExtwsFrame) => void }[] = [];
  private calls: Promise<unknown> = Promise.resolve();

  constructor(readonly socket: WebSocket) {
    socket.on('message', (raw) => {
      const frame = parseFrame(raw.toString());
      this.frames.push(frame);
      if (frame.type === 2 && this.answerPings) socket.send('3');
      this.waiters = this.waiters.filter((w) => {
        if (!w.match(frame)) return true;
        w.resolve(frame);
        return false;
      });
    });
    this.closed = new Promise((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  static async connect(base: string, query: Record<string, string | number | undefined> = {}): Promise<ExtwsClient> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries({ subs: 'gchat', ...query })) if (value !== undefined) params.set(name, String(value));
    const socket = new WebSocket(`${base}/ws?${params}`);
    const client = new ExtwsClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    await client.next((f) => f.type === 1);
    return client;
  }

  /** The first frame (already received or still to come) that matches. */
  next(match: (frame: ExtwsFrame) => boolean): Promise<ExtwsFrame> {
    const seen = this.frames.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** Every event entry of every `events` frame so far, in order. */
  events(): { id: number; type: string; [field: string]: unknown }[] {
    return this.frames.filter((f) => f.event === 'events').flatMap((f) => f.data.events);
  }

  /** The `events` frame announcing a chat message. */
  added(msgId: string): Promise<ExtwsFrame> {
    return this.next((f) => f.event === 'events' && f.data.events.some((e: any) => e.type === 'gchat.add' && e.msg_id === msgId));
  }

  /** Emits `api` with [method, params] and resolves to its answer envelope (calls are answered in order). */
  api(method: string, params: Record<string, unknown> = {}): Promise<{ method: string; code: number; data?: any; description?: string }> {
    const call = this.calls.then(async () => {
      const seen = this.frames.filter((f) => f.event === 'api').length;
      const answered = this.next((f) => f.event === 'api' && this.frames.filter((g) => g.event === 'api').indexOf(f) === seen);
      this.socket.send(`4api${JSON.stringify([method, params])}`);
      const { data } = await answered;
      const { method: name, ...envelope } = data;
      assert.equal(name, method);
      const problems = responseProblems(methodsByName.get(method), httpStatusFor(envelope.code), envelope, params);
      assert.deepEqual(problems, [], `${method} answered outside its schema over the realtime feed`);
      return data;
    });
    this.calls = call.catch(() => undefined);
    return call;
  }

  close(): void {
    this.socket.close();
  }
}
