import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

import { BUS_LOST, BUS_RESTORED, type Channel } from './channels.js';

/**
 * How long a process may trust that it has heard every message, ms: it proves it by a
 * round trip on its subscribed connection (Redis delivers in order, so the answer comes
 * after every message published before it); a publisher waiting for confirmations never
 * waits longer than this after publishing.
 */
export const BUS_LEASE_MS = 2000;
const LEASE_RENEW_MS = 500;

/**
 * Publish/subscribe between the server processes of one deployment: chat fan-out, token
 * revocation, cache invalidation. Without Redis it only reaches this process.
 * A publisher also receives its own messages, exactly once, so handlers are the single
 * place where an event takes effect. `publish` sends its message as it is called: every process
 * receives it before any message, on any channel, that this process publishes after the call,
 * whether or not the publisher waited for it.
 */
export interface Bus {
  publish<M>(channel: Channel<M>, message: M): Promise<void>;
  /**
   * Publishes and resolves once every process that received the message has run its
   * handlers, or, for any that has not confirmed, once it can no longer believe itself
   * current (`isCurrent`): what it kept on the strength of earlier messages it no longer uses.
   */
  publishConfirmed<M>(channel: Channel<M>, message: M): Promise<void>;
  /** `handler` runs on every message of the channel, in this process; returns what ends that. */
  subscribe<M>(channel: Channel<M>, handler: (message: M) => void): () => void;
  /**
   * Resolves once messages of these channels published from now on reach this process: call
   * before relying on a subscription (before the server listens, before a cache's first fill).
   */
  ready(channels: readonly Channel<unknown>[]): Promise<void>;
  /**
   * Publishes `message` (a non-empty object) with a `seq` field added: a number greater than
   * that of every message published on the channel before it, by any process and across
   * restarts. Every process receives the messages of a channel in `seq` order. Resolves to the
   * number given.
   */
  publishSequenced<M extends { seq: number }>(channel: Channel<M>, message: Omit<M, 'seq'>): Promise<number>;
  /** Whether this process has handled every message published up to a moment ago (at most BUS_LEASE_MS). */
  isCurrent(): boolean;
  close(): Promise<void>;
}

/**
 * The least `seq` a sequenced message gets now: microseconds since the epoch, so numbers keep
 * growing across restarts and a lost Redis counter, however few were handed out before.
 */
const seqFloor = () => Date.now() * 1000;

export class LocalBus implements Bus {
  private readonly emitter = new EventEmitter();
  private lastSeq = 0;
  constructor() {
    this.emitter.setMaxListeners(0);
  }
  async publish<M>(channel: Channel<M>, message: M): Promise<void> {
    this.emitter.emit(channel.name, message);
  }
  async publishSequenced<M extends { seq: number }>(channel: Channel<M>, message: Omit<M, 'seq'>): Promise<number> {
    const seq = (this.lastSeq = Math.max(this.lastSeq + 1, seqFloor()));
    this.emitter.emit(channel.name, { seq, ...message });
    return seq;
  }
  /** Handlers run before `publish` returns: nothing more to wait for. */
  publishConfirmed<M>(channel: Channel<M>, message: M): Promise<void> {
    return this.publish(channel, message);
  }
  subscribe<M>(channel: Channel<M>, handler: (message: M) => void): () => void {
    this.emitter.on(channel.name, handler);
    return () => this.emitter.off(channel.name, handler);
  }
  /** Every message is delivered in this process as it is published. */
  async ready(): Promise<void> {}
  isCurrent(): boolean {
    return true;
  }
  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

/** INCR the channel's counter (raised to the floor when below it) and PUBLISH the message with that number, at once. */
const SEQUENCED_PUBLISH = `
local seq = redis.call('INCR', KEYS[1])
local floor = tonumber(ARGV[3])
if seq < floor then
  redis.call('SET', KEYS[1], ARGV[3])
  seq = floor
end
redis.call('PUBLISH', KEYS[2], ARGV[1] .. string.format('%d', seq) .. ARGV[2])
return tostring(seq)`;

/** SEQUENCED_PUBLISH as a command of the publisher's connection, sent by its hash once Redis has the script. */
interface SequencedPublishCommand {
  busPublishSequenced(seqKey: string, channel: string, head: string, rest: string, floor: number): Promise<string>;
}

/** Where receivers of a confirmed message confirm it (the message's id), and the mark that tells such messages apart. */
const CONFIRM_CHANNEL = '$confirmed';
const CONFIRMED_MARK = 'C';

/** Channels emitted by the bus itself, in this process only: never subscribed in Redis. */
const LOCAL_CHANNELS = new Set([BUS_LOST.name, BUS_RESTORED.name]);

export class RedisBus implements Bus {
  private readonly local = new EventEmitter();
  /** Channels subscribed in Redis, with the pending or finished SUBSCRIBE of each. */
  private readonly subscribed = new Map<string, Promise<unknown>>();
  /** Confirmed messages this process published and still waits on, by id. */
  private readonly awaited = new Map<string, { confirmations: number; receivers: number; done: () => void }>();
  /** performance.now() until which this process is current; see BUS_LEASE_MS. */
  private currentUntil = 0;
  /** Counts losses of the subscribed connection, so an answer from before one renews nothing. */
  private connection = 0;
  private renewal: NodeJS.Timeout | undefined;
  private readonly sequenced: SequencedPublishCommand;

  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    private readonly prefix = 'gp:bus:',
  ) {
    this.local.setMaxListeners(0);
    publisher.defineCommand('busPublishSequenced', { numberOfKeys: 2, lua: SEQUENCED_PUBLISH });
    this.sequenced = publisher as unknown as SequencedPublishCommand;
    subscriber.on('message', (channel: string, raw: string) => {
      if (!channel.startsWith(prefix)) return;
      const name = channel.slice(prefix.length);
      if (name === CONFIRM_CHANNEL) return this.confirmed(raw);
      // A confirmed message reads `C<id> <json>`; any other is plain JSON, which never starts with that letter.
      const confirm = raw.startsWith(CONFIRMED_MARK) ? raw.slice(1, raw.indexOf(' ')) : undefined;
      let message: unknown;
      try {
        message = JSON.parse(confirm === undefined ? raw : raw.slice(confirm.length + 2));
      } catch {
        return;
      }
      try {
        this.local.emit(name, message);
      } finally {
        if (confirm) this.publisher.publish(prefix + CONFIRM_CHANNEL, confirm).catch(() => undefined);
      }
    });
    subscriber.on('close', () => {
      this.connection++;
      this.currentUntil = 0;
      this.local.emit(BUS_LOST.name, {});
    });
    subscriber.on('ready', () => {
      if (this.connection === 0) return;
      // ioredis sends the SUBSCRIBEs again before 'ready' is heard: once a PING sent now comes
      // back, they are in force (Redis answers in order).
      const connection = this.connection;
      this.subscriber.ping().then(
        () => {
          if (connection === this.connection) this.local.emit(BUS_RESTORED.name, {});
        },
        () => undefined,
      );
    });
    if (publisher !== subscriber) publisher.on('close', () => this.local.emit(BUS_LOST.name, {}));
  }

