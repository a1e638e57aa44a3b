import type { SerializedData } from '../api/method.js';
import { randomUUID } from 'node:crypto';
import type { Core, Runtime, Services } from '../services.js';
import { CATALOG_CHANGED, SESSIONS_REVOKED, USERS_CHANGED, WORLD_CHANGED, defineChannel, type UsersChanged } from '../infra/channels.js';
import { loadProtoShorts, type ItemObject } from '../catalog/index.js';
import { ChatHistory, type ChatSettings, type GchatAnswer } from './history.js';
import { MessageWriter, loadNewestMessages, protosNamedBy, usersNamedBy } from './messages.js';
import { selectChatState } from './queries.js';
import type { ChatMessage, ChatUser } from './schemas.js';
import { loadChatUsers } from './users.js';
import type { FeedEvent } from '../realtime/index.js';

/**
 * How old the in-memory chat may get before it is read again from the database,
 * milliseconds. Presence changes with time, not with chat writes, so this bounds how stale
 * the `online` flags in gchat.get are; it also bounds how long a change whose bus event was
 * lost (a Redis outage) stays unseen. A few queries per interval per process, never per call.
 */
export const RESYNC_AFTER_MS = 30_000;

/** Where the chat status last announced to realtime connections is kept (beside the counters: in Redis, for every process). */
const ANNOUNCED_STATUS_KEY = 'chat:status:announced';
const ANNOUNCED_STATUS_KEPT_SECONDS = 30 * 86400;

/** Chat events; every process applies them to its history. */
export const CHAT_EVENTS = defineChannel<ChatEvent>('chat.event');

export type ChatEvent =
  | {
      kind: 'add';
      id: string;
      /** msg_seq of a stored message; null for messages only pushed live. */
      seq: number | null;
      message: ChatMessage;
      users: ChatUser[];
      item_protos: ItemObject[];
      /** Only these users' connections receive it (a bot's non-public message). */
      audience: number[] | null;
    }
  | { kind: 'delete'; id: string; msg_id: string }
  | { kind: 'status'; id: string };

/** The realtime key of a message's `gchat.add` event, which its deletion withdraws. */
const feedKeyOf = (msgId: string): string => `gchat:${msgId}`;

/** Remembers the last `capacity` values added (event ids, deleted message ids, user ids). */
class RecentSet<T> {
  private readonly items = new Set<T>();
  constructor(private readonly capacity: number) {}
  has(value: T): boolean {
    return this.items.has(value);
  }
  add(value: T): void {
    this.items.add(value);
    if (this.items.size > this.capacity) this.items.delete(this.items.values().next().value!);
  }
  delete(value: T): void {
    this.items.delete(value);
  }
}

export async function readChatSettings(services: Pick<Services, 'db' | 'config'>): Promise<ChatSettings> {
  const row = await selectChatState(services.db.kysely);
  return {
    closed: row?.closed === 1,
    slowmode: row?.slowmode === 1,
    emoteonly: row?.emoteonly === 1,
    slowmode_interval: row?.slowmode_interval ?? services.config.chat.slowmodeInterval,
  };
}

/**
 * The chat of this process: the in-memory history behind gchat.get; what changes goes out to
 * realtime connections (services.realtime) from the process where it happened.
 * Every change (a message, a deletion, a status change, a reload) runs through one queue,
 * so a reload never interleaves with an event, and is applied once even though the sending
 * process applies its own events at once (read-your-writes) and again hears them on the bus.
 */
export class ChatRuntime implements Runtime {
  readonly history: ChatHistory;
  readonly writer = new MessageWriter();
  /** The configured emoticons: an emote-only chat accepts only these. */
  readonly emoticons: ReadonlySet<string>;
  /** Set by `start`, before anything reads or changes the chat. */
  private services!: Services;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly appliedEvents = new RecentSet<string>(10_000);
  private readonly deletedIds = new RecentSet<string>(10_000);
  /** Users changed while no message named them, not read since: a message may yet bring a form read before the change. */
  private readonly changedUnnamed = new RecentSet<number>(10_000);
  private syncedAt = 0;
  private resyncing?: Promise<void>;
  private readonly unsubscribes: (() => void)[] = [];

  /** Nothing is read yet: `start` does it, once every capability's runtime exists. */
  constructor(core: Core) {
    this.history = new ChatHistory(core.config.chat.historySize);
    this.emoticons = new Set(core.config.chat.emoticons);
    // Changes whose bus event was lost are read again even when nobody polls gchat.get.
    core.realtime.onHeartbeat(() => void this.settle().catch((err) => this.logFailure(err)));
  }

