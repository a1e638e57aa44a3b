import { randomUUID } from 'node:crypto';
import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { ResolvedSession } from '../auth/index.js';
import type { Services } from '../services.js';
import { ApiError, Code } from '../api/errors.js';
import { TOO_DEEP, nestedDeeperThan } from '../api/depth.js';
import { bearerCredentials, tokenParameterProblem } from '../api/bearer.js';
import { resultJson, type MethodDispatcher } from '../api/dispatch.js';
import { loadUsers } from '../users/index.js';
import { CloseCode, framesFor, type Connection, type FeedFormat } from './hub.js';
import { PONG, eventFrame, openFrame, parseClientFrame } from './extws.js';
import { lastOf } from '../infra/elements.js';

/** Topics a connection may subscribe to with `subs`; others are ignored. */
const TOPICS = new Set(['gchat', 'rooms']);

interface FeedQuery {
  access_token?: string;
  subs?: string;
  format?: string;
  id_last?: string;
}

function tokenOf(request: FastifyRequest<{ Querystring: FeedQuery }>): string | undefined {
  const param = request.query.access_token;
  if (typeof param === 'string' && param !== '') return param;
  return bearerCredentials(request.headers.authorization);
}

function topicsOf(subs: unknown): Set<string> {
  if (typeof subs !== 'string') return new Set();
  return new Set(
    subs
      .split(',')
      .map((s) => s.trim())
      .filter((s) => TOPICS.has(s)),
  );
}

function idLastOf(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^\d{1,16}$/.test(value)) return undefined;
  return Number(value);
}

/**
 * The realtime feed: `GET /ws?access_token=...&subs=gchat,rooms[&id_last=N][&format=json]`
 * upgraded to a WebSocket. The token is optional; with one, the connection also receives the
 * events meant for its user, and the user counts as online while connected.
 *
 * ExtWS framing (the default, what the reference service's clients speak): `1{id,
 * idle_timeout}` first, then for a signed-in connection `4auth{status: 1, user_data,
 * counters}`, then `4status{status: {online, time, streams, sct, ...}}` (again whenever the number online
 * changes), then `4events{events: [{id, type, ...}], messages?, users_data?, item_protos?,
 * id_last_given}` as things happen (with `id_last`, first every kept event after it). The server pings with `2` and expects `3`
 * (or any frame) before the next heartbeat; a client may ping with `2` too. A client frame
 * `4api[method, params]` calls a method with the connection's token and is answered by
 * `4api{method, code, data?, description?}`.
 *
 * `format=json`: frames are `{event, data}`: `ready` ({subs, user_id?}) first, then
 * `gchat.add`, `gchat.status`, `gchat.delete`, `status` (when the number online changes) and
 * any user event; the heartbeat is a WebSocket ping; client frames are ignored.
 */
