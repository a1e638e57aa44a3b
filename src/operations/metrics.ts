import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { AddressInfo } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, Code } from '../api/errors.js';
import type { Database } from '../db/connection.js';
import { elementAt } from '../infra/elements.js';

/**
 * What the domains count, by kind and outcome. A domain that counts a new kind of event adds
 * it here, so every outcome is spelled once and shows (at zero) before it first happens.
 */
export interface DomainEvents {
  craft: 'made';
  trade: 'created' | 'accepted' | 'declined' | 'revoked' | 'cancelled' | 'expired' | 'invalidated';
  opening: 'case' | 'gift' | 'promocode';
  market: 'listed' | 'repriced' | 'cancelled' | 'sold' | 'expired' | 'shop' | 'quick_sell';
}

const DOMAIN_EVENTS: { [K in keyof DomainEvents]: DomainEvents[K][] } = {
  craft: ['made'],
  trade: ['created', 'accepted', 'declined', 'revoked', 'cancelled', 'expired', 'invalidated'],
  opening: ['case', 'gift', 'promocode'],
  market: ['listed', 'repriced', 'cancelled', 'sold', 'expired', 'shop', 'quick_sell'],
};

/** Hit and miss counts an in-memory cache keeps of itself. */
export interface CacheCounts {
  readonly hits: number;
  readonly misses: number;
  readonly size: number;
}

/** Outcomes of the sign-in steps by answer code; any other code counts as `refused`. */
const SIGNIN_OUTCOMES = new Map<number, string>([
  [Code.OK, 'ok'],
  [Code.AUTH, 'wrong_credentials'],
  [Code.BAD_PARAM, 'bad_request'],
  [Code.RATE_LIMIT, 'rate_limited'],
  [Code.CAPTCHA, 'captcha_required'],
  [Code.TOTP_REQUIRED, 'second_factor_required'],
  [Code.GLOBAL_BAN, 'blocked'],
  [Code.BAD_TOTP_SESSION, 'bad_second_factor_session'],
  [Code.TOTP_TOO_OFTEN, 'second_factor_too_often'],
]);
const SIGNIN_STEPS = new Map([
  ['auth.signin', 'password'],
  ['auth.totpVerify', 'second_factor'],
]);

/** Bounds of the latency histograms, seconds: from a cached read to a stalled request. */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const QUERY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** The answer code of an error as the transport answers it (see toApiError there). */
function answerCodeOf(error: FastifyError | Error): number {
  if (error instanceof ApiError) return error.code;
  const status = (error as { statusCode?: number }).statusCode;
  return status !== undefined && status >= 400 && status < 500 ? Code.BAD_PARAM : Code.INTERNAL;
}

/**
 * A histogram kept as plain numbers per series and handed to prom-client's registry when
 * scraped. prom-client's own Histogram and Counter hash and check their labels on every
 * observation: with a request counted and timed, that measured 0.8 µs per request, here a
 * small fraction of it.
 */
class SeriesHistogram {
  private readonly series = new Map<string, { buckets: Float64Array; sum: number; count: number }>();

  constructor(
    readonly name: string,
    private readonly help: string,
    private readonly label: string,
    private readonly bounds: readonly number[],
  ) {}

  /** The recorder of one series (made once, then called on every observation). */
  recorder(value: string): (seconds: number) => void {
    let series = this.series.get(value);
    if (series === undefined) {
      series = { buckets: new Float64Array(this.bounds.length), sum: 0, count: 0 };
      this.series.set(value, series);
    }
    const { bounds } = this;
    const kept = series;
    return (seconds) => {
      const i = bounds.findIndex((bound) => seconds <= bound);
      if (i !== -1) kept.buckets[i] = elementAt(kept.buckets, i) + 1;
      kept.sum += seconds;
      kept.count++;
    };
  }