  async start(services: Services): Promise<void> {
    this.services = services;
    const { bus } = services;
    // Subscribed in Redis before the server listens, so no event sent after start is missed.
    await bus.ready([CHAT_EVENTS, WORLD_CHANGED, USERS_CHANGED, SESSIONS_REVOKED, CATALOG_CHANGED]);
    this.unsubscribes.push(
      bus.subscribe(CHAT_EVENTS, (event) => void this.apply(event).catch((err) => this.logFailure(err))),
      bus.subscribe(WORLD_CHANGED, () => void this.serially(() => this.reloadAll()).catch((err) => this.logFailure(err))),
      bus.subscribe(USERS_CHANGED, (message) => {
        const ids = (message as Partial<UsersChanged> | null)?.user_ids;
        this.refreshUsers(Array.isArray(ids) ? ids.filter((id): id is number => Number.isSafeInteger(id)) : undefined);
      }),
      // A ban ends the user's sessions, a notice every process has handled by the time it is
      // confirmed, before it is announced as a user change: so gchat.get of every process shows
      // the ban once the banning call returns.
      bus.subscribe(SESSIONS_REVOKED, (revocation) => {
        if (revocation !== null && typeof revocation === 'object' && 'userId' in revocation && Number.isSafeInteger(revocation.userId))
          this.refreshUsers([revocation.userId]);
      }),
      bus.subscribe(CATALOG_CHANGED, () => void this.serially(() => this.reloadProtos()).catch((err) => this.logFailure(err))),
    );
    await this.serially(() => this.reloadAll());
  }

  stop(): void {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
  }

  /**
   * The gchat.get answer, after every change this process has heard of so far, with user
   * short forms at most RESYNC_AFTER_MS old.
   */
  async answer(): Promise<GchatAnswer> {
    await this.settle();
    return this.history.answer();
  }

  /** The same answer, serialized (once per change). */
  async answerData(): Promise<SerializedData> {
    await this.settle();
    return this.history.answerData();
  }

  /** Waits for queued changes, and reads everything again when the last read is older than RESYNC_AFTER_MS. */
  private async settle(): Promise<void> {
    if (this.services.clock.now() - this.syncedAt >= RESYNC_AFTER_MS) {
      this.resyncing ??= this.serially(() => this.resync()).finally(() => (this.resyncing = undefined));
      await this.resyncing;
    } else {
      await this.queue;
    }
  }

  get settings(): ChatSettings {
    return this.history.status;
  }

  /**
   * Applies an event here at once, then tells every other process, then the realtime
   * connections of every process (what changed nothing visible, such as a status change of
   * the slow-mode interval alone, reaches no connection).
   */
  async publish(event: ChatEvent): Promise<void> {
    const visible = await this.apply(event);
    try {
      await this.services.bus.publish(CHAT_EVENTS, event);
      if (!visible) return;
      if (event.kind === 'status') await this.announceStatus();
      else await this.services.realtime.publish(this.feedEventOf(event));
    } catch (err) {
      this.services.log.error({ err }, 'chat event could not be published to other processes');
    }
  }

  /**
   * Tells realtime connections the chat status, unless it is the one announced last. A change
   * reaches a process as its own write, on the bus, or from its resync (when the bus event was
   * lost, or the database was read before the event came); of every process that finds it, the
   * one whose exchange sees the older status announces it.
   */
  private async announceStatus(): Promise<void> {
    const event = this.feedEventOf({ kind: 'status', id: '' });
    const status = JSON.stringify(event.fields?.status);
    const announced = await this.services.counters.exchange(ANNOUNCED_STATUS_KEY, status, ANNOUNCED_STATUS_KEPT_SECONDS);
    if (announced !== status) await this.services.realtime.publish(event);
  }

  /** What realtime connections receive of an event. */
  private feedEventOf(event: ChatEvent): FeedEvent {
    if (event.kind === 'add') {
      const { message, users, item_protos } = event;
      return {
        topic: 'gchat',
        type: 'gchat.add',
        fields: { msg_id: message.msg_id },
        lists: { messages: [message], users_data: users, item_protos },
        json: { message, users, item_protos },
        audience: event.audience,
        key: feedKeyOf(message.msg_id),
      };
    }
    if (event.kind === 'delete')
      return {
        topic: 'gchat',
        type: 'gchat.delete',
        fields: { msg_id: event.msg_id },
        json: { msg_id: event.msg_id },
        // A client that comes back gets the deletion, never the deleted text.
        withdraws: feedKeyOf(event.msg_id),
      };
    const { closed, slowmode, emoteonly } = this.history.status;
    return {
      topic: 'gchat',
      type: 'gchat.status',
      fields: { status: { closed, slowmode, emoteonly } },
      json: { closed, slowmode, emoteonly },
    };
  }

  static eventId(): string {
    return randomUUID();
  }

  /** Applies an event once; resolves to whether it changed what clients see. */
  private apply(event: ChatEvent): Promise<boolean> {
    if (!event || typeof event !== 'object' || typeof event.id !== 'string') return Promise.resolve(false);
    if (this.appliedEvents.has(event.id)) return Promise.resolve(false);
    this.appliedEvents.add(event.id);
    return this.serially(async () => {
      if (event.kind === 'add') return this.applyAdd(event);
      if (event.kind === 'delete') return this.applyDelete(event.msg_id);
      if (event.kind === 'status') return this.applyStatus();
      return false;
    });
  }