export async function registerRealtimeRoute(app: FastifyInstance, services: Services, dispatcher: MethodDispatcher): Promise<void> {
  const hub = services.realtime;
  const idleTimeout = services.config.ws.heartbeatSeconds * 2;
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
    const format: FeedFormat = request.query.format === 'json' ? 'json' : 'extws';
    const connection: Connection = { socket, format, subs: topicsOf(request.query.subs), alive: true, held: [] };
    const tokenProblem = tokenParameterProblem((request.query as Record<string, unknown>).access_token);
    if (tokenProblem) {
      socket.close(CloseCode.INVALID_TOKEN, `access_token ${tokenProblem}`);
      return;
    }
    const token = tokenOf(request);
    let calls: Promise<unknown> = Promise.resolve();
    socket.on('message', (raw, isBinary) => {
      connection.alive = true;
      if (format !== 'extws' || isBinary) return;
      const frame = parseClientFrame(raw.toString());
      if (frame.kind === 'ping') hub.send(connection, PONG);
      else if (frame.kind === 'event' && frame.event === 'api') {
        // Calls run one after another, each answered before the next starts.
        calls = calls
          .then(() => hub.answerCall(connection, () => answerApi(frame.data)))
          .catch((err) => request.log.error({ err }, 'realtime api call failed'));
      }
    });
    socket.on('pong', () => (connection.alive = true));

    const answerApi = async (data: unknown): Promise<string> => {
      const [name, params] = Array.isArray(data) ? data : [];
      const method = typeof name === 'string' ? name : '';
      const isObject = params !== null && typeof params === 'object' && !Array.isArray(params);
      const raw = isObject ? (params as Record<string, unknown>) : {};
      let answer: string;
      try {
        // As an HTTP request's JSON body: refused before anything is done with it.
        if (!isObject && params !== undefined && params !== null) throw new ApiError(Code.BAD_PARAM, 'the parameters must be an object');
        if (nestedDeeperThan(raw)) throw new ApiError(Code.BAD_PARAM, `the parameters object ${TOO_DEEP}`);
        const { answer: data, charge } = await dispatcher.invoke({
          name: method,
          raw,
          ip: request.ip,
          requestId: randomUUID(),
          log: request.log,
          token: () => token,
        });
        const result = resultJson(data);
        answer = `{"method":${JSON.stringify(method)},"code":0${result === undefined ? '' : `,"data":${result}`}}`;
        charge?.settle(Buffer.byteLength(answer));
      } catch (error) {
        const apiError = error instanceof ApiError ? error : new ApiError(Code.INTERNAL, 'internal server error');
        if (!(error instanceof ApiError)) request.log.error({ err: error }, 'unexpected error in a realtime api call');
        answer = JSON.stringify({
          method,
          code: apiError.code,
          description: apiError.description,
          ...(apiError.data !== undefined ? { data: apiError.data } : {}),
        });
      }
      return eventFrame('api', answer);
    };

    // A session that ends while its token is being resolved may not be seen ended by the resolution.
    const sessionChanges = hub.sessionChanges;
    let session: ResolvedSession | undefined;
    if (token !== undefined) {
      session = (await services.tokens.resolveSession(token, request.ip)) ?? undefined;
      // A session an app obtained through OAuth reaches the HTTP methods of its scopes only.
      if (!session || session.caller.scopes !== undefined) {
        socket.close(CloseCode.INVALID_TOKEN, 'invalid access token');
        return;
      }
    }
    if (socket.readyState !== socket.OPEN) return;
    connection.caller = session?.caller;
    connection.userId = session?.caller.userId;
    connection.expiresAt = session?.expiresAt;
    const userId = connection.userId;
    // Events from now on are held until the first frames are out.
    hub.add(connection);
    if (session && hub.sessionChanges !== sessionChanges) void hub.recheckSessions([connection]);
    const recorded = userId === undefined ? undefined : services.presence.connection(userId, true);
    socket.once('close', () => {
      hub.remove(connection);
      if (userId !== undefined) void services.presence.connection(userId, false);
    });

    let after = 0;
    try {
      if (format === 'json') {
        hub.send(
          connection,
          JSON.stringify({ event: 'ready', data: { subs: [...connection.subs], ...(userId !== undefined ? { user_id: userId } : {}) } }),
        );
        await recorded;
        // Told the count it would have seen: its first `status` frame is the first change.
        connection.online = await hub.onlineCount();
      } else {
        hub.send(connection, openFrame(randomUUID(), idleTimeout));
        if (userId !== undefined) {
          const [users, fields, counters] = await Promise.all([
            loadUsers(services, [userId], { form: 'full' }),
            hub.authUserFields(userId),
            hub.authCounters(userId),
          ]);
          // The reference clients read these three of their own account unconditionally (Zakovskiy/monopolyone.py):
          // the picture's key (empty: the default), online (the connection makes it so), and a rank (hidden when none).
          const userData = { avatar_key: '', online: 1, rank: { hidden: 1 }, ...users.get(userId), ...fields };
          hub.send(connection, eventFrame('auth', JSON.stringify({ status: 1, user_data: userData, counters })));
        }
        await recorded;
        hub.sendStatus(connection, await hub.onlineCount());
        const idLast = idLastOf(request.query.id_last);
        if (idLast !== undefined) {
          const missed = hub.since(connection, idLast);
          if (missed.length > 0) {
            for (const frame of framesFor(format, missed)) hub.send(connection, frame);
            after = lastOf(missed).seq;
          }
        }
      }
    } finally {
      hub.release(connection, after);
    }
    if (recorded !== undefined) await hub.announcePresence().catch((err) => request.log.error({ err }, 'presence could not be announced'));
  });
}
