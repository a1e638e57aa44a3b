/**
 * The baseline: a bare Fastify server answering every /api/<method> request with one fixed
 * JSON body (already serialised), set by the parent process over IPC before each
 * measurement. The body is the scenario's own answer, so both sides send the same bytes.
 */
import Fastify from 'fastify';

let body = '{"code":0}';
const app = Fastify({ logger: false });
app.route({
  method: ['GET', 'POST'],
  url: '/api/:method',
  handler: async (_request, reply) => reply.type('application/json; charset=utf-8').send(body),
});

process.on('message', (message: { body?: string }) => {
  if (typeof message.body === 'string') {
    body = message.body;
    process.send!({ set: true });
  }
});

await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.send!({ port: typeof address === 'object' && address ? address.port : 0 });