  /** Resolves once the subscriber connection has subscribed to the channels in Redis and this process is current. */
  async ready(channels: readonly Channel<unknown>[]): Promise<void> {
    for (const channel of channels) if (!LOCAL_CHANNELS.has(channel.name)) await this.ensureSubscribed(channel.name);
    if (!this.isCurrent()) await this.renewLease();
  }

  async publish<M>(channel: Channel<M>, message: M): Promise<void> {
    await this.publisher.publish(this.prefix + channel.name, JSON.stringify(message));
  }

  /**
   * The number and the publication are one step in Redis (a script), so Redis delivers the
   * messages of a channel in the order of their numbers.
   */
  async publishSequenced<M extends { seq: number }>(channel: Channel<M>, message: Omit<M, 'seq'>): Promise<number> {
    const rest = JSON.stringify(message).slice(1);
    if (rest === '}') throw new Error('a sequenced message needs at least one field');
    const seq = await this.sequenced.busPublishSequenced(
      `${this.prefix}seq:${channel.name}`,
      this.prefix + channel.name,
      '{"seq":',
      `,${rest}`,
      seqFloor(),
    );
    return Number(seq);
  }

  /**
   * Every process that received the message confirms it once its handlers ran. One that does
   * not (stalled, or cut off without knowing it yet) is waited for until its lease, renewed
   * only by answers that come after this message, has run out: it then believes itself
   * behind (`isCurrent`), and sees the message before it believes otherwise again. Receivers
   * are counted by Redis: any other subscriber to the channel (a `redis-cli subscribe` left
   * open) is waited for too, the full lease each time.
   */
  async publishConfirmed<M>(channel: Channel<M>, message: M): Promise<void> {
    await this.ensureSubscribed(CONFIRM_CHANNEL);
    const id = randomUUID();
    const confirmed = new Promise<void>((done) => this.awaited.set(id, { confirmations: 0, receivers: Infinity, done }));
    const waiting = this.awaited.get(id)!;
    try {
      waiting.receivers = await this.publisher.publish(this.prefix + channel.name, `${CONFIRMED_MARK}${id} ${JSON.stringify(message)}`);
      if (waiting.confirmations >= waiting.receivers) return;
      // Clocks of processes may run a little apart: a tenth more.
      const timer = setTimeout(waiting.done, BUS_LEASE_MS * 1.1);
      await confirmed;
      clearTimeout(timer);
    } finally {
      this.awaited.delete(id);
    }
  }

  private confirmed(id: string): void {
    const waiting = this.awaited.get(id);
    if (waiting && ++waiting.confirmations >= waiting.receivers) waiting.done();
  }

  subscribe<M>(channel: Channel<M>, handler: (message: M) => void): () => void {
    const { name } = channel;
    this.local.on(name, handler);
    if (!LOCAL_CHANNELS.has(name)) this.ensureSubscribed(name).catch(() => this.subscribed.delete(name));
    return () => this.local.off(name, handler);
  }

  /** Current while a PING sent on the subscribed connection less than BUS_LEASE_MS ago has come back. */
  isCurrent(): boolean {
    if (this.renewal === undefined) {
      this.renewal = setInterval(() => void this.renewLease(), LEASE_RENEW_MS).unref();
      void this.renewLease();
    }
    return this.subscriber.status === 'ready' && performance.now() < this.currentUntil;
  }

  private async renewLease(): Promise<void> {
    if (this.subscriber.status !== 'ready') return;
    const sentAt = performance.now();
    const connection = this.connection;
    await this.subscriber.ping().then(
      () => {
        if (connection === this.connection) this.currentUntil = Math.max(this.currentUntil, sentAt + BUS_LEASE_MS);
      },
      () => undefined,
    );
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
    clearInterval(this.renewal);
    for (const waiting of this.awaited.values()) waiting.done();
    this.local.removeAllListeners();
    this.subscriber.disconnect();
  }
}
