import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { startTestServer, type Answer } from './helpers.js';
import { listen, signIn, transportWorld, wire } from './transport-support.js';
import { missing } from './components.js';

const assertLimited = (answer: Answer) => {
  assert.equal(answer.status, 429);
  assert.equal(answer.body.code, 7);
  const retryAfter = answer.body.data?.retry_after;
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `retry_after ${retryAfter}`);
  assert.equal(answer.headers['retry-after'], String(retryAfter));
};

/** An address of the test network no other test uses, so limits kept in the shared Redis do not mix. */
const someAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

describe('general request limits', () => {
  for (const store of ['in process', 'in Redis'] as const) {
    test(
      `per address, kept ${store}: code 7, HTTP 429, retry_after and Retry-After`,
      { skip: store === 'in Redis' && missing.redis },
      async () => {
        const server = await startTestServer({
          redis: store === 'in Redis',
          config: { rateLimitPerIp: { max: 5, windowSeconds: 60 } },
        });
        try {
          const ip = someAddress();
          for (let i = 0; i < 5; i++) assert.equal((await server.call('gchat.get', {}, { ip })).body.code, 0);
          // Unknown methods count too, and get the same answer once the limit is reached.
          assertLimited(await server.call('gchat.get', {}, { ip }));
          assertLimited(await server.call('nothing.here', {}, { ip }));
          // Other addresses are not affected.
          assert.equal((await server.call('gchat.get', {}, { ip: someAddress() })).body.code, 0);
          if (store === 'in process') {
            server.clock.advance(61);
            assert.equal((await server.call('gchat.get', {}, { ip })).body.code, 0, 'the window has passed');
          }
        } finally {
          await server.close();
        }
      },
    );
  }

  test('several processes on one Redis share the limit', { skip: missing.redis }, async () => {
    const config = { rateLimitPerIp: { max: 4, windowSeconds: 60 } };
    const first = await startTestServer({ redis: true, config });
    const second = await startTestServer({ redis: true, config, location: first.location });
    try {
      const ip = someAddress();
      assert.equal((await first.call('gchat.get', {}, { ip })).body.code, 0);
      assert.equal((await second.call('gchat.get', {}, { ip })).body.code, 0);
      assert.equal((await first.call('gchat.get', {}, { ip })).body.code, 0);
      assert.equal((await second.call('gchat.get', {}, { ip })).body.code, 0);
      assertLimited(await first.call('gchat.get', {}, { ip }));
      assertLimited(await second.call('gchat.get', {}, { ip }));
    } finally {
      await second.close();
      await first.close();
    }
  });

  for (const sending of ['one after another', 'all at once'] as const) {
    test(
      `several processes on one Redis share a limit of 400 counted by leases, requests sent ${sending}: never more than 400 admitted, at most 3 fewer per process`,
      { skip: missing.redis },
      async () => {
        // A limit of 400 is taken from Redis 4 units at a time (a hundredth).
        const config = { rateLimitPerIp: { max: 400, windowSeconds: 60 } };
        const first = await startTestServer({ redis: true, config });
        const second = await startTestServer({ redis: true, config, location: first.location });
        try {
          const ip = someAddress();
          const send = (i: number) => (i % 2 === 0 ? first : second).call('gchat.get', {}, { ip });
          const answers: Answer[] = [];
          if (sending === 'one after another') for (let i = 0; i < 440; i++) answers.push(await send(i));
          else answers.push(...(await Promise.all(Array.from({ length: 440 }, (_, i) => send(i)))));
          for (const answer of answers) if (answer.body.code !== 0) assertLimited(answer);
          // What a process still holds of its last lease is admitted after: the total stays within the limit.
          for (const server of [first, second])
            for (let i = 0; i < 10; i++) {
              const answer = await server.call('gchat.get', {}, { ip });
              answers.push(answer);
              if (answer.body.code !== 0) break;
            }
          const admitted = answers.filter((answer) => answer.body.code === 0).length;
          assert.ok(admitted <= 400 && admitted >= 394, `${admitted} admitted`);
        } finally {
          await second.close();
          await first.close();
        }
      },
    );
  }

  for (const store of ['in process', 'in Redis'] as const) {
    test(
      `per token, kept ${store}: a busy token is limited while its address still has room`,
      { skip: store === 'in Redis' && missing.redis },
      async () => {
        const server = await startTestServer({
          redis: store === 'in Redis',
          world: transportWorld(),
          config: { rateLimitPerToken: { max: 3, windowSeconds: 60 }, rateLimitPerIp: { max: 1000, windowSeconds: 60 } },
        });
        try {
          const ip = someAddress();
          const token = await signIn(server, 'alice@example.com', ip);
          for (let i = 0; i < 3; i++) assert.equal((await server.call('users.get', {}, { token, ip })).body.code, 0);
          assertLimited(await server.call('users.get', {}, { token, ip }));
          assert.equal((await server.call('users.get', { user_id: 2 }, { ip })).body.code, 0, 'anonymous calls from the address go on');
          if (store === 'in process') {
            server.clock.advance(60);
            assert.equal((await server.call('users.get', {}, { token, ip })).body.code, 0);
          }
        } finally {
          await server.close();
        }
      },
    );

    test(
      `kept ${store}: a call refused for its address does not count against its token`,
      { skip: store === 'in Redis' && missing.redis },
      async () => {
        const server = await startTestServer({
          redis: store === 'in Redis',
          world: transportWorld(),
          config: {
            bindTokensToIp: false,
            rateLimitPerToken: { max: 5, windowSeconds: 60 },
            rateLimitPerIp: { max: 4, windowSeconds: 60 },
          },
        });
        try {
          const busy = someAddress();
          // Signing in is the address's first request.
          const token = await signIn(server, 'alice@example.com', busy);
          for (let i = 0; i < 3; i++) assert.equal((await server.call('users.get', {}, { token, ip: busy })).body.code, 0);
          for (let i = 0; i < 3; i++) assertLimited(await server.call('users.get', {}, { token, ip: busy }));
          // The token has counted three calls: two more from another address, then its own limit.
          const other = someAddress();
          for (let i = 0; i < 2; i++) assert.equal((await server.call('users.get', {}, { token, ip: other })).body.code, 0);
          assertLimited(await server.call('users.get', {}, { token, ip: other }));
        } finally {
          await server.close();
        }
      },
    );
  }

  test('the limit answers over a real socket with the Retry-After header', async () => {
    const server = await startTestServer({ config: { rateLimitPerIp: { max: 2, windowSeconds: 30 } } });
    try {
      const base = await listen(server);
      await wire(`${base}/api/gchat.get`);
      await wire(`${base}/api/gchat.get`);
      const limited = await wire(`${base}/api/gchat.get`);
      assert.equal(limited.status, 429);
      assert.equal(limited.body.code, 7);
      assert.equal(limited.headers.get('retry-after'), String(limited.body.data.retry_after));
      assert.ok(limited.body.data.retry_after <= 30);
    } finally {
      await server.close();
    }
  });

  test('--no-rate-limit turns the general limits off', async () => {
    const server = await startTestServer({
      config: { rateLimit: false, rateLimitPerIp: { max: 2, windowSeconds: 60 } },
    });
    try {
      for (let i = 0; i < 10; i++) assert.equal((await server.call('gchat.get', {})).body.code, 0);
    } finally {
      await server.close();
    }
  });

  test('with trust-proxy the address comes from X-Forwarded-For, without it from the socket', async () => {
    const config = { rateLimitPerIp: { max: 2, windowSeconds: 60 } };
    const trusting = await startTestServer({ config: { ...config, trustProxy: true } });
    const direct = await startTestServer({ config });
    try {
      const forwarded = (n: number) => ({ headers: { 'x-forwarded-for': `203.0.113.${n}` } });
      // Behind a proxy, each client address has its own budget.
      for (let n = 1; n <= 4; n++) assert.equal((await trusting.call('gchat.get', {}, forwarded(n))).body.code, 0);
      // Without trust-proxy the header is ignored: every call counts for the proxy's address.
      assert.equal((await direct.call('gchat.get', {}, forwarded(1))).body.code, 0);
      assert.equal((await direct.call('gchat.get', {}, forwarded(2))).body.code, 0);
      assertLimited(await direct.call('gchat.get', {}, forwarded(3)));
    } finally {
      await direct.close();
      await trusting.close();
    }
  });
});
