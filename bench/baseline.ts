/**
 * The baselines: a bare Fastify server and a bare node:http server, each answering every
 * /api/<method> request with one fixed JSON body (already serialised), set by the parent
 * process over IPC before each measurement. The body is the scenario's own answer, so every
 * side sends the same bytes. Both listen in this one process and are measured in turn.
 *
 * A third server, the bare Fastify route that first spends a set time computing (`work`,
 * microseconds a request), measures the floor: what ratio to bare Fastify a server reaches on
 * this machine when it does that much more work for each answer.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';

let body = '{"code":0}';
let workMicros = 0;

function bareFastify(work: boolean): FastifyInstance {
  const app = Fastify({ logger: false });
  app.route({
    method: ['GET', 'POST'],
    url: '/api/:method',
    handler: async (_request, reply) => {
      if (work) busyFor(workMicros);
      return reply.type('application/json; charset=utf-8').send(body);
    },
  });
  return app;
}

/** Computes for `micros` microseconds of the clock, as a handler doing that much work would. */
function busyFor(micros: number): void {
  const end = performance.now() + micros / 1000;
  while (performance.now() < end);
}

const app = bareFastify(false);
const worked = bareFastify(true);

/** The bare transport: reads the request to its end and writes the body, nothing else. */
const bare: Server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
});

process.on('message', (message: { body?: string; work?: number }) => {
  if (typeof message.body === 'string') body = message.body;
  if (typeof message.work === 'number') workMicros = message.work;
  process.send!({ set: true });
});

await app.listen({ host: '127.0.0.1', port: 0 });
await worked.listen({ host: '127.0.0.1', port: 0 });
await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
process.send!({
  port: (app.server.address() as AddressInfo).port,
  workedPort: (worked.server.address() as AddressInfo).port,
  nodePort: (bare.address() as AddressInfo).port,
});
