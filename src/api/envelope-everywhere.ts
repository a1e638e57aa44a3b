import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Code } from './errors.js';

/**
 * Answers the server would otherwise send without a body, in the API's envelope: a request
 * with an `Expect` the server does not meet (417), and a plain GET of the WebSocket endpoint
 * (426, it takes upgrades only). The latter is a check for the server's request hook: false
 * when it answered the request.
 */
export function registerEnvelopeAnswers(
  app: FastifyInstance,
  webSocketPaths: string[] = ['/ws'],
): (request: FastifyRequest, reply: FastifyReply) => boolean {
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const body = JSON.stringify({ code: Code.BAD_PARAM, description: `unsupported Expect header: only 100-continue is understood` });
    response.writeHead(417, STATUS_CODES[417], {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      connection: 'close',
    });
    response.end(body);
    request.resume();
  });
  return (request, reply) => {
    const { url } = request;
    if (request.headers.upgrade || !webSocketPaths.some((path) => url.startsWith(path)) || !webSocketPaths.includes(url.split('?')[0]!))
      return true;
    void reply
      .status(426)
      .header('upgrade', 'websocket')
      .send({ code: Code.BAD_PARAM, description: 'this is the WebSocket endpoint: connect with an Upgrade: websocket request' });
    return false;
  };
}
