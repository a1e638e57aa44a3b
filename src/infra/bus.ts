import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';

export type BusHandler = (message: unknown) => void;

/** Published after a world import into a running deployment: any cached row may have changed. */
export const WORLD_CHANGED = 'world.changed';

/**
 * Publish/subscribe between the server processes of one deployment: chat fan-out, token
 * revocation, cache invalidation. Without Redis it only reaches this process.
 * A publisher also receives its own messages, exactly once, so handlers are the single
 * place where an event takes effect.
 */
export interface Bus {
  publish(channel: string, message: unknown): Promise<void>;
  subscribe(channel: string, handler: BusHandler): () => void;
  close(): Promise<void>;
}

export class LocalBus implements Bus {
  private readonly emitter = new EventEmitter();
  constructor() {
    this.emitter.setMaxListeners(0);
  }
  async publish(channel: string, message: unknown): Promise<void> {
    this.emitter.emit(channel, message);
  }
  subscribe(channel: string, handler: BusHandler): () => void {
    this.emitter.on(channel, handler);
    return () => this.emitter.off(channel, handler);
  }
  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

export class RedisBus implements Bus {
  private readonly local = new EventEmitter();
  /** Channels subscribed in Redis, with the pending or finished SUBSCRIBE of each. */
  private readonly subscribed = new Map<string, Promise<unknown>>();

  constructor(private readonly publisher: Redis, private readonly subscriber: Redis, private readonly prefix = 'gp:bus:') {
    this.local.setMaxListeners(0);
    subscriber.on('message', (channel: string, raw: string) => {
      if (!channel.startsWith(prefix)) return;
      let message: unknown;
      try {
        message = JSON.parse(raw);
      } catch {
        return;
      }
      this.local.emit(channel.slice(prefix.length), message);
    });
  }

  /** Resolves once the subscriber connection is ready to receive. */
  async ready(channels: string[]): Promise<void> {
    for (const channel of channels) await this.ensureSubscribed(channel);
  }

  async publish(channel: string, message: unknown): Promise<void> {
    await this.publisher.publish(this.prefix + channel, JSON.stringify(message));
  }

  subscribe(channel: string, handler: BusHandler): () => void {
    this.local.on(channel, handler);
    this.ensureSubscribed(channel).catch(() => this.subscribed.delete(channel));
    return () => this.local.off(channel, handler);
  }

  private async ensureSubscribed(channel: string): Promise<void> {
    let pending = this.subscribed.get(channel);
    if (!pending) {
      pending = this.subscriber.subscribe(this.prefix + channel);
      this.subscribed.set(channel, pending);
    }
    await pending;
  }

  async close(): Promise<void> {
    this.local.removeAllListeners();
    this.subscriber.disconnect();
  }
}
