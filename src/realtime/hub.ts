import { sql } from 'kysely';
import type { WebSocket } from 'ws';
import type { Caller } from '../api/method.js';
import type { Bus } from '../infra/bus.js';
import {
  BUS_LOST,
  BUS_RESTORED,
  defineChannel,
  PRESENCE_CHANGED,
  SESSIONS_REVOKED,
  WORLD_CHANGED,
  revokes,
  type Revocation,
} from '../infra/channels.js';
import type { SessionEnd, TokenResolver } from '../auth/index.js';
import type { Config } from '../config.js';
import type { Database } from '../db/connection.js';
import type { Clock } from '../infra/clock.js';
import type { Presence } from '../users/index.js';
import { PING, eventFrame } from './extws.js';
import { elementAt, lastOf } from '../infra/elements.js';

/** WebSocket close codes the feed uses besides the standard ones. */
export const CloseCode = {
  INVALID_TOKEN: 4001,
  SESSION_REVOKED: 4003,
  SHUTDOWN: 1001,
} as const;

/** Events each process keeps for connections that come back with `id_last`. */
const KEPT_EVENTS = 1000;

/** The longest wait a Node timer takes (about 24.8 days); a later expiry is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The reason of the 4003 close, by why the session ended. */
const END_REASONS: Record<SessionEnd, string> = { revoked: 'session revoked', expired: 'session expired' };

/** Closes a connection whose session ended, saying why. */
const closeEnded = (connection: Connection, why: SessionEnd): void => connection.socket.close(CloseCode.SESSION_REVOKED, END_REASONS[why]);

/** How long the online count of `status` frames is kept, ms. */
const ONLINE_COUNT_TTL_MS = 10_000;

/** Users online are counted again for pushed `status` frames at most this often, ms. */
const PRESENCE_COUNT_EVERY_MS = 1000;

/**
 * An event for realtime connections. `topic` is what a connection subscribes to with `subs`
 * (`user` events reach their audience whatever it subscribed to).
 */
export interface FeedEvent {
  topic: string;
  type: string;
  /** Fields of the event's entry in an ExtWS `events` frame, beside `id` and `type` (e.g. `msg_id`). */
  fields?: Record<string, unknown>;
  /** Lists an ExtWS `events` frame carries beside the events (`messages`, `users_data`...), joined across events. */
  lists?: Record<string, unknown[]>;
  /** `data` of the event's `{event, data}` frame in the JSON framing. */
  json: unknown;
  /** Only these users' connections receive it. */
  audience?: number[] | null;
  /** Names what the event shows (one chat message), for a later event to withdraw. */
  key?: string;
  /**
   * The key of earlier events this one takes back (a deleted message): they are no longer
   * kept for connections that come back, nor sent if they arrive after it.
   */
  withdraws?: string;
}

/** Events for realtime connections, numbered in order (Bus.publishSequenced). */
export const FEED_EVENTS = defineChannel<NumberedEvent>('realtime.event');

export interface NumberedEvent extends FeedEvent {
  /** Greater than every earlier event's, in every process: the `id` clients resume from. */
  seq: number;
}

export type FeedFormat = 'extws' | 'json';

export interface Connection {
  socket: WebSocket;
  format: FeedFormat;
  /** The signed-in user, when the connection sent a valid access token. */
  userId?: number;
  caller?: Caller;
  /** When the caller's session expires, ms by the server's clock (0 = never). */
  expiresAt?: number;
  /** Fires when the session expires; the connection is then closed. */
  expiry?: NodeJS.Timeout;
  subs: ReadonlySet<string>;
  /** Heard from since the last heartbeat. */
  alive: boolean;
  /** Events that arrived before the connection's first frames went out; sent after them. */
  held?: NumberedEvent[];
  /** The number of users online the connection was last told (its `status` frames); undefined until its first frames are out. */
  online?: number;
  /** A `4api` call is being answered: a session that ends meanwhile (the call may end it) closes the connection after the answer. */
  calling?: boolean;
  /** Why the session ended while a call was being answered. */
  endedWhileCalling?: SessionEnd;
}

/** A number shown in a signed-in connection's `auth` frame (`counters`), per user. */
export type AuthCounter = (userId: number) => Promise<number>;

