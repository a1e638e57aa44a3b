import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Code } from './errors.js';

/** What a request that never reached a route answers, by the error Node's HTTP parser raised. */
function answerFor(error: NodeJS.ErrnoException): { status: number; description: string } {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, description: 'the request did not arrive in time' };
  if (error.code === 'HPE_HEADER_OVERFLOW') return { status: 431, description: 'the request line and headers are too large' };
  return { status: 400, description: 'malformed HTTP request' };
}

/**
 * Answers requests refused before routing (headers too large, too slow, not HTTP) in the API's
 * envelope, code 2, and closes the connection.
 */
export function answerClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, description } = answerFor(error);
  this.log.debug({ err: error }, 'client error');
  if (socket.writable) {
    const body = JSON.stringify({ code: Code.BAD_PARAM, description });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
