import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ALICE, ALICE_BOT, authWorld, sessionOf } from './auth-fixtures.js';
import { wire } from './transport-support.js';
import { startProcesses, type Processes } from './race-support.js';
import { missing } from './components.js';

/**
 * bots.getToken while the bot's current token is busy: clients keep calling with it over real
 * connections (on PostgreSQL to two processes sharing the database and Redis). A request sent
 * after the new token was handed out must be refused in every process; no request ever fails
 * otherwise.
 */

const CLIENTS_PER_PROCESS = 4;

interface Sent {
  /** The reissue had been answered when this request was sent. */
  afterReissue: boolean;
  /** The request was answered before the reissue was sent. */
  answeredBeforeReissue: boolean;
  code: number;
  status: number;
}

describe('bot token reissue while the old token is in use', { skip: missing.redis }, () => {
  let processes: Processes;
  let urls: string[];
  let owner: string;

  before(async () => {
    processes = await startProcesses({ world: await authWorld(), config: { rateLimit: false } });
    urls = processes.urls;
    owner = (await sessionOf(processes.servers[0]!, ALICE.email)).access_token;
  });
  after(() => processes.close());

  const reissue = async (url: string): Promise<string> => {
    const answer = await wire(`${url}/api/bots.getToken`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${owner}` },
      body: JSON.stringify({ user_id: ALICE_BOT.user_id, ip: '127.0.0.1' }),
    });
    assert.equal(answer.body?.code, 0, answer.text);
    return answer.body.data.access_token as string;
  };

  /** A bot method the token may call: 0 while it is alive, 1 once it is revoked. */
  const useToken = async (url: string, token: string) => {
    const answer = await wire(`${url}/api/friends.getRequests`, { headers: { authorization: `Bearer ${token}` } });
    return { code: answer.body?.code as number, status: answer.status };
  };

  test('requests sent after the reissue answered are refused in every process; none fails otherwise', async () => {
    let token = await reissue(urls[0]!);
    for (let round = 0; round < 5; round++) {
      const sent: Sent[] = [];
      let reissueSent = false;
      let reissued = false;
      let afterCount = 0;
      const client = async (url: string) => {
        // Until every client has sent a few requests after the reissue answered.
        while (!reissued || afterCount < CLIENTS_PER_PROCESS * 2 * 5) {
          const afterReissue = reissued;
          const { code, status } = await useToken(url, token);
          sent.push({ afterReissue, answeredBeforeReissue: !reissueSent, code, status });
          if (afterReissue) afterCount++;
        }
      };
      const clients = urls.flatMap((url) => Array.from({ length: CLIENTS_PER_PROCESS }, () => client(url)));
      // The old token is busy in both processes when the new one is asked for.
      while (sent.length < 40) await new Promise((resolve) => setImmediate(resolve));
      reissueSent = true;
      const next = await reissue(urls[round % 2]!);
      reissued = true;
      await Promise.all(clients);

      for (const s of sent) {
        assert.ok(s.status === 200 && (s.code === 0 || s.code === 1), `round ${round}: HTTP ${s.status} code ${s.code}`);
        if (s.afterReissue) assert.equal(s.code, 1, `round ${round}: the old token worked after the reissue answered`);
        if (s.answeredBeforeReissue) assert.equal(s.code, 0, `round ${round}: the token failed before it was replaced`);
      }
      assert.ok(sent.filter((s) => s.afterReissue).length >= CLIENTS_PER_PROCESS * 2 * 5);
      for (const url of urls) {
        assert.equal((await useToken(url, next)).code, 0, `round ${round}: the new token works in every process`);
        assert.equal((await useToken(url, token)).code, 1, `round ${round}: the old token is dead in every process`);
      }
      token = next;
    }
  });

  test('simultaneous reissues through every process while the token is busy leave exactly one token alive', async () => {
    const old = await reissue(urls[0]!);
    let done = false;
    const codes: number[] = [];
    const busy = urls.map(async (url) => {
      while (!done) codes.push((await useToken(url, old)).code);
    });
    const issued = await Promise.all(Array.from({ length: 8 }, (_, i) => reissue(urls[i % 2]!)));
    done = true;
    await Promise.all(busy);
    assert.ok(
      codes.every((c) => c === 0 || c === 1),
      codes.join(','),
    );
    for (const url of urls) {
      const alive: string[] = [];
      for (const token of [old, ...issued]) if ((await useToken(url, token)).code === 0) alive.push(token);
      assert.equal(alive.length, 1, `exactly one token works at ${url}`);
      assert.ok(issued.includes(alive[0]!), 'and it is one of the new ones');
    }
  });
});
