import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildLoggerOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;

import { redactUrl } from '../infra/redact.js';

/** Request URLs as logged: secrets in the query string are replaced (by their decoded names). */
export { redactUrl };

/**
 * Logger options: JSON lines, or lines for people (pino-pretty, in a thread of its own) when
 * `pretty` (by default when standard output is a terminal). Secrets in URLs and headers are
 * never written either way.
 */
export function loggerOptions(level: string, pretty = process.stdout.isTTY === true): FastifyServerOptions['logger'] {
  return {
    level,
    redact: ['req.headers.authorization', 'req.headers["x-admin-key"]', 'req.headers.cookie'],
    serializers: {
      req: (req: { method: string; url: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), ip: req.ip }),
    },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
  };
}

export interface RequestLogSettings {
  /** Share of requests logged when answered: 0 none (default), 1 every one, in between a random sample. */
  accessLog: number;
  /** Requests that take at least this long are logged whatever accessLog says, ms. */
  slowRequestMs: number;
}

/** The request log's part of every request, run by the server's one request hook and one response hook. */
export interface RequestLog {
  /** At debug level: logs a request as it arrives (one still in flight shows in the log). */
  arrived?: (request: FastifyRequest) => void;
  answered(request: FastifyRequest, reply: FastifyReply): void;
}

/**
 * One line per answered request that is slow (warn) or sampled by the access log (info),
 * with its request id, method, URL, address, status and time. Fastify's own two lines per
 * request are off: at tens of thousands of requests a second they cost half the server's
 * speed and fill disks. Errors are logged where they are handled, with their request id.
 * At debug level each request is also logged as it arrives.
 */
export function requestLog(app: FastifyInstance, settings: RequestLogSettings): RequestLog {
  const { accessLog, slowRequestMs } = settings;
  const debug = app.log.level === 'debug' || app.log.level === 'trace';
  return {
    arrived: debug ? (request) => request.log.debug({ req: request }, 'incoming request') : undefined,
    answered(request, reply) {
      const ms = reply.elapsedTime;
      if (ms >= slowRequestMs) request.log.warn({ req: request, res: reply, responseTime: ms }, 'slow request');
      else if (accessLog > 0 && (accessLog >= 1 || Math.random() < accessLog))
        request.log.info({ req: request, res: reply, responseTime: ms }, 'request completed');
    },
  };
}

/**
 * A request's logger: the server's with the request id bound, made when the request first
 * logs something (most never do: pino binding the id costs each request a serialisation).
 */
export const requestLoggerFactory: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) =>
  new RequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger;

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Methods on the prototype, not closures per request: one object is all a request that never logs pays. */
class RequestLogger {
  private made?: FastifyBaseLogger;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  private write(level: Level, args: unknown[]): void {
    const logger = this.logger();
    (logger[level] as (...args: unknown[]) => void).apply(logger, args);
  }

  get level(): string {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger().level = level;
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.write('error', args);
  }
  warn(...args: unknown[]): void {
    this.write('warn', args);
  }
  info(...args: unknown[]): void {
    this.write('info', args);
  }
  debug(...args: unknown[]): void {
    this.write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger().child(bindings, options);
  }
}
