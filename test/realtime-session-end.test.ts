import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import type { Redis } from 'ioredis';
import type { RedisBus } from '../src/infra/bus.js';
import { defaultConfig } from '../src/config.js';
import { DB_KIND, ok, busCurrent, startTestServer, type StartOptions, type TestServer } from './helpers.js';
import { ADMIN_KEY, admin } from './admin-support.js';
import { ALICE, BOB, BOT, EMAIL, PASSWORD, chatWorld, listen } from './chat-support.js';
import type { World } from '../src/world/schema.js';
import { MailCatcher, mailConfig, tokenIn } from './mail-support.js';
import { missing } from './components.js';

/*
 * A realtime connection opened with a token lasts as long as the token's session: whatever
 * ends the session closes the connection with 4003, in the process that ended it and in every
 * other, in both framings.
 */

type Framing = 'extws' | 'json';
const FRAMINGS: Framing[] = ['extws', 'json'];
const CLOSED_REVOKED = { code: 4003, reason: 'session revoked' };
const CLOSED_EXPIRED = { code: 4003, reason: 'session expired' };
/** Lifetime of access tokens in the expiry tests, seconds. */
const SHORT_TTL = 1;
/** A connection that is never closed fails its test instead of holding the run. */
const TEST_TIMEOUT_MS = 60_000;