/** Fields added to the user's profile in a signed-in connection's `auth` frame (`user_data`). */
export type AuthUserFields = (userId: number) => Promise<Record<string, unknown>>;

/** A field of every `status` frame, read when the frame is sent. */
export type StatusField = () => unknown;

export interface RealtimeDeps {
  bus: Bus;
  db: Database;
  clock: Clock;
  presence: Presence;
  tokens: Pick<TokenResolver, 'endedSessions'>;
  /**
   * Whether every revocation is announced to this process (one process, or several joined by
   * Redis). Where not, signed-in connections are checked against the database every heartbeat.
   */
  revocationsReachUs: boolean;
  config: Pick<Config, 'ws'>;
  log: { error(obj: unknown, msg: string): void };
}

/**
 * The realtime connections of this process and what reaches them. Every event is published
 * on the bus with a number (so every process, this one included, delivers the same events in
 * the same order under the same ids) and kept a while for connections that reconnect with the
 * last id they saw. Frames are made once per event and framing; a connection whose unsent data
 * passes `ws.maxQueueBytes` is cut, and one silent for a heartbeat is dropped.
 *
 * A signed-in connection lasts as long as its session: it is closed with 4003 when the session
 * expires (a timer), when it is revoked in any process (the revocation notice), and, where a
 * notice may have been missed (the bus was disconnected), when the database says so.
 */
export class RealtimeHub {
  private readonly connections = new Set<Connection>();
  private kept: NumberedEvent[] = [];
  /** Keys withdrawn lately (as many as events are kept), so an event that arrives after its withdrawal is dropped. */
  private readonly withdrawn = new Set<string>();
  private readonly counters = new Map<string, AuthCounter>();
  private readonly userFields: AuthUserFields[] = [];
  private readonly statusFields = new Map<string, StatusField>();
  private readonly beats: (() => void)[] = [];
  private readonly unsubscribes: (() => void)[] = [];
  private heartbeat?: NodeJS.Timeout;
  private online?: { count: number; at: number; pending?: Promise<number> };
  /** Counts revocation notices and bus losses: a connection that resolved its token across one is checked again. */
  private sessionNotices = 0;
  /** Set while revocation notices may have been missed and the database has not been asked since. */
  private recheckNeeded = false;
  private rechecks: Promise<void> = Promise.resolve();
  /** The next count of users online, when one is asked for (refreshPresence). */
  private presenceTimer?: NodeJS.Timeout;
  private presenceCountedAt = -Infinity;

  constructor(private readonly deps: RealtimeDeps) {}

  get size(): number {
    return this.connections.size;
  }

  async start(): Promise<void> {
    const { bus } = this.deps;
    // Subscribed in Redis before the server listens, so no event sent after start is missed.
    await bus.ready([FEED_EVENTS, SESSIONS_REVOKED, PRESENCE_CHANGED, WORLD_CHANGED]);
    this.unsubscribes.push(
      bus.subscribe(FEED_EVENTS, (event) => this.receive(event)),
      // An imported world replaces what the kept events told of (messages wiped or rewritten):
      // a connection that comes back reloads rather than hearing of the world before.
      bus.subscribe(WORLD_CHANGED, () => {
        this.kept = [];
      }),
      bus.subscribe(PRESENCE_CHANGED, () => this.refreshPresence()),
      bus.subscribe(SESSIONS_REVOKED, (revocation) => this.closeRevoked(revocation)),
      bus.subscribe(BUS_LOST, () => {
        this.sessionNotices++;
        this.recheckNeeded = true;
      }),
      bus.subscribe(BUS_RESTORED, () => {
        this.sessionNotices++;
        void this.recheckSessions();
      }),
    );
  }

  /** Changes whenever a session may have ended without this process noticing it in a connection (see `recheckSessions`). */
  get sessionChanges(): number {
    return this.sessionNotices;
  }

