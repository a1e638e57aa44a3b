import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SIGNUP_LIMITS } from '../src/auth/defence.js';
import { wire, type WireAnswer } from './transport-support.js';
import { startProcesses, type Processes } from './race-support.js';
import { missing } from './components.js';

/**
 * Sign-ups racing each other over real sockets (on PostgreSQL spread over two processes
 * sharing the database and Redis): one address or one domain, many clients at once, one account.
 */

const CLIENTS = 20;
const PASSWORD = 'a long enough secret';

describe('sign-ups racing for one address or one domain', { skip: missing.redis }, () => {
  let processes: Processes;

  before(async () => {
    processes = await startProcesses({ config: { rateLimit: false, trustProxy: true } });
  });
  after(() => processes.close());

  const signup = (index: number, params: Record<string, unknown>): Promise<WireAnswer> =>
    wire(`${processes.urls[index % 2]}/api/auth.signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.40.${index >> 8}.${index & 255}`, connection: 'close' },
      body: JSON.stringify({ password: PASSWORD, nick: `Racer ${index}`, ...params }),
    });

  const tally = (answers: WireAnswer[]) => {
    const codes: Record<number, number> = {};
    for (const a of answers) codes[a.body.code] = (codes[a.body.code] ?? 0) + 1;
    return codes;
  };

  test(`${CLIENTS} clients signing up with one address at once: one account`, async () => {
    const email = 'contested@example.com';
    const answers = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => signup(i, { email: i % 2 ? email.toUpperCase() : email })));
    // Past the per-address ceiling the rest are refused before they reach the database.
    const admitted = SIGNUP_LIMITS.ceilingEmailAttempts;
    assert.deepEqual(tally(answers), { 0: 1, 1601: admitted - 1, 7: CLIENTS - admitted });
    const rows = await processes.servers[0]!.db.kysely.selectFrom('users').select(['user_id']).where('email', '=', email).execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.user_id, answers.find((a) => a.body.code === 0)!.body.data.user_id);
  });

  test(`${CLIENTS} clients signing up with one domain at once: one account holds it`, async () => {
    const answers = await Promise.all(
      Array.from({ length: CLIENTS }, (_, i) =>
        signup(i, { email: `domain-racer-${i}@example.com`, domain: i % 2 ? 'Fast.Lane' : 'fast.lane' }),
      ),
    );
    assert.deepEqual(tally(answers), { 0: 1, 1602: CLIENTS - 1 });
    const { kysely } = processes.servers[0]!.db;
    const holders = await kysely.selectFrom('users').select(['user_id']).where('domain', '=', 'fast.lane').execute();
    assert.equal(holders.length, 1);
    const losers = await kysely.selectFrom('users').select('user_id').where('email', 'like', 'domain-racer-%').execute();
    assert.equal(losers.length, 1, 'the refused sign-ups created nothing');
  });
});
