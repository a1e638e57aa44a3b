import type { FastifyInstance, FastifyServerOptions } from 'fastify';

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

/**
 * One line per answered request that is slow (warn) or sampled by the access log (info),
 * with its request id, method, URL, address, status and time. Fastify's own two lines per
 * request are off: at tens of thousands of requests a second they cost half the server's
 * speed and fill disks. Errors are logged where they are handled, with their request id.
 * At debug level each request is also logged as it arrives.
 */
export function registerRequestLog(app: FastifyInstance, settings: RequestLogSettings): void {
  const { accessLog, slowRequestMs } = settings;
  // At debug level a request is also logged as it arrives (one still in flight shows in the log).
  if (app.log.level === 'debug' || app.log.level === 'trace')
    app.addHook('onRequest', (request, _reply, done) => {
      request.log.debug({ req: request }, 'incoming request');
      done();
    });
  // A plain callback: this runs on every request, and an async hook costs a promise each time.
  app.addHook('onResponse', (request, reply, done) => {
    const ms = reply.elapsedTime;
    if (ms >= slowRequestMs) request.log.warn({ req: request, res: reply, responseTime: ms }, 'slow request');
    else if (accessLog > 0 && (accessLog >= 1 || Math.random() < accessLog))
      request.log.info({ req: request, res: reply, responseTime: ms }, 'request completed');
    done();
  });
}