  /**
   * Asks the database whether the sessions of `connections` (by default every signed-in one)
   * still work, and closes those that do not: after notices may have been missed. Checks run
   * one after another; a failed one is tried again on the next heartbeat.
   */
  recheckSessions(connections: Iterable<Connection> = this.connections): Promise<void> {
    const targets = [...connections].filter((connection) => connection.caller);
    const all = connections === this.connections;
    this.rechecks = this.rechecks.then(async () => {
      if (all) this.recheckNeeded = false;
      try {
        const live = targets.filter((connection) => this.connections.has(connection));
        if (live.length === 0) return;
        const ended = await this.deps.tokens.endedSessions([...new Set(live.map((connection) => connection.caller!.sessionId))]);
        for (const connection of live) {
          const end = ended.get(connection.caller!.sessionId);
          if (end && this.connections.has(connection)) this.end(connection, end);
        }
      } catch (error) {
        this.recheckNeeded = true;
        this.deps.log.error({ err: error }, 'realtime connections could not be checked against their sessions');
      }
    });
    return this.rechecks;
  }

  stop(): void {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    if (this.presenceTimer) clearTimeout(this.presenceTimer);
    this.presenceTimer = undefined;
    for (const connection of this.connections) {
      clearTimeout(connection.expiry);
      connection.socket.close(CloseCode.SHUTDOWN, 'server shutting down');
    }
    this.connections.clear();
  }

  /** Adds a counter to every signed-in connection's `auth` frame (for example `friends_requests`). */
  addAuthCounter(name: string, counter: AuthCounter): void {
    this.counters.set(name, counter);
  }

  /** Adds fields to the user's profile in every signed-in connection's `auth` frame. */
  addAuthUserFields(fields: AuthUserFields): void {
    this.userFields.push(fields);
  }

  /** Adds a field to every `status` frame. */
  addStatusField(name: string, field: StatusField): void {
    this.statusFields.set(name, field);
  }

  /** The fields the user's profile gains in the `auth` frame. */
  async authUserFields(userId: number): Promise<Record<string, unknown>> {
    return Object.assign({}, ...(await Promise.all(this.userFields.map((fields) => fields(userId)))));
  }

  /** Runs `task` on every heartbeat. */
  onHeartbeat(task: () => void): void {
    this.beats.push(task);
  }

  /** The counters of a user's `auth` frame. */
  async authCounters(userId: number): Promise<Record<string, number>> {
    const entries = await Promise.all([...this.counters].map(async ([name, counter]) => [name, await counter(userId)] as const));
    return Object.fromEntries(entries);
  }

  /** Sends an event to the connections of every process subscribed to its topic; resolves to its id. */
  publish(event: FeedEvent): Promise<number> {
    return this.deps.bus.publishSequenced(FEED_EVENTS, event);
  }

  /** Sends an event to one user's connections, on every process, whatever they subscribed to. */
  pushToUser(userId: number, event: Omit<FeedEvent, 'topic' | 'audience'>): Promise<number> {
    return this.publish({ ...event, topic: 'user', audience: [userId] });
  }

  /** Kept events after `idLast` that the connection may see, oldest first. */
  since(connection: Connection, idLast: number): NumberedEvent[] {
    return this.kept.filter((event) => event.seq > idLast && this.reaches(connection, event));
  }

  /** Users online now (cached for a few seconds, unless `fresh`): for `status` frames. */
  async onlineCount(fresh = false): Promise<number> {
    const now = this.deps.clock.now();
    if (!fresh && this.online && now - this.online.at < ONLINE_COUNT_TTL_MS) return this.online.count;
    if (this.online?.pending) return this.online.pending;
    const pending = sql<{
      n: number | string;
    }>`select count(*) as n from users where last_seen >= ${this.deps.presence.onlineSince()} or always_online = 1`
      .execute(this.deps.db.kysely)
      .then((result) => Number(result.rows[0]?.n ?? 0));
    this.online = { count: this.online?.count ?? 0, at: this.online?.at ?? 0, pending };
    try {
      const count = await pending;
      this.online = { count, at: now };
      return count;
    } catch (error) {
      this.online = undefined;
      throw error;
    }
  }

