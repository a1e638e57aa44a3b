import { createServer as createHttpServer, type Server } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import { checkAdminKey } from '../api/admin-key.js';
import { bearerCredentials } from '../api/bearer.js';
import { ApiError, Code } from '../api/errors.js';
import type { Metrics } from './metrics.js';

/** The admin key of a scrape: `X-Admin-Key`, or `Authorization: Bearer` (what Prometheus sends). */
function presentedKey(request: FastifyRequest): string | string[] | undefined {
  const header = request.headers['x-admin-key'];
  if (header !== undefined) return header;
  return bearerCredentials(request.headers.authorization);
}

/** The metrics listener could not open (its address is taken, or its host unknown). */
export class MetricsListenerError extends Error {
  constructor(address: string, cause: Error) {
    super(`cannot listen for metrics on ${address}: ${cause.message}`, { cause });
  }
}

/**
 * Serves the metrics: `GET /metrics` on the API's port to the admin key only, and, with
 * `--metrics-port`, to anyone who reaches a listener of its own (bound to `--metrics-host`,
 * an address only the monitoring network reaches). The listener opens and closes with the server.
 */
export function registerMetricsEndpoints(
  app: FastifyInstance,
  services: Pick<Services, 'config' | 'counters' | 'addressKeys' | 'log'>,
  metrics: Metrics,
): void {
  app.get('/metrics', async (request, reply) => {
    try {
      await checkAdminKey(services, presentedKey(request), request.ip);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const status = error.code === Code.RATE_LIMIT ? 429 : 403;
      return reply.status(status).send({ code: error.code, description: error.description });
    }
    return reply.type(metrics.contentType).send(await metrics.text());
  });

  const { metricsPort, metricsHost } = services.config;
  let listener: Server | undefined;
  if (metricsPort !== undefined) {
    listener = createHttpServer((request, response) => {
      if (request.method !== 'GET' || (request.url ?? '').split('?')[0] !== '/metrics') {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
        return;
      }
      metrics.text().then(
        (text) => response.writeHead(200, { 'content-type': metrics.contentType }).end(text),
        (error: unknown) => {
          services.log.error({ err: error }, 'metrics could not be collected');
          response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics could not be collected\n');
        },
      );
    });
    const server = listener;
    // Opened before the server listens, so a port taken fails the start instead of going unnoticed.
    app.addHook(
      'onReady',
      () =>
        new Promise<void>((resolve, reject) => {
          const refused = (error: Error) => reject(new MetricsListenerError(`${metricsHost}:${metricsPort}`, error));
          server.once('error', refused);
          server.listen(metricsPort, metricsHost, () => {
            server.off('error', refused);
            resolve();
          });
        }),
    );
    app.addHook(
      'onClose',
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          if (server.listening) server.close(() => resolve());
          else resolve();
        }),
    );
  }
  metrics.listenerAddress = () => {
    const address = listener?.address();
    return address && typeof address === 'object' ? address : undefined;
  };
}
