import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/**
 * Lets pages of the configured origins call the API from a browser: their requests are answered
 * with `Access-Control-Allow-Origin`, and their preflights (`OPTIONS` with
 * `Access-Control-Request-Method`) with the methods and headers a call uses. Any other origin,
 * and every origin when the list is empty (the default), gets no CORS header.
 */
export async function registerCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  if (origins.length === 0) return;
  const allowed = new Set(origins);
  await app.register(cors, {
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin.toLowerCase())),
    methods: ['GET', 'POST'],
    allowedHeaders: ['authorization', 'content-type'],
    exposedHeaders: ['x-request-id', 'retry-after'],
    maxAge: 600,
  });
}
