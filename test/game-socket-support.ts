import WebSocket from 'ws';

/** A client of the game server's WebSocket: records every frame, sends actions, waits for packets. */
export class GameSocket {
  readonly frames: any[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: { match: () => boolean; resolve: () => void }[] = [];
  private nextId = 0;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (raw) => {
      this.frames.push(JSON.parse(raw.toString()));
      this.waiters = this.waiters.filter((w) => {
        if (!w.match()) return true;
        w.resolve();
        return false;
      });
    });
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  static async open(baseUrl: string, token: string, since?: number): Promise<GameSocket> {
    const url = `${baseUrl.replace(/^http/, 'ws')}/gs/ws?gs_token=${encodeURIComponent(token)}${since === undefined ? '' : `&since=${since}`}`;
    const socket = new WebSocket(url);
    const client = new GameSocket(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    return client;
  }

  /** The packets received, in order, as [seq, packet]. */
  packets(): [number, any][] {
    return this.frames.filter((f) => f.type === 'packet').map((f) => [f.seq, f.packet]);
  }

  lastSeq(): number {
    return this.packets().at(-1)?.[0] ?? -1;
  }

  /** Resolves once `match` holds (checked now and after each frame); fails after `ms`. */
  until(match: () => boolean, what: string, ms = 10_000): Promise<void> {
    if (match()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out waiting for ${what}; frames: ${JSON.stringify(this.frames).slice(-2000)}`)),
        ms,
      );
      this.waiters.push({
        match,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  untilSeq(seq: number): Promise<void> {
    return this.until(() => this.lastSeq() >= seq, `packet ${seq}`);
  }

  /** Sends an action and answers its `answer` frame. */
  async act(params: Record<string, unknown>): Promise<any> {
    const id = `a${this.nextId++}`;
    this.socket.send(JSON.stringify({ type: 'action', id, ...params }));
    await this.until(() => this.frames.some((f) => f.type === 'answer' && f.id === id), `the answer to ${id}`);
    return this.frames.find((f) => f.type === 'answer' && f.id === id);
  }

  close(): void {
    this.socket.close();
  }
}

/** A move the expected player can always make: the first of these the turn allows, else leaving. */
export function moveFor(list: string[]): string {
  for (const action of [
    'roll-dices',
    'purchase',
    'auction.reject',
    'contract.reject',
    'rent.pay',
    'bank.fee.pay',
    'jail.release.pay',
    'purchase.reject',
    'auction.put',
  ])
    if (list.includes(action)) return action;
  return 'leave';
}
