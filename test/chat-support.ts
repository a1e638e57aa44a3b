import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { hashPassword } from '../src/auth/passwords.js';
import { allMethods } from '../src/domains.js';
import type { World } from '../src/world/schema.js';
import { ok, startTestServer, type Answer, type CallOptions, type StartOptions, type TestServer } from './helpers.js';
import { responseProblems } from './response-check.js';

export const PASSWORD = 'correct horse battery';

/** Accounts of the chat tests. */
export const ALICE = 1;
export const BOB = 2;
export const CAROL = 3;
export const MODERATOR = 4;
export const MUTED = 5;
export const BOT = 6;
export const OTHER_BOT = 7;
export const NOBODY = 999;

/** Ends long after every test's clock (the ManualClock starts at 2026-01-01). */
export const MUTED_UNTIL = Date.UTC(2030, 0, 1) / 1000;

export const CASE = 200;
export const CARD = 100;
export const OTHER_CARD = 101;

let passwordHash: Promise<string> | undefined;

export async function chatWorld(extra: Partial<World> = {}): Promise<World> {
  passwordHash ??= hashPassword(PASSWORD);
  const password_hash = await passwordHash;
  return {
    item_protos: [
      { item_proto_id: CARD, type: 0, title: 'Old Street', quality_id: 1, image: '/i/100.png', description: 'a card' },
      { item_proto_id: OTHER_CARD, type: 0, title: 'New Street', quality_id: 2, image: '/i/101.png' },
      { item_proto_id: CASE, type: 2, title: 'Case', quality_id: 0, image: '/i/200.png' },
    ],
    users: [
      { user_id: ALICE, email: 'alice@example.com', password_hash, nick: 'Alice', domain: 'alice' },
      { user_id: BOB, email: 'bob@example.com', password_hash, nick: 'Bob', vip: 1 },
      { user_id: CAROL, email: 'carol@example.com', password_hash, nick: 'Carol' },
      { user_id: MODERATOR, email: 'mod@example.com', password_hash, nick: 'Mod', moderator: 1 },
      { user_id: MUTED, email: 'muted@example.com', password_hash, nick: 'Quiet', muted_until: MUTED_UNTIL },
      { user_id: BOT, nick: 'Helper', bot_owner: ALICE },
      { user_id: OTHER_BOT, nick: 'Other', bot_owner: BOB },
    ],
    ...extra,
  };
}

export const EMAIL: Record<number, string> = {
  [ALICE]: 'alice@example.com',
  [BOB]: 'bob@example.com',
  [CAROL]: 'carol@example.com',
  [MODERATOR]: 'mod@example.com',
  [MUTED]: 'muted@example.com',
};

const methodsByName = new Map(allMethods().map((m) => [m.name, m]));

/** Calls a method and asserts that the answer matches its published schema. */
export async function call(
  server: TestServer,
  method: string,
  params: Record<string, unknown> = {},
  options: CallOptions = {},
): Promise<Answer> {
  const answer = await server.call(method, params, options);
  const problems = responseProblems(methodsByName.get(method), answer.status, answer.body, params);
  assert.deepEqual(problems, [], `${method} answered outside its schema`);
  return answer;
}

export function fails(answer: Answer, code: number): Answer['body'] {
  assert.equal(answer.body.code, code, `expected code ${code}, got ${JSON.stringify(answer.body)}`);
  return answer.body;
}

export async function chat(server: TestServer, http: 'GET' | 'POST' = 'GET'): Promise<any> {
  return ok(await call(server, 'gchat.get', {}, { http }));
}

export async function send(server: TestServer, token: string, message: string, extra: Record<string, unknown> = {}): Promise<Answer> {
  return call(server, 'gchat.send', { message, ...extra }, { token });
}

/** Sends and returns the msg_id, asserting success. */
export async function say(server: TestServer, token: string, message: string, extra: Record<string, unknown> = {}): Promise<string> {
  const data = ok(await send(server, token, message, extra));
  assert.equal(typeof data.msg_id, 'string');
  return data.msg_id;
}

/** Signs in through the public API (passing the test captcha when asked) and returns the access token. */
export async function signIn(server: TestServer, userId: number): Promise<string> {
  const params = { email: EMAIL[userId], password: PASSWORD };
  let answer = await server.call('auth.signin', params);
  if (answer.body.code === 8) answer = await server.call('auth.signin', { ...params, captcha: 'test-pass' });
  return ok(answer).access_token;
}

