import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SIGNIN_LIMITS } from '../src/auth/defence.js';
import { hashPassword } from '../src/auth/passwords.js';
import { startTestServer } from './helpers.js';
import { PASSWORD, assertSession } from './auth-fixtures.js';

/**
 * Only judged failures count against a sign-in budget: right passwords being checked at once
 * (users behind one NAT at peak, one user on several devices) are never refused for them.
 */

const ACCOUNTS = SIGNIN_LIMITS.captchaAfterIpFailures + 10;

async function manyAccountsWorld() {
  const password_hash = await hashPassword(PASSWORD);
  return {
    users: Array.from({ length: ACCOUNTS }, (_, i) => ({
      user_id: i + 1,
      email: `member${i}@example.com`,
      password_hash,
      nick: `Member${i}`,
    })),
  };
}

test('right passwords checked at once from one address all sign in', async () => {
  const server = await startTestServer({ world: await manyAccountsWorld(), config: { trustProxy: true, rateLimit: false } });
  try {
    const answers = await Promise.all(
      Array.from({ length: ACCOUNTS }, (_, i) =>
        server.call(
          'auth.signin',
          { email: `member${i}@example.com`, password: PASSWORD },
          { headers: { 'x-forwarded-for': '198.51.100.40' } },
        ),
      ),
    );
    assert.deepEqual(
      answers.map((a) => a.body.code),
      Array(ACCOUNTS).fill(0),
    );
    for (const answer of answers) assertSession(answer.body.data);
  } finally {
    await server.close();
  }
});

test('right passwords of one account checked at once from many addresses all sign in; judged failures still count', async () => {
  const server = await startTestServer({ world: await manyAccountsWorld(), config: { trustProxy: true, rateLimit: false } });
  try {
    const burst = SIGNIN_LIMITS.captchaAfterEmailFailures + 10;
    const answers = await Promise.all(
      Array.from({ length: burst }, (_, i) =>
        server.call(
          'auth.signin',
          { email: 'member0@example.com', password: PASSWORD },
          { headers: { 'x-forwarded-for': `198.51.100.${i + 1}` } },
        ),
      ),
    );
    assert.deepEqual(
      answers.map((a) => a.body.code),
      Array(burst).fill(0),
    );
    // Wrong passwords from new addresses still spend the account's budget: past it, a captcha.
    const wrong = [];
    for (let i = 0; i <= SIGNIN_LIMITS.captchaAfterEmailFailures; i++)
      wrong.push(
        (
          await server.call(
            'auth.signin',
            { email: 'member0@example.com', password: 'a wrong password' },
            { headers: { 'x-forwarded-for': `203.0.113.${i + 1}` } },
          )
        ).body.code,
      );
    assert.deepEqual(wrong, [...Array(SIGNIN_LIMITS.captchaAfterEmailFailures).fill(1), 8]);
  } finally {
    await server.close();
  }
});
