import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from './config.js';
import { openDatabase, type Database, databaseOptions } from './db/connection.js';
import { migrateToLatest } from './db/migrate.js';
import { createdKeyNotice } from './db/secret-key.js';
import { AddressKeys } from './infra/address-keys.js';
import { systemClock, type Clock } from './infra/clock.js';
import { MemoryCounterStore, RedisCounterStore, type CounterStore } from './infra/counters.js';
import { LocalBus, RedisBus, type Bus } from './infra/bus.js';
import { connectRedis } from './infra/redis.js';
import { TokenResolver, attachSessionCache } from './auth/tokens.js';
import { invalidationsReachUs } from './infra/change-cache.js';
import { Presence } from './users/presence.js';
import { createMailer } from './mail/mailer.js';
import { frameworkErrorAnswers, registerApi } from './api/transport.js';
import { RealtimeHub } from './realtime/hub.js';
import { createRooms } from './rooms/index.js';
import { registerRealtimeRoute } from './realtime/route.js';
import { answerClientError } from './api/client-errors.js';
import { clientAddressCheck, trustFunction } from './api/client-address.js';
import { registerAddressLimits, type AddressCharging } from './api/address-limits.js';
import { registerEnvelopeAnswers } from './api/envelope-everywhere.js';
import { registerDocs } from './api/docs.js';
import { loggerOptions, requestLog, requestLoggerFactory } from './operations/request-log.js';
import { Metrics } from './operations/metrics.js';
import { registerMetricsEndpoints } from './operations/metrics-endpoint.js';
import { readTlsFiles, tlsFilesOf } from './operations/tls.js';
import { registerFrontPage } from './operations/front-page.js';
import { registerDemoMedia, registerWebClient } from './web/index.js';
import { registerCors } from './api/cors.js';
import { domains, allMethods } from './domains.js';
import type { Core, Services } from './services.js';
import { startAuth } from './auth/index.js';
import { startUsers } from './users/index.js';
import { startFriends } from './friends/index.js';
import { startCatalog } from './catalog/index.js';
import { startInventory } from './inventory/index.js';
import { ChatRuntime } from './chat/runtime.js';
import { createTrades } from './trades/index.js';
import { startMessages } from './messages/index.js';
import { createGameRuntime } from './game/index.js';
import { createMarket } from './market/index.js';
import { registeredEmails } from './accounts/queries.js';
import { isShippedDemoWorld } from './world/demo.js';
import { domainHooks } from './hooks.js';

export interface CreateServerOptions {
  clock?: Clock;
  /** An open database to use instead of opening config.databaseUrl (kept open on close). */
  db?: Database;
  /** false silences logs (tests); otherwise pino options or true. */
  logger?: FastifyServerOptions['logger'];
}

export { redactUrl, loggerOptions } from './operations/request-log.js';

const READY_TIMEOUT_MS = 2000;

