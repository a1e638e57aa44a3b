/**
 * The game server's WebSocket: `GET /gs/ws?gs_token=...[&since=N]` (the token from
 * games.resolve). Every frame is a JSON object with `type`:
 * - from the server: `ready` ({gs_game_id, user_id, player}) first, then `packet` ({seq, packet})
 *   for every packet of the game after `since` (all of them without it, from the one with
 *   `setup`), each once and in order, live as they are played (a spectator's with the delay);
 *   `answer` ({id, code, description?, data?}) for each action sent; `error` ({description}) for
 *   a frame it cannot read.
 * - from a player: `action` ({id?, action, field_id?, user_id_to?, give_field_ids?, give_cash?,
 *   take_field_ids?, take_cash?}): game.action's parameters; its packets come as `packet` frames.
 */
import type { FastifyInstance } from 'fastify';
import type {} from '@fastify/websocket';
import type { WebSocket } from 'ws';
import { Value } from '@sinclair/typebox/value';
import { ApiError, Code } from '../api/errors.js';
import type { Services } from '../services.js';
import type { Packet } from './engine/index.js';
import type { Watcher } from './feed.js';
import { actionOf, type SentAction } from './actions.js';
import { play } from './play.js';
import { readGsToken, type GameClaim } from './token.js';
import { gameAction } from './methods.js';

const actionKeys = ['action', 'field_id', 'user_id_to', 'give_field_ids', 'give_cash', 'take_field_ids', 'take_cash'] as const;
/** Actions one connection may have waiting; past it the connection is closed (a player sends one at a time). */
const maxPendingActions = 16;

/** WebSocket close codes of the game server. */
export const GameCloseCode = { BAD_TOKEN: 4401, TOO_SLOW: 4008, TOO_MANY: 4029 } as const;

interface Query {
  gs_token?: string;
  since?: string;
}

export function registerGameSocket(app: FastifyInstance, services: Services): void {
  app.get<{ Querystring: Query }>('/gs/ws', { websocket: true }, (socket, request) => {
    const claim = readGsToken(services, request.query.gs_token);
    if (!claim) {
      socket.close(GameCloseCode.BAD_TOKEN, 'invalid or expired gs_token');
      return;
    }
    const since = /^\d{1,9}$/.test(request.query.since ?? '') ? Number(request.query.since) : -1;
    serve(services, socket, claim, since, request.log);
  });
}

function serve(services: Services, socket: WebSocket, claim: GameClaim, since: number, log: FastifyInstance['log']): void {
  const send = (frame: unknown): void => {
    if (socket.readyState !== socket.OPEN) return;
    if (socket.bufferedAmount > services.config.ws.maxQueueBytes) {
      socket.close(GameCloseCode.TOO_SLOW, 'too slow: packets are waiting');
      return;
    }
    socket.send(JSON.stringify(frame));
  };
  const watcher: Watcher = {
    delayMs: claim.role === 'player' ? 0 : services.config.games.spectatorDelaySeconds * 1000,
    lastSeq: since,
    waiting: [],
    deliver: (seq: number, packet: Packet) => send({ type: 'packet', seq, packet }),
  };
  send({ type: 'ready', gs_game_id: claim.gameId, user_id: claim.userId, player: claim.role === 'player' ? 1 : 0 });
  void services.game.feed.watch(claim.gameId, watcher);

  let alive = true;
  const heartbeat = setInterval(() => {
    if (!alive) return socket.terminate();
    alive = false;
    socket.ping();
  }, services.config.ws.heartbeatSeconds * 1000);
  socket.on('pong', () => (alive = true));
  socket.once('close', () => {
    clearInterval(heartbeat);
    services.game.feed.unwatch(claim.gameId, watcher);
  });

  let pending = 0;
  let calls: Promise<void> = Promise.resolve();
  socket.on('message', (raw, isBinary) => {
    alive = true;
    const frame = isBinary ? undefined : parseFrame(raw.toString());
    if (!frame || frame.type !== 'action')
      return send({ type: 'error', description: 'frames are JSON objects; players send {"type":"action",...}' });
    const id = typeof frame.id === 'string' || typeof frame.id === 'number' ? frame.id : null;
    if (claim.role !== 'player') return send({ type: 'answer', id, code: Code.FORBIDDEN, description: 'spectators do not act' });
    if (++pending > maxPendingActions) return socket.close(GameCloseCode.TOO_MANY, 'too many actions waiting');
    calls = calls.then(async () => {
      try {
        await act(services, claim, frame);
        send({ type: 'answer', id, code: 0 });
      } catch (error) {
        const apiError = error instanceof ApiError ? error : new ApiError(Code.INTERNAL, 'internal server error');
        if (!(error instanceof ApiError)) log.error({ err: error }, 'a game action over the WebSocket failed');
        send({
          type: 'answer',
          id,
          code: apiError.code,
          description: apiError.description,
          ...(apiError.data ? { data: apiError.data } : {}),
        });
      } finally {
        pending -= 1;
      }
    });
  });
}

function parseFrame(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

async function act(services: Services, claim: GameClaim, frame: Record<string, unknown>): Promise<void> {
  const params: Record<string, unknown> = { game_id: claim.gameId };
  for (const key of actionKeys) if (frame[key] !== undefined) params[key] = frame[key];
  if (!Value.Check(gameAction.params, params)) {
    const first = Value.Errors(gameAction.params, params).First();
    const name = first ? first.path.replace(/^\//, '') || 'action' : 'action';
    throw new ApiError(Code.BAD_PARAM, `parameter ${name}: ${first?.message ?? 'invalid'}`);
  }
  await play(services, claim.gameId, { userId: claim.userId, action: actionOf(params as unknown as SentAction) });
}
