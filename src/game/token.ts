/**
 * gs_token: what games.resolve gives and the game server's WebSocket takes. It names the game,
 * the account and whether it plays or watches, until when it is good, and is signed with a key
 * derived from the deployment's secret key, so that every process accepts the tokens of every
 * other without storing them.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Services } from '../services.js';

export type Role = 'player' | 'spectator';

export interface GameClaim {
  gameId: number;
  /** 0 for a spectator without an account. */
  userId: number;
  role: Role;
}

/** How long a gs_token lets its holder (re)connect. */
export const gsTokenTtlSeconds = 12 * 3600;

function signature(services: Services, body: string): Buffer {
  return createHmac('sha256', services.db.secrets.derive('game-server-token')).update(body).digest();
}

export function issueGsToken(services: Services, claim: GameClaim): string {
  const expires = Math.floor(services.clock.now() / 1000) + gsTokenTtlSeconds;
  const body = `${claim.gameId}.${claim.userId}.${claim.role === 'player' ? 'p' : 's'}.${expires}`;
  return `${body}.${signature(services, body).toString('base64url')}`;
}

/** The claim of a valid, unexpired token; null for anything else. */
export function readGsToken(services: Services, token: unknown): GameClaim | null {
  if (typeof token !== 'string' || token.length > 200) return null;
  const match = /^(\d{1,15})\.(\d{1,15})\.([ps])\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!match) return null;
  const [, gameId, userId, role, expires, sent] = match as unknown as [string, string, string, string, string, string];
  const expected = signature(services, `${gameId}.${userId}.${role}.${expires}`);
  const given = Buffer.from(sent, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  if (Number(expires) * 1000 <= services.clock.now()) return null;
  return { gameId: Number(gameId), userId: Number(userId), role: role === 'p' ? 'player' : 'spectator' };
}
