import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
}

/**
 * A real SMTP server on loopback (the smtp-server package) that keeps what it receives.
 * `refuse` lists answers for the next deliveries (an SMTP code each: 451 is temporary, 550
 * final); `holdMs` makes it take that long to accept a message.
 */
export class MailCatcher {
  readonly received: ReceivedMail[] = [];
  /** The RCPT TO commands as the client sent them (the envelope the server reports has its domains decoded). */
  readonly rcptCommands: string[] = [];
  /** Deliveries attempted (accepted or refused). */
  attempts = 0;
  refuse: number[] = [];
  holdMs = 0;
  private taken = new Set<ReceivedMail>();
  private listeners: (() => void)[] = [];

  private constructor(
    private readonly server: SMTPServer,
    readonly url: string,
  ) {}

  static async start(): Promise<MailCatcher> {
    const holder: { catcher?: MailCatcher } = {};
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      // Only the client's RCPT commands are kept, as sent.
      logger: {
        debug: (meta: { command?: string }, ...line: unknown[]) => {
          if (meta?.command === 'RCPT') holder.catcher?.rcptCommands.push(line.slice(1).join(' '));
        },
        info: () => {},
        warn: () => {},
        error: () => {},
        trace: () => {},
        fatal: () => {},
      } as unknown as boolean,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on(
          'end',
          () =>
            void holder.catcher!.accept(
              Buffer.concat(chunks),
              session.envelope.rcptTo.map((r) => r.address),
              callback,
            ),
        );
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.server.address() as AddressInfo;
    holder.catcher = new MailCatcher(server, `smtp://127.0.0.1:${port}`);
    return holder.catcher;
  }

  private async accept(raw: Buffer, to: string[], callback: (error?: Error | null) => void): Promise<void> {
    this.attempts++;
    if (this.holdMs > 0) await new Promise((resolve) => setTimeout(resolve, this.holdMs));
    const refusal = this.refuse.shift();
    if (refusal !== undefined) {
      const error = Object.assign(new Error(refusal >= 500 ? 'mailbox unavailable' : 'try again later'), { responseCode: refusal });
      return callback(error);
    }
    const parsed = await simpleParser(raw);
    this.received.push({ from: parsed.from?.text ?? '', to, subject: parsed.subject ?? '', text: parsed.text ?? '' });
    callback();
    for (const listener of this.listeners.splice(0)) listener();
  }

  /** The next message to `to` not yet returned by this method (waits up to `timeoutMs`). */
  async next(to: string, timeoutMs = 10_000): Promise<ReceivedMail> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const mail = this.received.find((m) => !this.taken.has(m) && m.to.includes(to));
      if (mail) {
        this.taken.add(mail);
        return mail;
      }
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `no mail to ${to} within ${timeoutMs} ms (received: ${this.received.map((m) => `${m.to} ${m.subject}`).join('; ')})`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.listeners.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Messages to `to` received so far, whether returned by `next` or not. */
  to(address: string): ReceivedMail[] {
    return this.received.filter((m) => m.to.includes(address));
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The one-time token in a message: the indented line of 43 URL-safe characters. */
export function tokenIn(mail: ReceivedMail): string {
  const match = /^ {2}([A-Za-z0-9_-]{43})$/m.exec(mail.text);
  if (!match) throw new Error(`no token in: ${mail.text}`);
  return match[1]!;
}

/** Mail settings of a test server that sends to `catcher`, retrying quickly. */
export function mailConfig(catcher: MailCatcher) {
  return { mail: { smtpUrl: catcher.url, from: 'Game <game@test.example>', retryDelaysMs: [50, 100, 200] } };
}