  /** Sends a connection the `status` frame (users online and the time) and remembers the count it was told. */
  sendStatus(connection: Connection, online: number): void {
    connection.online = online;
    const nowMs = this.deps.clock.now();
    // `streams` (no streams are shown here) and `sct`, the server's clock in ms, are read by the reference clients.
    const extra = Object.fromEntries([...this.statusFields].map(([name, field]) => [name, field()]));
    const status = { online, time: Math.floor(nowMs / 1000), streams: { count: 0 }, sct: nowMs, ...extra };
    this.send(
      connection,
      connection.format === 'json' ? JSON.stringify({ event: 'status', data: status }) : eventFrame('status', JSON.stringify({ status })),
    );
  }

  /** A user came online through this process (a signed-in connection opened): every process counts again. */
  async announcePresence(): Promise<void> {
    await this.deps.bus.publish(PRESENCE_CHANGED, {});
  }

  /**
   * Counts the users online and sends a `status` frame to each connection of this process that
   * was last told another number. Each process tells its own connections, so a change is
   * pushed once per connection however many processes notice it. One count a second at most:
   * calls meanwhile are served by the next one.
   */
  refreshPresence(): void {
    if (this.presenceTimer) return;
    const wait = Math.max(0, this.presenceCountedAt + PRESENCE_COUNT_EVERY_MS - performance.now());
    this.presenceTimer = setTimeout(() => {
      this.presenceCountedAt = performance.now();
      this.presenceTimer = undefined;
      this.onlineCount(true).then(
        (online) => {
          for (const connection of this.connections)
            if (connection.online !== undefined && connection.online !== online) this.sendStatus(connection, online);
        },
        (err) => this.deps.log.error({ err }, 'users online could not be counted'),
      );
    }, wait);
    this.presenceTimer.unref();
  }

  add(connection: Connection): void {
    this.connections.add(connection);
    this.armExpiry(connection);
    if (!this.heartbeat) {
      this.heartbeat = setInterval(() => this.beat(), this.deps.config.ws.heartbeatSeconds * 1000);
      this.heartbeat.unref();
    }
  }

  remove(connection: Connection): void {
    this.connections.delete(connection);
    clearTimeout(connection.expiry);
  }

  /** Closes the connection when its session expires (by the server's clock, looked at again when the timer fires). */
  private armExpiry(connection: Connection): void {
    const { expiresAt } = connection;
    if (!connection.caller || !expiresAt) return;
    const wait = Math.min(Math.max(expiresAt - this.deps.clock.now(), 0), MAX_TIMER_MS);
    connection.expiry = setTimeout(() => {
      if (!this.connections.has(connection)) return;
      if (this.deps.clock.now() >= expiresAt) this.end(connection, 'expired');
      else this.armExpiry(connection);
    }, wait);
    connection.expiry.unref();
  }

  /**
   * Closes a signed-in connection whose session ended: at once, or while a `4api` call is being
   * answered, once its answer is out (a refresh or a password change over the feed ends the
   * session and answers with the new one). It receives no event meanwhile.
   */
  private end(connection: Connection, why: SessionEnd): void {
    this.remove(connection);
    if (connection.calling) connection.endedWhileCalling = why;
    else closeEnded(connection, why);
  }

  /** Runs a `4api` call of the connection and sends its answer; closes the connection after it if its session ended meanwhile. */
  async answerCall(connection: Connection, answer: () => Promise<string>): Promise<void> {
    connection.calling = true;
    try {
      this.send(connection, await answer());
    } finally {
      connection.calling = false;
      if (connection.endedWhileCalling !== undefined) closeEnded(connection, connection.endedWhileCalling);
    }
  }

  /**
   * Sends text to one connection, cutting it when its queue would pass the bound. False when not
   * sent. A frame going to many connections comes encoded once, as UTF-8 bytes sent as text.
   */
  send(connection: Connection, frame: string | Buffer): boolean {
    const { socket } = connection;
    if (socket.readyState !== socket.OPEN) return false;
    const size = typeof frame === 'string' ? Buffer.byteLength(frame) : frame.length;
    if (socket.bufferedAmount + size > this.deps.config.ws.maxQueueBytes) {
      // The closing handshake would queue behind the backlog: cut the connection.
      this.remove(connection);
      socket.terminate();
      return false;
    }
    socket.send(frame, { binary: false });
    return true;
  }

