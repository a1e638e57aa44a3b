import { api, ok, ApiFailure } from '../api/client';
import type { Packet } from './table-model';

const BAD_TOKEN = 4401;
const MAX_BACKOFF_MS = 15_000;

export interface ConnectionEvents {
  /** The server said who the connection is: a player of the game (true) or a spectator. */
  ready(player: boolean): void;
  /** Packet number `seq`: each once and in order, across reconnections. */
  packet(seq: number, packet: Packet): void;
  state(state: 'connecting' | 'live'): void;
  /** The game cannot be opened (no such game): no more attempts. */
  failed(error: unknown): void;
}

/**
 * The game server's WebSocket for one game: a token from games.resolve, then `/gs/ws`, again
 * after a loss (with a growing delay) from the packet after the last one applied (`since`), and
 * with a new token when the old one is refused. A player's actions go over it and are answered
 * by their id.
 */
export class GameConnection {
  private socket: WebSocket | undefined;
  private token: { gs_token: string; url: string } | undefined;
  private next = 0;
  private attempts = 0;
  private stopped = false;
  private over = false;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private ids = 0;
  private readonly waiting = new Map<number, { resolve: () => void; reject: (error: unknown) => void }>();

  constructor(
    private readonly gsId: string,
    private readonly gameId: number,
    private readonly on: ConnectionEvents,
  ) {}

  start(): void {
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.socket?.close(1000);
    this.failWaiting(new ApiFailure(-1, 'network'));
  }

  /** Sends an action (game.action's parameters); resolves once the game took it. */
  act(params: Record<string, string | number>): Promise<void> {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) return Promise.reject(new ApiFailure(-1, 'network'));
    const id = ++this.ids;
    return new Promise<void>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      socket.send(JSON.stringify({ type: 'action', id, ...params }));
    });
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    this.on.state('connecting');
    try {
      if (!this.token) {
        const { data } = await ok(api.POST('/api/games.resolve', { body: { gs_id: this.gsId, gs_game_id: this.gameId } }));
        this.token = data;
      }
    } catch (failure) {
      if (failure instanceof ApiFailure && failure.code !== -1) return this.on.failed(failure);
      return this.again();
    }
    if (this.stopped) return;
    const params = new URLSearchParams({ gs_token: this.token.gs_token });
    if (this.next > 0) params.set('since', String(this.next - 1));
    const socket = new WebSocket(
      `${window.location.protocol === 'https:' ? 'wss' : 'ws'}://${window.location.host}${this.token.url}?${params}`,
    );
    this.socket = socket;
    socket.onmessage = (message) => this.receive(String(message.data));
    socket.onclose = (closed) => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      this.failWaiting(new ApiFailure(-1, 'network'));
      if (this.stopped || this.over) return;
      if (closed.code === BAD_TOKEN) this.token = undefined;
      this.again();
    };
  }

  private again(): void {
    this.on.state('connecting');
    const delay = Math.min(MAX_BACKOFF_MS, 500 * 2 ** this.attempts++) * (0.75 + Math.random() / 2);
    this.retry = setTimeout(() => void this.connect(), delay);
  }

  private receive(text: string): void {
    let frame: Record<string, unknown>;
    try {
      frame = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    if (frame.type === 'ready') {
      this.attempts = 0;
      this.on.ready(frame.player === 1);
      this.on.state('live');
    } else if (frame.type === 'packet' && frame.seq === this.next) {
      this.next += 1;
      const packet = frame.packet as Packet;
      if (packet.events.some((event) => event.type === 'game-over')) this.over = true;
      this.on.packet(frame.seq, packet);
    } else if (frame.type === 'answer' && typeof frame.id === 'number') {
      const waiting = this.waiting.get(frame.id);
      this.waiting.delete(frame.id);
      if (!waiting) return;
      if (frame.code === 0) waiting.resolve();
      else waiting.reject(new ApiFailure(frame.code as number, String(frame.description ?? ''), frame.data));
    }
  }

  private failWaiting(error: unknown): void {
    for (const waiting of this.waiting.values()) waiting.reject(error);
    this.waiting.clear();
  }
}