  private async applyAdd(event: Extract<ChatEvent, { kind: 'add' }>): Promise<boolean> {
    const { message } = event;
    if (this.deletedIds.has(message.msg_id)) return false;
    if (event.seq !== null) {
      // The message's users were read before it was stored: a change of theirs since has reloaded
      // them here, or, when no message named them then, has them read again now.
      const users = await this.usersSinceChanges(event.users);
      this.history.insert({ seq: event.seq, message });
      this.history.addUsers(users);
      this.history.putProtos(event.item_protos);
    }
    return true;
  }

  /** A message's users, those changed while no message named them read again (the message may have read them before the change). */
  private async usersSinceChanges(users: ChatUser[]): Promise<ChatUser[]> {
    const changed = new Set(users.map((user) => user.user_id!).filter((id) => this.changedUnnamed.has(id)));
    if (changed.size === 0) return users;
    const current = await loadChatUsers(this.services, [...changed]);
    for (const id of changed) this.changedUnnamed.delete(id);
    return [...users.filter((user) => !changed.has(user.user_id!)), ...current.values()];
  }

  private async applyDelete(msgId: string): Promise<boolean> {
    this.deletedIds.add(msgId);
    if (this.history.remove(msgId)) await this.reloadMessages();
    return true;
  }

  private async applyStatus(): Promise<boolean> {
    return this.updateStatus(await readChatSettings(this.services));
  }

  private updateStatus(settings: ChatSettings): boolean {
    return this.history.setStatus(settings);
  }

  /** Everything from the database, forgetting every short form held (start, world reload). */
  private async reloadAll(): Promise<void> {
    this.history.clearEnrichment();
    await this.resync();
  }

  /** Status, messages and user short forms from the database; subscribers hear of a status change. */
  private async resync(): Promise<void> {
    const startedAt = this.services.clock.now();
    // A change whose event was lost still reaches realtime connections, once.
    if (this.updateStatus(await readChatSettings(this.services)) && this.syncedAt > 0)
      await this.announceStatus().catch((err) => this.logFailure(err));
    await this.reloadMessages();
    await this.reloadUsers(undefined);
    this.syncedAt = startedAt;
  }

  /** The window from the database; short forms are loaded for names not held yet. */
  private async reloadMessages(): Promise<void> {
    this.history.replaceMessages(await loadNewestMessages(this.services, this.history.size));
    const { userIds, protoIds } = this.history.missing();
    this.history.putUsers((await loadChatUsers(this.services, userIds)).values());
    this.history.putProtos((await loadProtoShorts(this.services, protoIds)).values());
  }

  /** Queues a reload of the given users' short forms (all named users when undefined). */
  private refreshUsers(userIds: number[] | undefined): void {
    void this.serially(() => this.reloadUsers(userIds)).catch((err) => this.logFailure(err));
  }

  /** Reloads the short forms of the given users (all named users when undefined). */
  private async reloadUsers(userIds: number[] | undefined): Promise<void> {
    const named = this.history.namedUserIds();
    const ids = userIds === undefined ? named : userIds.filter((id) => named.includes(id));
    if (userIds !== undefined) this.forgetChanged(userIds.filter((id) => !named.includes(id)));
    this.history.putUsers((await loadChatUsers(this.services, ids)).values());
  }

  /** Forgets changed users no message names any more, rather than keep them stale; the next message to name them has them read. */
  private forgetChanged(userIds: number[]): void {
    this.history.forgetUsers(userIds);
    for (const id of userIds) this.changedUnnamed.add(id);
  }

  private async reloadProtos(): Promise<void> {
    this.history.putProtos((await loadProtoShorts(this.services, this.history.namedProtoIds())).values());
  }

  /** Runs `task` after every change queued before it. */
  private serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private logFailure(err: unknown): void {
    this.services.log.error({ err }, 'chat state could not be updated');
  }
}

/** Short forms of the users and prototypes one message names, for its event. */
export async function enrichmentOf(services: Services, message: ChatMessage): Promise<{ users: ChatUser[]; item_protos: ItemObject[] }> {
  const byId = (a: number, b: number) => a - b;
  const userIds = [...new Set(usersNamedBy(message))].sort(byId);
  const protoIds = [...new Set(protosNamedBy(message))].sort(byId);
  const [users, protos] = await Promise.all([loadChatUsers(services, userIds), loadProtoShorts(services, protoIds)]);
  return {
    users: userIds.map((id) => users.get(id)).filter((v) => v !== undefined),
    item_protos: protoIds.map((id) => protos.get(id)).filter((v) => v !== undefined),
  };
}
