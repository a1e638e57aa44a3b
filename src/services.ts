import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import type { Database } from './db/connection.js';
import type { Clock } from './infra/clock.js';
import type { CounterStore } from './infra/counters.js';
import type { AddressKeys } from './infra/address-keys.js';
import type { Bus } from './infra/bus.js';
import type { TokenResolver } from './auth/tokens.js';
import type { Presence } from './users/presence.js';
import type { AuthRuntime } from './auth/index.js';
import type { UsersRuntime } from './users/index.js';
import type { FriendsRuntime } from './friends/index.js';
import type { CatalogRuntime } from './catalog/index.js';
import type { InventoryRuntime } from './inventory/index.js';
import type { ChatRuntime } from './chat/runtime.js';
import type { Mailer } from './mail/mailer.js';
import type { Metrics } from './operations/metrics.js';
import type { TradesRuntime } from './trades/index.js';
import type { MarketRuntime } from './market/index.js';
import type { GameRuntime } from './game/index.js';
import type { RoomsRuntime } from './rooms/index.js';
import type { RealtimeHub } from './realtime/hub.js';
import type { UsersHooks } from './users/hooks.js';
import type { FriendsHooks } from './friends/hooks.js';
import type { InventoryHooks } from './inventory/hooks.js';
import type { PromocodesHooks } from './promocodes/hooks.js';
import type { GameHooks } from './game/hooks.js';

/** What the server shares between its capabilities, built before any of them starts. */
export interface Core {
  config: Config;
  db: Database;
  clock: Clock;
  counters: CounterStore;
  /** Names the per-address counters (keyed with the deployment's secret; see src/infra/address-keys.ts). */
  addressKeys: AddressKeys;
  bus: Bus;
  redis?: Redis;
  log: FastifyBaseLogger;
  tokens: TokenResolver;
  presence: Presence;
  /** Account e-mail (SMTP, or the log when none is configured). */
  mail: Mailer;
  /** Counters of this process (Prometheus): domains count their events with metrics.count. */
  metrics: Metrics;
  /** Realtime connections (/ws): events to every subscriber or one user, `auth` frame counters. */
  realtime: RealtimeHub;
}

/**
 * Everything a method handler may use, built once per server process by `createServer`:
 * the shared core and the runtime each capability's start returned (its caches, timers and
 * per-process state).
 */
export interface Services extends Core {
  auth: AuthRuntime;
  users: UsersRuntime;
  friends: FriendsRuntime;
  catalog: CatalogRuntime;
  inventory: InventoryRuntime;
  chat: ChatRuntime;
  trades: TradesRuntime;
  market: MarketRuntime;
  game: GameRuntime;
  /** The lobby's reactions: invitations counted in `auth` frames, blocked accounts taken out of rooms. */
  rooms: RoomsRuntime;
  /** How a domain makes the ones above it react: the hooks each declares, registered by src/hooks.ts. */
  hooks: { users: UsersHooks; friends: FriendsHooks; inventory: InventoryHooks; promocodes: PromocodesHooks; game: GameHooks };
}

/** What a capability's start returns: its per-process state, and how to end it. */
export interface Runtime {
  stop(): void | Promise<void>;
}

export function nowSeconds(services: Pick<Services, 'clock'>): number {
  return Math.floor(services.clock.now() / 1000);
}
