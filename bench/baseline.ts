/**
 * The baselines: a bare Fastify server and a bare node:http server, each answering every
 * /api/<method> request with one fixed JSON body (already serialised), set by the parent
 * process over IPC before each measurement. The body is the scenario's own answer, so every
 * side sends the same bytes. Both listen in this one process and are measured in turn.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';

let body = '{"code":0}';
const app = Fastify({ logger: false });
app.route({
  method: ['GET', 'POST'],
  url: '/api/:method',
  handler: async (_request, reply) => reply.type('application/json; charset=utf-8').send(body),
});

/** The bare transport: reads the request to its end and writes the body, nothing else. */
const bare: Server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    response.end(body);
  });
});

process.on('message', (message: { body?: string }) => {
  if (typeof message.body === 'string') {
    body = message.body;
    process.send!({ set: true });
  }
});

await app.listen({ host: '127.0.0.1', port: 0 });
await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
process.send!({
  port: (app.server.address() as AddressInfo).port,
  nodePort: (bare.address() as AddressInfo).port,
});
