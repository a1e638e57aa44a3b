import { SerializedData } from '../api/method.js';
import { elementAt } from '../infra/elements.js';
import type { ItemObject } from '../catalog/index.js';
import { protosNamedBy, usersNamedBy } from './messages.js';
import type { ChatMessage, ChatStatus, ChatUser } from './schemas.js';

export interface HistoryEntry {
  /** Place in the order of appearance (chat_messages.msg_seq). */
  seq: number;
  message: ChatMessage;
}

export interface ChatSettings extends ChatStatus {
  /** Seconds between two messages of one user in slow mode. */
  slowmode_interval: number;
}

export interface GchatAnswer {
  messages: ChatMessage[];
  status: ChatStatus;
  users: ChatUser[];
  item_protos: ItemObject[];
}

/**
 * What gchat.get shows, held in memory: the newest messages in order of appearance, the
 * short forms of the users and prototypes they name, and the chat status. The answer is
 * built once per change and shared by every call until the next change.
 */
export class ChatHistory {
  private entries: HistoryEntry[] = [];
  private readonly users = new Map<number, ChatUser>();
  private readonly protos = new Map<number, ItemObject>();
  private settings: ChatSettings = { closed: false, slowmode: false, emoteonly: false, slowmode_interval: 10 };
  private cached?: GchatAnswer;
  private cachedData?: SerializedData;

  constructor(readonly size: number) {}

  get status(): ChatSettings {
    return this.settings;
  }

  /** Replaces the whole window (start, world reload, backfill after a deletion). */
  replaceMessages(entries: HistoryEntry[]): void {
    this.entries = entries.slice(-this.size);
    this.changed();
  }

  /**
   * Places a new message by its msg_seq (events from several processes may arrive out of
   * order). Returns false when it is already there or older than the whole window.
   */
  insert(entry: HistoryEntry): boolean {
    if (this.entries.some((e) => e.message.msg_id === entry.message.msg_id)) return false;
    let at = this.entries.length;
    while (at > 0 && elementAt(this.entries, at - 1).seq > entry.seq) at--;
    if (at === 0 && this.entries.length >= this.size) return false;
    this.entries.splice(at, 0, entry);
    if (this.entries.length > this.size) this.entries.splice(0, this.entries.length - this.size);
    this.changed();
    return true;
  }

  remove(msgId: string): boolean {
    const at = this.entries.findIndex((e) => e.message.msg_id === msgId);
    if (at < 0) return false;
    this.entries.splice(at, 1);
    this.changed();
    return true;
  }

  /** Sets the status; returns whether any of the flags gchat.get shows changed. */
  setStatus(settings: ChatSettings): boolean {
    const before = this.settings;
    this.settings = settings;
    const flagsChanged =
      before.closed !== settings.closed || before.slowmode !== settings.slowmode || before.emoteonly !== settings.emoteonly;
    if (flagsChanged) this.changed();
    return flagsChanged;
  }

  putUsers(users: Iterable<ChatUser>): void {
    for (const user of users) this.users.set(user.user_id!, user);
    this.changed();
  }

  /** Drops what is held of these users (no message of the window names them: nothing shows it). */
  forgetUsers(userIds: Iterable<number>): void {
    for (const id of userIds) this.users.delete(id);
  }

  /** Adds the users not held yet: those held were read again since (a reload after a ban, say) or are as fresh. */
  addUsers(users: Iterable<ChatUser>): void {
    this.putUsers([...users].filter((user) => !this.users.has(user.user_id!)));
  }

  putProtos(protos: Iterable<ItemObject>): void {
    for (const proto of protos) this.protos.set(proto.item_proto_id as number, proto);
    this.changed();
  }

  clearEnrichment(): void {
    this.users.clear();
    this.protos.clear();
    this.changed();
  }

  /** Every user named by a message in the window. */
  namedUserIds(): number[] {
    return [...new Set(this.entries.flatMap((e) => usersNamedBy(e.message)))];
  }

  namedProtoIds(): number[] {
    return [...new Set(this.entries.flatMap((e) => protosNamedBy(e.message)))];
  }

  /** Named users and prototypes whose short form is not held yet. */
  missing(): { userIds: number[]; protoIds: number[] } {
    return {
      userIds: this.namedUserIds().filter((id) => !this.users.has(id)),
      protoIds: this.namedProtoIds().filter((id) => !this.protos.has(id)),
    };
  }

  answer(): GchatAnswer {
    if (this.cached) return this.cached;
    const userIds = this.namedUserIds();
    const protoIds = this.namedProtoIds();
    this.prune(userIds, protoIds);
    const { closed, slowmode, emoteonly } = this.settings;
    const answer: GchatAnswer = {
      messages: this.entries.map((e) => e.message),
      status: { closed, slowmode, emoteonly },
      users: userIds
        .sort((a, b) => a - b)
        .map((id) => this.users.get(id))
        .filter((v) => v !== undefined),
      item_protos: protoIds
        .sort((a, b) => a - b)
        .map((id) => this.protos.get(id))
        .filter((v) => v !== undefined),
    };
    this.cached = answer;
    return answer;
  }

  /** The answer as JSON, serialized (and encoded by the transport) once per change. */
  answerData(): SerializedData {
    const answer = this.answer();
    this.cachedData ??= new SerializedData(JSON.stringify(answer));
    return this.cachedData;
  }

  /** Forgets short forms no message in the window names any more. */
  private prune(userIds: number[], protoIds: number[]): void {
    const users = new Set(userIds);
    const protos = new Set(protoIds);
    for (const id of this.users.keys()) if (!users.has(id)) this.users.delete(id);
    for (const id of this.protos.keys()) if (!protos.has(id)) this.protos.delete(id);
  }

  private changed(): void {
    this.cached = undefined;
    this.cachedData = undefined;
  }
}
