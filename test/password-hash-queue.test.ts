import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from './helpers.js';
import { ALICE, PASSWORD, assertSession, authWorld } from './auth-fixtures.js';

/**
 * Password checks wait for a hasher in a queue with a cap: past it, code 7 with retry_after. A
 * sign-in from a device the account signed in from before waits in a queue of its own that goes
 * first, so anonymous checks from many addresses cannot crowd it out.
 */

test('past the queue anonymous checks answer 7 with retry_after; a known device still signs in', async () => {
  const server = await startTestServer({ world: await authWorld(), config: { trustProxy: true, rateLimit: false, passwordHashQueue: 2 } });
  try {
    const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });
    const first = await server.call('auth.signin', { email: ALICE.email, password: PASSWORD }, from('198.51.100.7'));
    assert.equal(first.body.code, 0);
    const deviceToken = first.body.data.device_token as string;

    const burst = 200;
    const anonymous = Array.from({ length: burst }, (_, i) =>
      server.call(
        'auth.signin',
        { email: `nobody${i}@example.com`, password: 'a guess at a password' },
        from(`10.40.${i >> 8}.${i & 255}`),
      ),
    );
    // From a new address, but with the device token of the earlier sign-in.
    const known = server.call('auth.signin', { email: ALICE.email, password: PASSWORD, device_token: deviceToken }, from('203.0.113.77'));
    const answers = await Promise.all(anonymous);

    const knownAnswer = await known;
    assert.equal(knownAnswer.body.code, 0, JSON.stringify(knownAnswer.body));
    assertSession(knownAnswer.body.data);
    const refused = answers.filter((a) => a.body.code === 7);
    assert.deepEqual(
      answers.filter((a) => a.body.code !== 7).map((a) => a.body),
      Array(burst - refused.length).fill({ code: 1, description: 'wrong e-mail or password' }),
    );
    assert.ok(refused.length > 0, 'some checks found the queue full');
    for (const answer of refused) {
      assert.equal(answer.status, 429);
      assert.deepEqual(Object.keys(answer.body).sort(), ['code', 'data', 'description']);
      assert.ok(Number.isInteger(answer.body.data.retry_after) && answer.body.data.retry_after >= 1);
      assert.equal(answer.headers['retry-after'], String(answer.body.data.retry_after));
    }
  } finally {
    await server.close();
  }
});

test('a check refused for the full queue is not counted as a failure', async () => {
  const server = await startTestServer({ world: await authWorld(), config: { trustProxy: true, rateLimit: false, passwordHashQueue: 0 } });
  try {
    // With no queue, of many checks at once from one address most are refused before any is judged.
    const answers = await Promise.all(
      Array.from({ length: 60 }, () =>
        server.call('auth.signin', { email: ALICE.email, password: PASSWORD }, { headers: { 'x-forwarded-for': '198.51.100.8' } }),
      ),
    );
    const codes = new Set(answers.map((a) => a.body.code));
    assert.ok(
      [...codes].every((code) => code === 0 || code === 7),
      [...codes].join(),
    );
    // Refusals spent nothing of the account's or the address's budgets: a wrong password now answers 1, not 8.
    const wrong = await server.call(
      'auth.signin',
      { email: ALICE.email, password: 'a wrong password' },
      { headers: { 'x-forwarded-for': '198.51.100.9' } },
    );
    assert.equal(wrong.body.code, 1);
  } finally {
    await server.close();
  }
});