  /** The metric as prom-client's registry formats it: cumulative buckets, sum and count per series. */
  asMetric(): Metric {
    const { name, help, label, bounds, series } = this;
    const get = async () => {
      const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
      for (const [value, kept] of series) {
        let cumulative = 0;
        bounds.forEach((bound, i) => {
          cumulative += elementAt(kept.buckets, i);
          values.push({ labels: { le: bound, [label]: value }, value: cumulative, metricName: `${name}_bucket` });
        });
        values.push({ labels: { le: '+Inf', [label]: value }, value: kept.count, metricName: `${name}_bucket` });
        values.push({ labels: { [label]: value }, value: kept.sum, metricName: `${name}_sum` });
        values.push({ labels: { [label]: value }, value: kept.count, metricName: `${name}_count` });
      }
      return { name, help, type: 'histogram', aggregator: 'sum', values };
    };
    return { name, help, type: 'histogram', aggregator: 'sum', get, reset: () => series.clear() } as unknown as Metric;
  }
}

interface MethodMetrics {
  observe: (seconds: number) => void;
  /** Answers by code. */
  byCode: Map<number, number>;
}

/**
 * The server's metrics in the Prometheus text format (prom-client), one registry per server.
 * Per request the cost is two map lookups and a histogram step on plain numbers; everything
 * else is read when scraped.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requestSeconds = new SeriesHistogram(
    'game_platform_request_duration_seconds',
    'Time from receiving an API call to having answered it, by method',
    'method',
    REQUEST_BUCKETS,
  );
  private readonly querySeconds = new SeriesHistogram(
    'game_platform_db_query_duration_seconds',
    'Database statements by time taken and outcome (ok, error)',
    'outcome',
    QUERY_BUCKETS,
  );
  private readonly rateLimited: Counter<'method'>;
  private readonly signins: Counter<'step' | 'outcome'>;
  private readonly domainEvents: Counter<'kind' | 'outcome'>;
  private readonly byMethod = new Map<string, MethodMetrics>();
  private readonly knownMethods: Set<string>;
  private readonly caches = new Map<string, () => CacheCounts>();
  /** Where the metrics' own listener (--metrics-port) listens, once it does. */
  listenerAddress: () => AddressInfo | undefined = () => undefined;
  /** Answer codes of requests that failed, read when they are answered. */
  private readonly failures = new WeakMap<FastifyRequest, number>();

  constructor(methodNames: string[]) {
    this.knownMethods = new Set(methodNames);
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const byMethod = this.byMethod;
    new Counter({
      name: 'game_platform_requests_total',
      help: 'API calls answered, by method and answer code (0 is success)',
      labelNames: ['method', 'code'],
      registers,
      collect() {
        this.reset();
        for (const [method, metrics] of byMethod)
          for (const [code, count] of metrics.byCode) this.inc({ method, code: String(code) }, count);
      },
    });
    this.registry.registerMetric(this.requestSeconds.asMetric());
    this.registry.registerMetric(this.querySeconds.asMetric());
    this.rateLimited = new Counter({
      name: 'game_platform_rate_limited_total',
      help: 'API calls refused by a rate limit (answer code 7), by method',
      labelNames: ['method'],
      registers,
    });
    this.signins = new Counter({
      name: 'game_platform_signins_total',
      help: 'Sign-in attempts by step (password, second_factor) and outcome',
      labelNames: ['step', 'outcome'],
      registers,
    });
    this.domainEvents = new Counter({
      name: 'game_platform_domain_events_total',
      help: 'Crafts, trades and openings by kind and outcome',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    for (const [kind, outcomes] of Object.entries(DOMAIN_EVENTS))
      for (const outcome of outcomes) this.domainEvents.inc({ kind, outcome }, 0);
    const caches = this.caches;
    const cacheGauge = (name: string, help: string, read: (counts: CacheCounts) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['cache'],
        registers,
        collect() {
          this.reset();
          for (const [cache, counts] of caches) this.set({ cache }, read(counts()));
        },
      });
    // Counts since the cache was made, as gauges: a cache made anew (a domain restarted) starts again from zero.
    cacheGauge('game_platform_cache_hits', 'Lookups an in-memory cache answered, by cache', (c) => c.hits);
    cacheGauge(
      'game_platform_cache_misses',
      'Lookups an in-memory cache could not answer (read from the database), by cache',
      (c) => c.misses,
    );
    cacheGauge('game_platform_cache_entries', 'Entries held by an in-memory cache, by cache', (c) => c.size);
  }

  /** Counts a domain event (a craft made, a trade accepted...). */
  count<K extends keyof DomainEvents>(kind: K, outcome: DomainEvents[K], times = 1): void {
    this.domainEvents.inc({ kind, outcome }, times);
  }

  /** Reports a cache's counts when scraped, under `name`, until the returned function is called. */
  watchCache(name: string, counts: () => CacheCounts): () => void {
    this.caches.set(name, counts);
    return () => {
      if (this.caches.get(name) === counts) this.caches.delete(name);
    };
  }

  /** Times every statement of the database, and reports its connection pool when it has one. */
  watchDatabase(db: Database): void {
    const ok = this.querySeconds.recorder('ok');
    const error = this.querySeconds.recorder('error');
    db.onQuery((ms, failed) => (failed ? error : ok)(ms / 1000));
    const poolUse = db.poolUse;
    if (!poolUse) return;
    const pool = () => poolUse.call(db);
    const registers = [this.registry];
    const poolGauge = (name: string, help: string, read: (use: ReturnType<typeof pool>) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(pool()));
        },
      });
    poolGauge('game_platform_db_pool_connections', 'Database connections open (busy or idle)', (use) => use.total);
    poolGauge('game_platform_db_pool_idle', 'Database connections open and idle', (use) => use.idle);
    poolGauge('game_platform_db_pool_waiting', 'Queries waiting for a database connection', (use) => use.waiting);
  }

  /** Reports the WebSocket connections of the server and the bytes queued to them. */
  watchWebSockets(app: FastifyInstance): void {
    const registers = [this.registry];
    const clients = () => (app as { websocketServer?: { clients: Set<{ bufferedAmount: number }> } }).websocketServer?.clients;
    new Gauge({
      name: 'game_platform_websocket_connections',
      help: 'Open WebSocket connections',
      registers,
      collect() {
        this.set(clients()?.size ?? 0);
      },
    });
    new Gauge({
      name: 'game_platform_websocket_queued_bytes',
      help: 'Bytes queued to WebSocket connections and not yet written to their sockets',
      registers,
      collect() {
        let bytes = 0;
        for (const client of clients() ?? []) bytes += client.bufferedAmount;
        this.set(bytes);
      },
    });
  }

  /** Notes the answer code of every failed API call (answered, then, counts it). */
  registerHooks(app: FastifyInstance): void {
    // A plain callback: an async hook costs a promise each time.
    app.addHook('onError', (request, _reply, error, done) => {
      this.failures.set(request, answerCodeOf(error));
      done();
    });
  }

  /** Counts and times an API call as it is answered; the server's response hook runs it for every request. */
  answeredRequest(request: FastifyRequest, reply: FastifyReply): void {
    // Only the API route has a `method` parameter: read it rather than request.routeOptions, which Fastify builds anew each read.
    if (typeof (request.params as { method?: unknown } | undefined)?.method === 'string') this.answered(request, reply.elapsedTime);
  }

  private answered(request: FastifyRequest, ms: number): void {
    const asked = (request.params as { method: string }).method;
    const method = this.knownMethods.has(asked) ? asked : 'unknown';
    const code = this.failures.get(request) ?? Code.OK;
    const metrics = this.forMethod(method);
    metrics.byCode.set(code, (metrics.byCode.get(code) ?? 0) + 1);
    metrics.observe(ms / 1000);
    if (code === Code.OK) {
      if (!SIGNIN_STEPS.has(method)) return;
    } else if (code === Code.RATE_LIMIT) {
      this.rateLimited.inc({ method });
    }
    const step = SIGNIN_STEPS.get(method);
    if (step !== undefined) this.signins.inc({ step, outcome: SIGNIN_OUTCOMES.get(code) ?? 'refused' });
  }

  private forMethod(method: string): MethodMetrics {
    let metrics = this.byMethod.get(method);
    if (metrics === undefined) {
      metrics = { observe: this.requestSeconds.recorder(method), byCode: new Map() };
      this.byMethod.set(method, metrics);
    }
    return metrics;
  }

  /** The metrics in the Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
