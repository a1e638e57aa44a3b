import nodemailer, { type SendMailOptions, type Transporter } from 'nodemailer';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/**
 * Sends account e-mail. `send` queues and returns at once: a request never waits for a
 * mail server. Call it after the transaction the message reports has committed, so that no
 * message announces something that was rolled back.
 */
export interface Mailer {
  send(message: MailMessage): void;
  /** Where mail goes, for the start banner (no credentials). */
  readonly destination: string;
  /** Resolves once every queued message was delivered or given up. */
  drained(): Promise<void>;
  close(): Promise<void>;
}

/** Connection failures and 4xx answers are worth another try; a 5xx answer is final. */
export function isTemporaryFailure(error: unknown): boolean {
  const e = error as { responseCode?: unknown; code?: unknown };
  if (typeof e.responseCode === 'number') return e.responseCode >= 400 && e.responseCode < 500;
  return (
    typeof e.code === 'string' &&
    ['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNREFUSED', 'ECONNRESET', 'ETLS', 'EPROTOCOL'].includes(e.code)
  );
}

/** The SMTP URL without its password, for logs and the banner. */
export function describeSmtpUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return 'smtp (unparseable URL)';
  }
}

/**
 * Delivery over SMTP through nodemailer, retried after each delay of `retryDelaysMs` while
 * the failure is temporary. Messages waiting for a retry live in memory only: they carry
 * one-time tokens, which the database never holds in the clear.
 */
class SmtpMailer implements Mailer {
  private readonly transport: Transporter;
  private readonly timers = new Set<NodeJS.Timeout>();
  private pending = 0;
  private waiters: (() => void)[] = [];
  private closed = false;
  readonly destination: string;

  constructor(
    url: string,
    private readonly from: string,
    private readonly retryDelaysMs: readonly number[],
    private readonly log: FastifyBaseLogger,
  ) {
    this.transport = nodemailer.createTransport(url);
    this.destination = `SMTP ${describeSmtpUrl(url)} (from ${from})`;
  }

  send(message: MailMessage): void {
    if (this.closed) return;
    this.pending++;
    void this.attempt(message, 0);
  }

  private async attempt(message: MailMessage, tries: number): Promise<void> {
    try {
      await this.transport.sendMail(this.mailOptions(message));
      this.log.info({ subject: message.subject, tries: tries + 1 }, 'mail sent');
      this.settle();
    } catch (error) {
      const delay = this.retryDelaysMs[tries];
      if (!this.closed && delay !== undefined && isTemporaryFailure(error)) {
        this.log.warn({ err: error, subject: message.subject, retryInMs: delay }, 'mail not sent: will try again');
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          void this.attempt(message, tries + 1);
        }, delay);
        timer.unref();
        this.timers.add(timer);
        return;
      }
      this.log.error({ err: error, subject: message.subject, tries: tries + 1 }, 'mail not sent: giving up');
      this.settle();
    }
  }

  /**
   * The recipient goes as an address object, in the header and in an explicit envelope: nodemailer
   * takes it as one address, where a string would be parsed as a list that may name others.
   */
  private mailOptions(message: MailMessage): SendMailOptions {
    const recipient = { name: '', address: message.to };
    // @types/nodemailer types envelope recipients as strings; nodemailer takes address objects there as in `to`.
    const envelope = { from: this.from, to: [recipient] } as unknown as SendMailOptions['envelope'];
    return { from: this.from, to: recipient, envelope, subject: message.subject, text: message.text };
  }

  private settle(): void {
    this.pending--;
    if (this.pending === 0) for (const resolve of this.waiters.splice(0)) resolve();
  }

  drained(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.pending -= this.timers.size;
    this.timers.clear();
    if (this.pending <= 0) for (const resolve of this.waiters.splice(0)) resolve();
    this.transport.close();
  }
}

/** Without SMTP: every message, token included, goes to the log. For development only. */
class LogMailer implements Mailer {
  readonly destination =
    'nowhere: no SMTP server is configured (--smtp-url), each message is written to the log at warn level (development only)';

  constructor(private readonly log: FastifyBaseLogger) {}

  send(message: MailMessage): void {
    // At warn, as the message was not delivered: a quieter log level must not lose it unseen.
    this.log.warn({ mail: message }, 'mail not sent (no SMTP server configured): message written here instead');
  }

  async drained(): Promise<void> {}
  async close(): Promise<void> {}
}

export function createMailer(config: Config, log: FastifyBaseLogger): Mailer {
  if (!config.mail.smtpUrl) {
    log.warn(
      'no SMTP server configured (--smtp-url): account e-mail, one-time tokens included, is written to the log instead; development only',
    );
    return new LogMailer(log);
  }
  return new SmtpMailer(config.mail.smtpUrl, config.mail.from, config.mail.retryDelaysMs, log);
}
