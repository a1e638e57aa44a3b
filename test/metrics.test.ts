import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { DB_KIND, startTestServer } from './helpers.js';
import { PASSWORD, json, listen, transportWorld, wire } from './transport-support.js';
import { callOk, catalogWorld, tokenFor, user } from './item-fixtures.js';
import { sweepExpiredTrades } from '../src/trades/expiry.js';
import type { World } from '../src/world/schema.js';

const ADMIN_KEY = 'metrics-admin-key-0123456789';

interface Family {
  name: string;
  type: string;
  metrics: { labels?: Record<string, string>; value?: string; count?: string; sum?: string; buckets?: Record<string, string> }[];
}

/** A world where alice (user 1) owns ten class-1 cards she can craft into a class-2 one. */
function metricsWorld(): World {
  const world = transportWorld();
  return { ...world, items: [{ user_id: 1, item_proto_id: 1, copies: 10 }] };
}

interface Scraped extends Map<string, Family> {
  text: string;
}

/**
 * Scrapes and parses with a parser of the format (prom-client itself has none; this one
 * follows Prometheus's prom2json and throws on a malformed line). Returns the families by name.
 */
async function scrape(url: string, headers: Record<string, string> = { 'x-admin-key': ADMIN_KEY }): Promise<Scraped> {
  const response = await fetch(url, { headers });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  const text = await response.text();
  const families = parsePrometheusTextFormat(text) as Family[];
  return Object.assign(new Map(families.map((f) => [f.name, f])), { text });
}

/**
 * The count of a histogram's series: the parser merges a histogram's labelled series into one,
 * so the `_count` sample is read from the text (whose syntax the parser has checked).
 */