/** A bot's token from bots.getToken, called with its owner's token. */
export async function botToken(server: TestServer, ownerToken: string, botId: number): Promise<string> {
  return ok(await server.call('bots.getToken', { user_id: botId }, { token: ownerToken })).access_token;
}

/**
 * Two server processes on one database and one Redis, as a deployment behind a load balancer
 * runs them (the chat world unless another is given); both share one clock.
 */
export async function withCluster(
  run: (first: TestServer, second: TestServer) => Promise<void>,
  world?: World,
  config?: StartOptions['config'],
): Promise<void> {
  const first = await startTestServer({ world: world ?? (await chatWorld()), redis: true, config });
  try {
    const second = await startTestServer({ location: first.location, redis: true, clock: first.clock, config });
    try {
      await run(first, second);
    } finally {
      await second.close();
    }
  } finally {
    await first.close();
  }
}

export async function withServer(options: StartOptions, run: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startTestServer({ world: await chatWorld(), ...options });
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

/** Makes the server listen on a free local port and returns its WebSocket base URL. */
export async function listen(server: TestServer): Promise<string> {
  if (!server.app.server.listening) await server.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = server.app.server.address() as AddressInfo;
  return `ws://127.0.0.1:${port}`;
}

export interface Frame {
  event: string;
  data: any;
}

/** A realtime client: records every frame and lets tests wait for the ones they expect. */
export class FeedClient {
  readonly frames: Frame[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: { match: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = [];

  constructor(readonly socket: WebSocket) {
    socket.on('message', (raw) => {
      const frame = JSON.parse(raw.toString()) as Frame;
      this.frames.push(frame);
      this.waiters = this.waiters.filter((w) => {
        if (!w.match(frame)) return true;
        w.resolve(frame);
        return false;
      });
    });
    this.closed = new Promise((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  /** The first frame (already received or still to come) that matches. */
  next(match: (frame: Frame) => boolean): Promise<Frame> {
    const seen = this.frames.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** The gchat.add frame of a message. */
  added(msgId: string): Promise<Frame> {
    return this.next((f) => f.event === 'gchat.add' && f.data.message.msg_id === msgId);
  }

  /** Whether a gchat.add frame of the message arrived (call after a later frame arrived). */
  hasAdded(msgId: string): boolean {
    return this.frames.some((f) => f.event === 'gchat.add' && f.data.message.msg_id === msgId);
  }

  close(): void {
    this.socket.close();
  }
}

export function openSocket(url: string, options: WebSocket.ClientOptions = {}): Promise<WebSocket> {
  const socket = new WebSocket(url, options);
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Connects to /ws with the given token and subscriptions. */
export async function connect(
  server: TestServer,
  options: { token?: string; subs?: string; client?: WebSocket.ClientOptions } = {},
): Promise<FeedClient> {
  const base = await listen(server);
  const query = new URLSearchParams();
  if (options.token !== undefined) query.set('access_token', options.token);
  query.set('subs', options.subs ?? 'gchat');
  // These clients read the JSON framing; test/extws-client.ts speaks the reference clients' ExtWS.
  query.set('format', 'json');
  const socket = new WebSocket(`${base}/ws?${query}`, options.client);
  const client = new FeedClient(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  await client.next((f) => f.event === 'ready');
  return client;
}

/**
 * After `markers` (one per process, sent after everything else) reached every feed: each feed
 * got every message exactly once, and the messages of one process in the order of their ids.
 */
export async function assertPushedOnceInOrder(
  feeds: FeedClient[],
  ids: string[],
  markers: string[],
  originOf: Map<string, number>,
  processes: number,
): Promise<void> {
  for (const feed of feeds) {
    for (const marker of markers) await feed.added(marker);
    const added = feed.frames.filter((f) => f.event === 'gchat.add').map((f) => f.data.message.msg_id as string);
    assert.equal(added.length, ids.length + markers.length, 'each message pushed once');
    assert.deepEqual([...added].sort(), [...ids, ...markers].sort());
    for (let s = 0; s < processes; s++) {
      const fromOne = added.filter((id) => originOf.get(id) === s);
      assert.deepEqual(fromOne, [...fromOne].sort(), 'the messages of one process arrive in the order of their ids');
    }
  }
}