/** How often Node looks for requests past their time: often enough to enforce the request timeout closely. */
function timeoutCheckInterval(requestTimeoutMs: number): number {
  return Math.min(30_000, Math.max(50, Math.floor(requestTimeoutMs / 10)));
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Builds the whole server: database, shared services, every domain's methods and routes. */
export async function createServer(
  config: Config,
  options: CreateServerOptions = {},
): Promise<{ app: FastifyInstance; services: Services }> {
  const clock = options.clock ?? systemClock;
  const { db, ownsDb } = await openMigratedDatabase(config, options);
  const { redis, redisSubscriber, bus, counters } = connectBus(config, clock);
  const addressKeys = new AddressKeys(db.secrets.derive('address keys'), config.addressSlots);
  const app = createFastify({ config, counters, addressKeys }, options);

  const keyNotice = createdKeyNotice(db.secretKeySource);
  if (keyNotice) app.log.warn({ event: 'secret_key_created' }, keyNotice);

  const presence = new Presence(db, clock, config.onlineWindow, app.log);
  const metrics = new Metrics(allMethods().map((m) => m.name));
  const sessions = await attachSessionCache({ db, redis, bus, clock, metrics });
  const tokens = new TokenResolver({ db, clock, bindToIp: config.bindTokensToIp, cache: sessions.cache });
  const core: Core = {
    config,
    db,
    clock,
    counters,
    addressKeys,
    bus,
    redis,
    log: app.log,
    tokens,
    presence,
    realtime: new RealtimeHub({
      bus,
      db,
      clock,
      presence,
      tokens,
      revocationsReachUs: invalidationsReachUs({ db, redis }),
      config,
      log: app.log,
    }),
    mail: createMailer(config, app.log),
    metrics,
  };

  registerHttpBasics(app, core, redisSubscriber);
  await registerCors(app, config.corsOrigins);

  await core.realtime.start();
  const services = await startCapabilities(core);
  const dispatcher = await registerApi(app, services, allMethods());
  await registerDocs(app, allMethods());
  // After the realtime feed, which registers the WebSocket support a domain's routes may use.
  await registerRealtimeRoute(app, services, dispatcher);
  for (const domain of domains) await domain.routes?.(app, services);

  app.addHook('onClose', async () => {
    await stopCapabilities(services);
    services.realtime.stop();
    await presence.write();
    sessions.detach();
    await services.mail.close();
    db.onQuery(undefined);
    await counters.close();
    await bus.close();
    if (redis) {
      redis.disconnect();
    }
    if (ownsDb) await db.close();
  });

  return { app, services };
}

/** Opens the database (unless one is given) and brings it to the latest schema; on failure nothing stays open. */
async function openMigratedDatabase(config: Config, options: CreateServerOptions): Promise<{ db: Database; ownsDb: boolean }> {
  const ownsDb = !options.db;
  const db = options.db ?? (await openDatabase(config.databaseUrl, databaseOptions(config)));
  try {
    await migrateToLatest(db);
  } catch (error) {
    // A wrong secret key (SecretKeyError) or a failed migration: nothing started.
    if (ownsDb) await db.close();
    throw error;
  }
  return { db, ownsDb };
}

/** The bus between processes and the rate-limit counters: on Redis when it is configured, in this process otherwise. */
function connectBus(config: Config, clock: Clock) {
  const redis = config.redisUrl ? connectRedis(config.redisUrl) : undefined;
  // The bus listens on a connection of its own: a subscribed Redis connection serves nothing else.
  // Named, so that an operator (or a test) finds it in CLIENT LIST.
  const redisSubscriber = redis?.duplicate({ connectionName: `${config.redisPrefix.replace(/[^\w:.-]/g, '_')}bus` });
  let bus: Bus;
  let counters: CounterStore;
  if (redis && redisSubscriber) {
    const redisBus = new RedisBus(redis, redisSubscriber, `${config.redisPrefix}bus:`);
    bus = redisBus;
    counters = new RedisCounterStore(redis, `${config.redisPrefix}count:`);
  } else {
    bus = new LocalBus();
    counters = new MemoryCounterStore(clock);
  }
  return { redis, redisSubscriber, bus, counters };
}

/**
 * Request ids: UUID-shaped, a random part drawn once per process and a count, unique across
 * processes without drawing random bytes for each request.
 */
function requestIds(): () => string {
  const head = randomUUID().slice(0, 24);
  let next = 0;
  return () => head + (next++).toString(16).padStart(12, '0');
}

/** The Fastify instance with the HTTP limits, TLS and logging of the settings; `counters` count unreadable paths to their address. */
function createFastify(charging: AddressCharging, options: CreateServerOptions): FastifyInstance {
  const { config } = charging;
  const tls = tlsFilesOf(config.tls);
  // Node enforces the request timeout only when the headers timeout is no longer: both are set here.
  const nodeServerOptions = {
    maxHeaderSize: config.http.maxHeaderBytes,
    requestTimeout: config.http.requestTimeoutMs,
    headersTimeout: config.http.requestTimeoutMs,
    connectionsCheckingInterval: timeoutCheckInterval(config.http.requestTimeoutMs),
  };
  return Fastify({
    logger: options.logger ?? loggerOptions(config.logLevel),
    trustProxy: trustFunction(config.trustProxy),
    bodyLimit: config.bodyLimit,
    connectionTimeout: config.http.connectionTimeoutMs,
    keepAliveTimeout: config.http.keepAliveTimeoutMs,
    requestTimeout: config.http.requestTimeoutMs,
    routerOptions: { maxParamLength: 200 },
    genReqId: requestIds(),
    http: nodeServerOptions,
    // HTTPS (and WSS) with the same limits; SIGHUP reads the files again (reloadTls).
    ...(tls ? { https: { ...nodeServerOptions, ...readTlsFiles(tls) } } : {}),
    clientErrorHandler: answerClientError,
    frameworkErrors: frameworkErrorAnswers(charging),
    forceCloseConnections: 'idle',
    // Access logs are registerRequestLog's: off unless asked for, slow requests always.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: requestLoggerFactory,
  });
}

/** What every request passes through before the methods (request id, address checks, limits, logs, metrics), and the health checks. */
function registerHttpBasics(app: FastifyInstance, core: Core, redisSubscriber: Core['redis']): void {
  const { config, db, redis } = core;
  const addressCheck = clientAddressCheck(config.trustProxy);
  const limits = registerAddressLimits(app, core);
  const webSocketGet = registerEnvelopeAnswers(app);
  const log = requestLog(app, config);
  // One hook of each kind, in plain callbacks: they run on every request, and each hook
  // Fastify runs, or an async one's promise, costs every request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (addressCheck && !addressCheck(request, reply)) return;
    if (!limits.admit(request, reply) || !webSocketGet(request, reply)) return;
    log.arrived?.(request);
    limits.admitUpgrade(request, reply, done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    limits.answered(request);
    log.answered(request, reply);
    core.metrics.answeredRequest(request, reply);
    done();
  });
  core.metrics.registerHooks(app);
  core.metrics.watchDatabase(db);
  core.metrics.watchWebSockets(app);
  registerMetricsEndpoints(app, core, core.metrics);
  registerDemoMedia(app);
  const clientServed = registerWebClient(app);
  const demoAccounts = { isShippedDemoWorld, registeredEmails: (emails: readonly string[]) => registeredEmails(core.db.kysely, emails) };
  registerFrontPage(app, core, demoAccounts, clientServed ? ['/about'] : ['/', '/about']);

  app.get('/healthz', async () => ({ status: 'ok' }));
  for (const connection of [redis, redisSubscriber])
    connection?.on('error', (error: Error) => app.log.warn({ err: error }, 'redis connection error'));
  app.get('/readyz', async (_request, reply) => {
    try {
      await withTimeout(db.ping(), READY_TIMEOUT_MS);
      if (redis) await withTimeout(redis.ping(), READY_TIMEOUT_MS);
      return { status: 'ok' };
    } catch {
      return reply.status(503).send({ status: 'unavailable' });
    }
  });
}

/**
 * The composition root: starts every capability on the shared core, in dependency order, and
 * assembles their runtimes into the one interface handlers use. The chat reads users and
 * prototypes through the others, so it starts once they are all in place.
 */
async function startCapabilities(core: Core): Promise<Services> {
  const auth = await startAuth(core);
  const users = await startUsers(core);
  const friends = await startFriends(core);
  const catalog = await startCatalog(core);
  const inventory = await startInventory(core);
  const chat = new ChatRuntime(core);
  const trades = createTrades();
  const market = createMarket();
  const game = createGameRuntime();
  const rooms = createRooms();
  const services: Services = { ...core, auth, users, friends, catalog, inventory, chat, trades, market, game, rooms, hooks: domainHooks };
  await chat.start(services);
  trades.start(services);
  startMessages(core);
  market.start(services);
  await game.start(services);
  await rooms.start(services);
  return services;
}

/** Stops every capability, in the reverse of start order. */
async function stopCapabilities(services: Services): Promise<void> {
  for (const runtime of [
    services.rooms,
    services.game,
    services.market,
    services.trades,
    services.chat,
    services.inventory,
    services.catalog,
    services.friends,
    services.users,
    services.auth,
  ])
    await runtime.stop();
}