function histogramCount(scraped: Scraped, family: string, label: string, value: string): number {
  assert.ok(scraped.has(family), `${family} is exposed`);
  const line = scraped.text.split('\n').find((l) => l.startsWith(`${family}_count{${label}="${value}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** The value of the sample of `family` whose labels include `labels` (0 when there is none). */
function sample(families: Scraped, family: string, labels: Record<string, string> = {}): number {
  const found = families.get(family);
  assert.ok(found, `${family} is exposed`);
  const match = found.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return match ? Number(match.value ?? match.count) : 0;
}

test(
  'GET /metrics: only to the admin key; requests, sign-ins, crafts, rate limits, caches, database, WebSockets, process',
  { timeout: 120_000 },
  async () => {
    const server = await startTestServer({
      world: metricsWorld(),
      config: { adminKey: ADMIN_KEY, rateLimitPerIp: { max: 40, windowSeconds: 60 } },
    });
    try {
      const base = await listen(server);
      const url = `${base}/metrics`;

      // Off the public API.
      for (const headers of <Record<string, string>[]>[
        {},
        { 'x-admin-key': 'not-the-admin-key-at-all' },
        { authorization: 'Bearer not-the-admin-key-at-all' },
      ]) {
        const refused = await wire(url, { headers });
        assert.equal(refused.status, 403);
        assert.equal(refused.body.code, 1);
        assert.doesNotMatch(refused.text, /game_platform/);
      }

      const signin = await wire(`${base}/api/auth.signin`, json({ email: 'alice@example.com', password: PASSWORD }));
      const token = signin.body.data.access_token as string;
      assert.equal((await wire(`${base}/api/auth.signin`, json({ email: 'alice@example.com', password: 'wrong-password' }))).body.code, 1);
      for (let i = 0; i < 3; i++) assert.equal((await wire(`${base}/api/users.get?user_ids=2&access_token=${token}`)).body.code, 0);
      assert.equal((await wire(`${base}/api/no.suchMethod`)).body.code, 5);
      const items = (await wire(`${base}/api/inventory.get?user_id=1&access_token=${token}`)).body.data.things as { item_id: number }[];
      assert.equal(items.length, 10);
      const crafted = await wire(
        `${base}/api/inventory.craft`,
        json({ access_token: token, item_ids: items.map((i) => i.item_id).join(',') }),
      );
      assert.equal(crafted.body.code, 0, crafted.text);

      const socket = new WebSocket(`${base.replace('http', 'ws')}/ws?subs=gchat`);
      await new Promise<void>((resolve, reject) => {
        socket.once('message', () => resolve());
        socket.once('error', reject);
      });

      let families = await scrape(url);
      const requests = (method: string, code: number) => sample(families, 'game_platform_requests_total', { method, code: String(code) });
      assert.equal(requests('auth.signin', 0), 1);
      assert.equal(requests('auth.signin', 1), 1);
      assert.equal(requests('users.get', 0), 3);
      assert.equal(requests('unknown', 5), 1, 'unknown methods share one label');
      assert.equal(requests('inventory.craft', 0), 1);
      assert.equal(
        histogramCount(families, 'game_platform_request_duration_seconds', 'method', 'users.get'),
        3,
        'three latencies of users.get',
      );
      assert.equal(sample(families, 'game_platform_signins_total', { step: 'password', outcome: 'ok' }), 1);
      assert.equal(sample(families, 'game_platform_signins_total', { step: 'password', outcome: 'wrong_credentials' }), 1);
      assert.equal(sample(families, 'game_platform_domain_events_total', { kind: 'craft', outcome: 'made' }), 1);
      assert.equal(
        sample(families, 'game_platform_domain_events_total', { kind: 'trade', outcome: 'accepted' }),
        0,
        'shown before it happens',
      );
      // Five calls presented a token: three users.get, inventory.get and the craft. Sessions are
      // kept in memory on SQLite; on PostgreSQL without Redis nothing is cached.
      const sessions =
        sample(families, 'game_platform_cache_hits', { cache: 'sessions' }) +
        sample(families, 'game_platform_cache_misses', { cache: 'sessions' });
      assert.equal(sessions, DB_KIND === 'sqlite' ? 5 : 0);
      if (DB_KIND === 'sqlite')
        assert.ok(sample(families, 'game_platform_cache_hits', { cache: 'sessions' }) >= 4, 'sessions are kept in memory on SQLite');
      assert.ok(histogramCount(families, 'game_platform_db_query_duration_seconds', 'outcome', 'ok') > 10, 'statements are timed');
      if (DB_KIND === 'postgres') assert.ok(sample(families, 'game_platform_db_pool_connections') >= 1);
      else assert.equal(families.has('game_platform_db_pool_connections'), false, 'SQLite has no pool');
      assert.equal(sample(families, 'game_platform_websocket_connections'), 1);
      assert.ok(families.has('game_platform_websocket_queued_bytes'));
      assert.ok(sample(families, 'process_resident_memory_bytes') > 10 * 1024 * 1024);
      assert.ok(families.has('nodejs_eventloop_lag_seconds'));
      assert.ok(families.has('nodejs_heap_size_used_bytes'));

      // Rate-limit refusals, counted as answered.
      let refused = 0;
      for (let i = 0; i < 40; i++) if ((await wire(`${base}/api/gchat.get`)).status === 429) refused++;
      assert.ok(refused > 0);
      socket.close();
      await new Promise((resolve) => socket.once('close', resolve));
      // Prometheus sends the key as a bearer token.
      families = await scrape(url, { authorization: `Bearer ${ADMIN_KEY}` });
      assert.equal(sample(families, 'game_platform_rate_limited_total', { method: 'gchat.get' }), refused);
      assert.equal(requests('gchat.get', 7), refused);
      for (let i = 0; sample(families, 'game_platform_websocket_connections') !== 0 && i < 100; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        families = await scrape(url);
      }
      assert.equal(sample(families, 'game_platform_websocket_connections'), 0);
    } finally {
      await server.close();
    }
  },
);

/** Alice (1) trades with bob (2) and opens a case, a gift set and a promo code. */
const domainWorld: World = {
  ...catalogWorld,
  item_protos: [
    ...catalogWorld.item_protos!,
    { item_proto_id: 401, type: 1, quality_id: 1, title: 'Gift set', drop: [{ item_proto_id: 601 }], can_craft: 0 },
  ],
  users: [user(1), user(2)],
  items: [
    ...Array.from({ length: 6 }, (_, i) => ({ item_id: 10 + i, user_id: 1, item_proto_id: 101 })),
    { item_id: 30, user_id: 1, item_proto_id: 501 },
    { item_id: 31, user_id: 1, item_proto_id: 502 },
    { item_id: 32, user_id: 1, item_proto_id: 401 },
  ],
  promocodes: [{ code: 'WELCOME', item_proto_ids: [601] }],
};

test('GET /metrics counts every way a trade ends, openings by kind and promo code activations, once each', async () => {
  const server = await startTestServer({ world: domainWorld, config: { adminKey: ADMIN_KEY } });
  try {
    const url = `${await listen(server)}/metrics`;
    const [alice, bob] = [await tokenFor(server, 1), await tokenFor(server, 2)];
    const offer = async (itemIds: number[]) =>
      (await callOk(server, 'trades.create', { user_id: 2, thing_ids_from: itemIds.join(',') }, { token: alice })).trade_id as number;
    const byTrade = async (method: string, tradeId: number, token: string) =>
      assert.deepEqual((await server.call(method, { trade_id: tradeId }, { token })).body, { code: 0 }, method);

    await byTrade('trades.accept', await offer([10]), bob);
    await byTrade('trades.decline', await offer([11]), bob);
    await byTrade('trades.cancel', await offer([12]), bob);
    await byTrade('trades.revoke', await offer([13]), alice);
    await byTrade('trades.cancel', await offer([13]), alice);
    const cancelled = await offer([14]);
    assert.equal((await server.call('admin.cancelTrade', { trade_id: cancelled }, { headers: { 'x-admin-key': ADMIN_KEY } })).body.code, 0);
    // Two trades share item 15: accepting one leaves the other invalid.
    const [shared, other] = [await offer([15]), await offer([15])];
    await byTrade('trades.accept', shared, bob);
    assert.equal(
      (await server.call('trades.accept', { trade_id: other }, { token: bob })).body.code,
      603,
      'an invalid trade is not counted again',
    );
    await offer([11]);
    server.clock.advance(server.services.config.trades.ttl + 1);
    assert.equal(await sweepExpiredTrades(server.services), 1);

    await callOk(server, 'inventory.open', { item_id: 30, key_item_id: 31 }, { token: alice });
    await callOk(server, 'inventory.open', { item_id: 32, request_id: 'once' }, { token: alice });
    await callOk(server, 'inventory.open', { item_id: 32, request_id: 'once' }, { token: alice });
    await callOk(server, 'wallet.promocodeActivate', { promocode: 'welcome' }, { token: alice });
    assert.equal((await server.call('wallet.promocodeActivate', { promocode: 'welcome' }, { token: alice })).body.code, 1501);

    const families = await scrape(url);
    const events = (kind: string, outcome: string) => sample(families, 'game_platform_domain_events_total', { kind, outcome });
    assert.deepEqual(
      Object.fromEntries(
        ['created', 'accepted', 'declined', 'revoked', 'cancelled', 'expired', 'invalidated'].map((o) => [o, events('trade', o)]),
      ),
      { created: 9, accepted: 2, declined: 2, revoked: 2, cancelled: 1, expired: 1, invalidated: 1 },
    );
    assert.deepEqual(
      ['case', 'gift', 'promocode'].map((o) => events('opening', o)),
      [1, 1, 1],
      'a repeated request_id and a refused code count nothing',
    );
  } finally {
    await server.close();
  }
});

test('--metrics-port serves the metrics without a key on a listener of its own, and closes it with the server', async () => {
  const server = await startTestServer({ config: { metricsPort: 0, metricsHost: '127.0.0.1' } });
  const base = await listen(server);
  const address = server.services.metrics.listenerAddress();
  assert.ok(address);
  const url = `http://127.0.0.1:${address.port}`;
  try {
    await wire(`${base}/api/gchat.get`);
    const families = await scrape(`${url}/metrics`, {});
    assert.equal(sample(families, 'game_platform_requests_total', { method: 'gchat.get', code: '0' }), 1);
    assert.equal((await wire(`${url}/api/gchat.get`)).status, 404, 'the listener serves nothing else');
    // On the API port the metrics stay behind the admin key (none is configured here).
    assert.equal((await wire(`${base}/metrics`)).status, 403);
  } finally {
    await server.close();
  }
  await assert.rejects(fetch(`${url}/metrics`), 'closed with the server');
});