  /** Ends `held`: sends what arrived meanwhile that is newer than `after`. */
  release(connection: Connection, after: number): void {
    const held = connection.held ?? [];
    connection.held = undefined;
    const newer = held.filter((event) => event.seq > after);
    if (newer.length > 0) for (const frame of framesFor(connection.format, newer)) this.send(connection, frame);
  }

  private reaches(connection: Connection, event: FeedEvent): boolean {
    if (event.audience && (connection.userId === undefined || !event.audience.includes(connection.userId))) return false;
    return event.topic === 'user' ? event.audience !== undefined && event.audience !== null : connection.subs.has(event.topic);
  }

  private receive(event: NumberedEvent): void {
    if (!event || typeof event !== 'object' || typeof event.seq !== 'number' || typeof event.type !== 'string') return;
    if (typeof event.withdraws === 'string') this.withdraw(event.withdraws);
    else if (typeof event.key === 'string' && this.withdrawn.has(event.key)) return;
    this.kept.push(event);
    if (this.kept.length > KEPT_EVENTS) this.kept.splice(0, this.kept.length - KEPT_EVENTS);
    // Encoded once for every connection it goes to (ws would encode a string for each of them).
    const frames: Partial<Record<FeedFormat, Buffer>> = {};
    for (const connection of this.connections) {
      if (!this.reaches(connection, event)) continue;
      if (connection.held) {
        connection.held.push(event);
        continue;
      }
      this.send(connection, (frames[connection.format] ??= Buffer.from(elementAt(framesFor(connection.format, [event]), 0))));
    }
  }

  /**
   * Forgets the kept events with `key`, and those held for connections whose first frames are
   * not out yet: what was withdrawn is never sent again. Every process hears the withdrawing
   * event on the bus, so each one's kept events are cleared.
   */
  private withdraw(key: string): void {
    this.withdrawn.add(key);
    if (this.withdrawn.size > KEPT_EVENTS) this.withdrawn.delete(this.withdrawn.values().next().value!);
    const stays = (event: NumberedEvent) => event.key !== key;
    this.kept = this.kept.filter(stays);
    for (const connection of this.connections) if (connection.held) connection.held = connection.held.filter(stays);
  }

  private closeRevoked(revocation: Revocation): void {
    this.sessionNotices++;
    // A revoked session stops receiving at once.
    for (const connection of this.connections)
      if (connection.caller && revokes(revocation, connection.caller)) this.end(connection, 'revoked');
  }

  private beat(): void {
    for (const connection of this.connections) {
      if (!connection.alive) {
        this.remove(connection);
        connection.socket.terminate();
        continue;
      }
      connection.alive = false;
      if (connection.format === 'extws') this.send(connection, PING);
      else connection.socket.ping();
    }
    // Users whose last sign of life is now too old have gone offline; others came online through plain requests.
    void this.deps.presence
      .touchConnected()
      .catch(() => undefined)
      .then(() => this.refreshPresence());
    if (!this.deps.revocationsReachUs || (this.recheckNeeded && this.deps.bus.isCurrent())) void this.recheckSessions();
    for (const task of this.beats) task();
  }
}

/**
 * The frames of events, oldest first: in the JSON framing one `{event, data}` per event; in
 * ExtWS one `events` frame holding them all, with their lists joined (entries of the same
 * list that are the same object given once).
 */
export function framesFor(format: FeedFormat, events: readonly NumberedEvent[]): string[] {
  if (format === 'json') return events.map((event) => JSON.stringify({ event: event.type, data: event.json }));
  const lists: Record<string, unknown[]> = {};
  const seen = new Map<string, Set<string>>();
  for (const event of events)
    for (const [name, items] of Object.entries(event.lists ?? {})) {
      const list = (lists[name] ??= []);
      const texts = seen.get(name) ?? seen.set(name, new Set()).get(name)!;
      for (const item of items) {
        const text = JSON.stringify(item);
        if (texts.has(text)) continue;
        texts.add(text);
        list.push(item);
      }
    }
  const body = {
    events: events.map((event) => ({ id: event.seq, type: event.type, ...event.fields })),
    ...lists,
    id_last_given: lastOf(events).seq,
  };
  return [eventFrame('events', JSON.stringify(body))];
}
