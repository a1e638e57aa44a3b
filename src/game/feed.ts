/**
 * The live packet stream of games, per process: the connections watching each game (its
 * players at once, spectators with the configured delay), fed from the bus so that a packet
 * played on any process reaches every connection on every other. Packets are numbered in the
 * game (0 is the one with `setup`); each connection is given each number once, in order: what a
 * message skips (one published by another process that has not arrived yet) is read from the
 * database first, and what it repeats is dropped.
 */
import { defineChannel } from '../infra/channels.js';
import type { Services } from '../services.js';
import type { Packet } from './engine/index.js';

/** Packets committed in a game: numbers `first`, `first + 1`, ... */
export interface GamePackets {
  game_id: number;
  first: number;
  packets: Packet[];
}

export const GAME_PACKETS = defineChannel<GamePackets>('game.packets');

export interface Watcher {
  /** Delivers packet number `seq`; never called twice for one number, always in order. */
  deliver(seq: number, packet: Packet): void;
  /** Packets later than the game's time plus this many ms wait (spectators); 0 for players. */
  delayMs: number;
  /** The last number delivered or queued for delivery. */
  lastSeq: number;
  /** Packets not yet due (spectators). */
  waiting: { seq: number; packet: Packet; due: number }[];
}

type LoadPackets = (services: Services, gameId: number) => Promise<Packet[]>;

export class GameFeed {
  private readonly watchers = new Map<number, Set<Watcher>>();
  /** Per game: the work on its watchers, one job after another. */
  private readonly queues = new Map<number, Promise<void>>();
  private unsubscribe: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly services: Services,
    private readonly loadPackets: LoadPackets,
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = this.services.bus.subscribe(GAME_PACKETS, (message) => this.heard(message));
    await this.services.bus.ready([GAME_PACKETS]);
    this.timer = setInterval(() => this.releaseDue(), 100);
    this.timer.unref();
  }

  stop(): void {
    this.unsubscribe?.();
    if (this.timer) clearInterval(this.timer);
    this.watchers.clear();
  }

  /** Tells every process about packets this one committed. */
  async publish(message: GamePackets): Promise<void> {
    if (message.packets.length > 0) await this.services.bus.publish(GAME_PACKETS, message);
  }

  /** Starts feeding `watcher` every packet after its lastSeq: those stored first, then the live ones. */
  watch(gameId: number, watcher: Watcher): Promise<void> {
    let set = this.watchers.get(gameId);
    if (!set) this.watchers.set(gameId, (set = new Set()));
    set.add(watcher);
    return this.inTurn(gameId, () => this.catchUp(gameId, [watcher]));
  }

  unwatch(gameId: number, watcher: Watcher): void {
    const set = this.watchers.get(gameId);
    if (!set) return;
    set.delete(watcher);
    if (set.size === 0) this.watchers.delete(gameId);
  }

  watching(gameId: number): number {
    return this.watchers.get(gameId)?.size ?? 0;
  }

  private heard(message: GamePackets): void {
    if (typeof message?.game_id !== 'number' || !this.watchers.has(message.game_id)) return;
    void this.inTurn(message.game_id, async () => {
      const set = this.watchers.get(message.game_id);
      if (!set) return;
      const behind = [...set].filter((w) => w.lastSeq + 1 < message.first);
      if (behind.length > 0) await this.catchUp(message.game_id, behind);
      for (const watcher of set) message.packets.forEach((packet, i) => this.offer(watcher, message.first + i, packet));
    });
  }

  private async catchUp(gameId: number, watchers: Watcher[]): Promise<void> {
    const packets = await this.loadPackets(this.services, gameId);
    for (const watcher of watchers) packets.forEach((packet, seq) => this.offer(watcher, seq, packet));
  }

  private offer(watcher: Watcher, seq: number, packet: Packet): void {
    if (seq !== watcher.lastSeq + 1) return;
    watcher.lastSeq = seq;
    const due = packet.time.ts_now + watcher.delayMs;
    if (watcher.delayMs === 0 || (watcher.waiting.length === 0 && due <= this.services.clock.now())) watcher.deliver(seq, packet);
    else watcher.waiting.push({ seq, packet, due });
  }

  private releaseDue(): void {
    const now = this.services.clock.now();
    for (const set of this.watchers.values())
      for (const watcher of set)
        while (watcher.waiting.length > 0 && watcher.waiting[0]!.due <= now) {
          const next = watcher.waiting.shift()!;
          watcher.deliver(next.seq, next.packet);
        }
  }

  private inTurn(gameId: number, job: () => Promise<void>): Promise<void> {
    const run = (this.queues.get(gameId) ?? Promise.resolve())
      .then(job)
      .catch((err) => this.services.log.error({ err, gameId }, 'game feed failed'));
    this.queues.set(gameId, run);
    void run.then(() => {
      if (this.queues.get(gameId) === run) this.queues.delete(gameId);
    });
    return run;
  }
}
