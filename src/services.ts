import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import type { Database } from './db/connection.js';
import type { Clock } from './infra/clock.js';
import type { CounterStore } from './infra/counters.js';
import type { Bus } from './infra/bus.js';
import type { TokenResolver } from './auth/tokens.js';
import type { Presence } from './users/presence.js';
import type { Mailer } from './mail/mailer.js';
import type { Metrics } from './operations/metrics.js';
import type { ExpirySweep } from './trades/expiry.js';

/** Everything a method handler may use, built once per server process. */
export interface Services {
  config: Config;
  db: Database;
  clock: Clock;
  counters: CounterStore;
  bus: Bus;
  redis?: Redis;
  log: FastifyBaseLogger;
  tokens: TokenResolver;
  presence: Presence;
  /** Account e-mail (SMTP, or the log when none is configured). */
  mail: Mailer;
  /** Counters of this process (Prometheus): domains count their events with metrics.count. */
  metrics: Metrics;
  /** Writes expiry into open trades past their time (started by the trades capability). */
  tradeExpiry?: ExpirySweep;
  /** Per-capability state created by a domain's start hook, keyed by domain name. */
  state: Map<string, unknown>;
}

export function nowSeconds(services: Pick<Services, 'clock'>): number {
  return Math.floor(services.clock.now() / 1000);
}
