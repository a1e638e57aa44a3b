import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { Caller } from '../api/method.js';
import type { Services } from '../services.js';
import { CloseCode, type Subscriber } from './feed.js';

/** Topics a connection may subscribe to with `subs`; others are ignored. */
const TOPICS = new Set(['gchat']);

interface FeedQuery {
  access_token?: string;
  subs?: string;
}

function tokenOf(request: FastifyRequest<{ Querystring: FeedQuery }>): string | undefined {
  const param = request.query.access_token;
  if (typeof param === 'string' && param !== '') return param;
  const header = request.headers.authorization;
  if (typeof header === 'string' && header.startsWith('Bearer ') && header.slice(7).trim() !== '') return header.slice(7).trim();
  return undefined;
}

function topicsOf(subs: unknown): Set<string> {
  if (typeof subs !== 'string') return new Set();
  return new Set(subs.split(',').map((s) => s.trim()).filter((s) => TOPICS.has(s)));
}

/**
 * The realtime feed: `GET /ws?access_token=...&subs=gchat` upgraded to a WebSocket. The token
 * is optional; with one, the connection also receives the bot messages that mention its
 * user, and the user counts as online while connected. Frames from the server are JSON
 * `{event, data}`: first `ready` ({subs, user_id?}) once subscribed, then `gchat.add`,
 * `gchat.status` and `gchat.delete`. Frames from the client are ignored (at most
 * `ws.maxFrameBytes` each).
 */
export async function registerFeedRoute(app: FastifyInstance, services: Services): Promise<void> {
  await app.register(websocket, {
    options: { maxPayload: services.config.ws.maxFrameBytes },
    // On shutdown every client is told why (the default closes without a code).
    preClose(this: FastifyInstance, done: () => void) {
      for (const client of this.websocketServer.clients) client.close(CloseCode.SHUTDOWN, 'server shutting down');
      this.websocketServer.close();
      done();
    },
    // Socket-level errors (an oversized frame, a reset connection) end that connection only.
    errorHandler: (error: Error, socket: WebSocket, request: FastifyRequest) => {
      request.log.debug({ err: error }, 'realtime connection error');
      if (socket.readyState === socket.OPEN) socket.close(1011, 'internal error');
    },
  });

  app.get<{ Querystring: FeedQuery }>('/ws', { websocket: true }, async (socket, request) => {
    const feed = services.chat.feed;
    // Until the token is resolved, incoming frames are ignored like all client frames.
    socket.on('message', () => undefined);
    const token = tokenOf(request);
    let caller: Caller | undefined;
    if (token !== undefined) {
      caller = (await services.tokens.resolve(token, request.ip)) ?? undefined;
      if (!caller) {
        socket.close(CloseCode.INVALID_TOKEN, 'invalid access token');
        return;
      }
    }
    const userId = caller?.userId;
    if (socket.readyState !== socket.OPEN) return;

    const subscriber: Subscriber = { socket, userId, caller, subs: topicsOf(request.query.subs), alive: true };
    feed.add(subscriber);
    if (userId !== undefined) services.presence.connection(userId, true);
    // Tells the client it is subscribed (and as whom): events from now on reach it.
    socket.send(JSON.stringify({ event: 'ready', data: { subs: [...subscriber.subs], ...(userId !== undefined ? { user_id: userId } : {}) } }));
    socket.once('close', () => {
      feed.remove(subscriber);
      if (userId !== undefined) services.presence.connection(userId, false);
    });
  });
}
