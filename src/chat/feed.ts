import type { WebSocket } from 'ws';
import type { Caller } from '../api/method.js';

/** WebSocket close codes the feed uses besides the standard ones. */
export const CloseCode = {
  INVALID_TOKEN: 4001,
  SESSION_REVOKED: 4003,
  SHUTDOWN: 1001,
} as const;

export interface Subscriber {
  socket: WebSocket;
  /** The signed-in user, when the connection sent a valid access token. */
  userId?: number;
  caller?: Caller;
  subs: ReadonlySet<string>;
  /** Answered the last ping. */
  alive: boolean;
}

export interface FeedLimits {
  heartbeatSeconds: number;
  /** Bytes queued for one subscriber before it is dropped as too slow. */
  maxQueueBytes: number;
}

/**
 * The realtime subscribers of this process. Events are serialized once and written to each
 * subscriber; a subscriber whose unsent data exceeds `maxQueueBytes` is disconnected rather
 * than buffered without bound, and one that misses a heartbeat is disconnected too.
 */
export class ChatFeed {
  private readonly subscribers = new Set<Subscriber>();
  private heartbeat?: NodeJS.Timeout;

  constructor(private readonly limits: FeedLimits, private readonly onBeat?: () => void) {}

  get size(): number {
    return this.subscribers.size;
  }

  add(subscriber: Subscriber): void {
    this.subscribers.add(subscriber);
    subscriber.socket.on('pong', () => (subscriber.alive = true));
    if (!this.heartbeat) {
      this.heartbeat = setInterval(() => this.beat(), this.limits.heartbeatSeconds * 1000);
      this.heartbeat.unref();
    }
  }

  remove(subscriber: Subscriber): void {
    this.subscribers.delete(subscriber);
  }

  /**
   * Sends `{event, data}` to every subscriber of `topic`; with an audience, only to
   * subscribers signed in as one of those users.
   */
  broadcast(topic: string, event: string, data: unknown, audience?: readonly number[]): void {
    let frame: string | undefined;
    for (const subscriber of this.subscribers) {
      if (!subscriber.subs.has(topic)) continue;
      if (audience && (subscriber.userId === undefined || !audience.includes(subscriber.userId))) continue;
      frame ??= JSON.stringify({ event, data });
      this.deliver(subscriber, frame);
    }
  }

  private deliver(subscriber: Subscriber, frame: string): void {
    const { socket } = subscriber;
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount + Buffer.byteLength(frame) > this.limits.maxQueueBytes) {
      // The closing handshake would queue behind the backlog: cut the connection.
      this.subscribers.delete(subscriber);
      socket.terminate();
      return;
    }
    socket.send(frame);
  }

  /** Closes the connections whose session matches (a revoked session stops receiving at once). */
  closeWhere(match: (caller: Caller) => boolean, code: number, reason: string): void {
    for (const subscriber of this.subscribers) {
      if (!subscriber.caller || !match(subscriber.caller)) continue;
      this.subscribers.delete(subscriber);
      subscriber.socket.close(code, reason);
    }
  }

  private beat(): void {
    for (const subscriber of this.subscribers) {
      if (!subscriber.alive) {
        this.subscribers.delete(subscriber);
        subscriber.socket.terminate();
        continue;
      }
      subscriber.alive = false;
      subscriber.socket.ping();
    }
    this.onBeat?.();
  }

  close(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    for (const subscriber of this.subscribers) subscriber.socket.close(CloseCode.SHUTDOWN, 'server shutting down');
    this.subscribers.clear();
  }
}