/** A signed-in realtime connection, in either framing, recording the text of every frame. */
class Feed {
  readonly texts: string[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: { match: (text: string) => boolean; resolve: () => void }[] = [];

  private constructor(
    readonly socket: WebSocket,
    readonly framing: Framing,
  ) {
    socket.on('message', (raw) => {
      const text = raw.toString();
      this.texts.push(text);
      if (framing === 'extws' && text === '2') socket.send('3');
      this.waiters = this.waiters.filter((w) => (w.match(text) ? (w.resolve(), false) : true));
    });
    this.closed = new Promise((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  static async open(server: TestServer, token: string, framing: Framing): Promise<Feed> {
    const query = new URLSearchParams({ access_token: token, subs: 'gchat', ...(framing === 'json' ? { format: 'json' } : {}) });
    const feed = new Feed(new WebSocket(`${await listen(server)}/ws?${query}`), framing);
    await new Promise<void>((resolve, reject) => {
      feed.socket.once('open', () => resolve());
      feed.socket.once('error', reject);
    });
    // Signed in once the first frame naming the user is out: `ready` with user_id, or `auth`.
    await feed.next((text) => (framing === 'json' ? text.startsWith('{"event":"ready"') : text.startsWith('4auth')));
    return feed;
  }

  next(match: (text: string) => boolean): Promise<void> {
    if (this.texts.some(match)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** Resolves once a private push to the connection's user, sent through `server`, has arrived. */
  async receivesPrivatePush(server: TestServer, userId: number): Promise<void> {
    const mark = `private-${Math.random().toString(36).slice(2)}`;
    const arrived = this.next((text) => text.includes(mark));
    await server.services.realtime.pushToUser(userId, { type: 'probe', fields: { mark }, json: { mark } });
    await arrived;
  }

  get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }
}

interface Signed {
  user_id: number;
  access_token: string;
  refresh_token: string;
}

/** Accounts of the endings, beside those of the chat world: user 20 + the ending's index. */
const FIRST_ENDING_USER = 20;
const NEW_PASSWORD = 'an entirely new passphrase';
const emailOf = (userId: number) => EMAIL[userId] ?? `user${userId}@example.com`;

async function signIn(server: TestServer, userId: number, ip = '127.0.0.1'): Promise<Signed> {
  return ok(await server.call('auth.signin', { email: emailOf(userId), password: PASSWORD }, { ip }));
}

interface Ending {
  name: string;
  /** The account of the connection: one per ending, so that all of them share one server. */
  userId: number;
  /** The token the connection is opened with, made through `server` (a sign-in unless said otherwise). */
  token?: (server: TestServer, userId: number) => Promise<string>;
  /** Ends the session of `token` (of `userId`) through `server`. */
  end: (server: TestServer, token: string, userId: number, context: { mail: MailCatcher }) => Promise<void>;
}

/** The stolen copy of the first refresh token of a sign-in, by the access token its rotation gave. */
const stolenRefresh = new Map<string, string>();

/** Ways a session ends; each is seen closing connections with 4003 in the same and in another process. */
const endings: Ending[] = (
  [
    {
      name: 'auth.signout',
      end: async (server, token) => void ok(await server.call('auth.signout', {}, { token })),
    },
    {
      name: 'account.sessionsRevoke from another sign-in',
      end: async (server, _token, userId) => {
        const other = (await signIn(server, userId, '10.7.0.1')).access_token;
        const sessions = ok(await server.call('account.sessionsGet', {}, { token: other, ip: '10.7.0.1' }));
        const target = sessions.sessions.find((s: { current: boolean }) => !s.current);
        ok(await server.call('account.sessionsRevoke', { session_id: target.session_id }, { token: other, ip: '10.7.0.1' }));
      },
    },
    {
      name: 'account.updatePassword',
      end: async (server, _token, userId) => {
        const other = (await signIn(server, userId, '10.7.0.2')).access_token;
        const params = { password_current: PASSWORD, password_new: NEW_PASSWORD };
        ok(await server.call('account.updatePassword', params, { token: other, ip: '10.7.0.2' }));
      },
    },
    {
      name: 'auth.resetPassword',
      end: async (server, _token, userId, { mail }) => {
        ok(await server.call('auth.requestPasswordReset', { email: emailOf(userId) }, { ip: '10.7.0.3' }));
        const token = tokenIn(await mail.next(emailOf(userId)));
        ok(await server.call('auth.resetPassword', { token, password: NEW_PASSWORD }, { ip: '10.7.0.3' }));
      },
    },
    {
      name: 'a rotated refresh token presented again (the sign-in is revoked)',
      token: async (server, userId) => {
        const first = await signIn(server, userId);
        const refreshed = ok(await server.call('auth.refresh', { refresh_token: first.refresh_token }));
        stolenRefresh.set(refreshed.access_token, first.refresh_token);
        return refreshed.access_token;
      },
      end: async (server, token) => {
        const answer = await server.call('auth.refresh', { refresh_token: stolenRefresh.get(token) }, { ip: '10.7.0.4' });
        assert.equal(answer.body.code, 1);
      },
    },
    {
      name: 'admin.banUser',
      end: async (server, _token, userId) => void (await admin(server, 'banUser', { user_id: userId })),
    },
    {
      name: 'admin.killSessions',
      end: async (server, _token, userId) => void (await admin(server, 'killSessions', { user_id: userId })),
    },
    {
      name: 'admin.updateUser setting a password',
      end: async (server, _token, userId) => void (await admin(server, 'updateUser', { user_id: userId, password: NEW_PASSWORD })),
    },
    {
      name: 'bots.getToken issuing the bot a new token',
      token: async (server) => {
        const owner = (await signIn(server, ALICE)).access_token;
        return ok(await server.call('bots.getToken', { user_id: BOT }, { token: owner })).access_token;
      },
      end: async (server) => {
        const owner = (await signIn(server, ALICE, '10.7.0.5')).access_token;
        ok(await server.call('bots.getToken', { user_id: BOT }, { token: owner, ip: '10.7.0.5' }));
      },
    },
  ] satisfies Omit<Ending, 'userId'>[]
).map((ending, index) => ({ ...ending, userId: ending.name.startsWith('bots.') ? BOT : FIRST_ENDING_USER + index }));

/** The chat world with one account per ending. */
async function endingsWorld(): Promise<World> {
  const world = await chatWorld();
  const users = world.users!;
  for (const ending of endings)
    if (ending.userId !== BOT)
      users.push({
        user_id: ending.userId,
        email: emailOf(ending.userId),
        password_hash: users[0].password_hash,
        nick: `Ending ${ending.userId}`,
      });
  return world;
}

interface Servers {
  acting: TestServer;
  watching: TestServer;
  close(): Promise<void>;
}

/** One server (`acting` and `watching` the same), or two processes on one database joined by Redis. */
async function startServers(mail: MailCatcher, processes: 1 | 2, extra: StartOptions = {}): Promise<Servers> {
  const config = { adminKey: ADMIN_KEY, ...mailConfig(mail), ...extra.config };
  const acting = await startTestServer({ world: await endingsWorld(), ...extra, ...(processes === 2 ? { redis: true } : {}), config });
  if (processes === 1) return { acting, watching: acting, close: () => acting.close() };
  try {
    const watching = await startTestServer({ location: acting.location, redis: true, clock: acting.clock, config });
    return {
      acting,
      watching,
      async close() {
        await watching.close();
        await acting.close();
      },
    };
  } catch (error) {
    await acting.close();
    throw error;
  }
}

async function withServers(
  mail: MailCatcher,
  processes: 1 | 2,
  run: (acting: TestServer, watching: TestServer) => Promise<void>,
  extra: StartOptions = {},
): Promise<void> {
  const servers = await startServers(mail, processes, extra);
  try {
    await run(servers.acting, servers.watching);
  } finally {
    await servers.close();
  }
}

/** Connections in both framings with one token. */
function openBoth(server: TestServer, token: string): Promise<Feed[]> {
  return Promise.all(FRAMINGS.map((framing) => Feed.open(server, token, framing)));
}

describe('a realtime connection ends with its session', () => {
  let mail: MailCatcher;
  before(async () => {
    mail = await MailCatcher.start();
  });
  after(() => mail.close());

  for (const processes of [1, 2] as const)
    describe(
      processes === 1 ? 'in the process that ended it' : 'in another process, over Redis',
      { skip: processes === 2 && missing.redis },
      () => {
        let servers: Servers;
        before(async () => {
          servers = await startServers(mail, processes);
        });
        after(() => servers.close());

        for (const ending of endings)
          test(`${ending.name} closes the connection with 4003, in both framings`, { timeout: TEST_TIMEOUT_MS }, async () => {
            const { acting, watching } = servers;
            const token = ending.token ? await ending.token(watching, ending.userId) : (await signIn(watching, ending.userId)).access_token;
            const feeds = await openBoth(watching, token);
            // Someone else's connections stay.
            const bystanders = await openBoth(watching, (await signIn(watching, ALICE)).access_token);
            for (const feed of feeds) await feed.receivesPrivatePush(acting, ending.userId);

            await ending.end(acting, token, ending.userId, { mail });
            // Announcements wait for every process, so the close is under way when the ending call answers.
            for (const feed of feeds) assert.deepEqual(await feed.closed, CLOSED_REVOKED);
            for (const bystander of bystanders) {
              await bystander.receivesPrivatePush(acting, ALICE);
              assert.equal(bystander.open, true);
              bystander.socket.close();
            }
          });
      },
    );

  test('a connection is closed with 4003 when its access token expires, not before, in both framings', { timeout: TEST_TIMEOUT_MS }, () =>
    withServers(
      mail,
      1,
      async (server) => {
        const token = (await signIn(server, BOB)).access_token;
        const feeds = await openBoth(server, token);
        // Their timers have fired once (the server's clock said: not yet) and the connections are still served.
        await sleep(SHORT_TTL * 1000 + 500);
        for (const feed of feeds) {
          assert.equal(feed.open, true);
          await feed.receivesPrivatePush(server, BOB);
        }

        server.clock.advance(SHORT_TTL);
        for (const feed of feeds) assert.deepEqual(await feed.closed, CLOSED_EXPIRED);
        assert.equal((await server.call('account.info', {}, { token })).body.code, 1);
      },
      { config: { sessionTtl: SHORT_TTL } },
    ),
  );

  test(
    'after its Redis connection comes back, a process closes the connections whose sessions ended meanwhile, in both framings',
    { skip: missing.redis, timeout: TEST_TIMEOUT_MS },
    () =>
      withServers(mail, 2, async (acting, watching) => {
        // A process on the same database that is not on the bus: its revocations are notices nobody hears.
        const unjoined = await startTestServer({ location: acting.location, clock: acting.clock });
        try {
          const [bob, alice] = [await signIn(watching, BOB), await signIn(watching, ALICE)];
          const feeds = await openBoth(watching, bob.access_token);
          const bystanders = await openBoth(watching, alice.access_token);
          ok(await unjoined.call('auth.signout', {}, { token: bob.access_token }));
          // Nothing told the watching process: the connections are still served.
          for (const feed of feeds) {
            await feed.receivesPrivatePush(acting, BOB);
            assert.equal(feed.open, true);
          }

          const bus = watching.services.bus as RedisBus;
          const subscriber = (bus as unknown as { subscriber: Redis }).subscriber;
          const id = await subscriber.client('ID');
          await acting.services.redis!.client('KILL', 'ID', String(id));
          for (const feed of feeds) assert.deepEqual(await feed.closed, CLOSED_REVOKED);
          await busCurrent(bus);
          for (const bystander of bystanders) {
            await bystander.receivesPrivatePush(acting, ALICE);
            assert.equal(bystander.open, true);
            bystander.socket.close();
          }
        } finally {
          await unjoined.close();
        }
      }),
  );

  test(
    "without Redis, processes on one PostgreSQL database check their connections' sessions every heartbeat, in both framings",
    { skip: DB_KIND !== 'postgres' && 'several processes share a database on PostgreSQL only', timeout: TEST_TIMEOUT_MS },
    async () => {
      const config = { adminKey: ADMIN_KEY, ws: { ...defaultConfig().ws, heartbeatSeconds: 1 } };
      const acting = await startTestServer({ world: await chatWorld(), config });
      try {
        const watching = await startTestServer({ location: acting.location, clock: acting.clock, config });
        try {
          const [bob, alice] = [await signIn(watching, BOB), await signIn(watching, ALICE)];
          const feeds = await openBoth(watching, bob.access_token);
          const bystanders = await openBoth(watching, alice.access_token);
          await admin(acting, 'banUser', { user_id: BOB });
          for (const feed of feeds) assert.deepEqual(await feed.closed, CLOSED_REVOKED);
          for (const bystander of bystanders) {
            await bystander.receivesPrivatePush(watching, ALICE);
            assert.equal(bystander.open, true);
            bystander.socket.close();
          }
        } finally {
          await watching.close();
        }
      } finally {
        await acting.close();
      }
    },
  );
});
