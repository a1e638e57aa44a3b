import assert from 'node:assert/strict';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { TSchema } from '@sinclair/typebox';
import { hashPassword } from '../src/auth/passwords.js';
import { allAdminMethods } from '../src/domains.js';
import type { World } from '../src/world/schema.js';
import { ok, startTestServer, type Answer, type StartOptions, type TestServer } from './helpers.js';

export const ADMIN_KEY = 'admin-key-used-only-by-the-test-suite';
export const PASSWORD = 'correct horse battery';

const checkers = new Map(
  allAdminMethods()
    .filter((m) => m.result)
    .map((m) => [m.name, TypeCompiler.Compile(m.result as TSchema)]),
);

/** A server with the admin API on (the admin key set). */
export function startAdminServer(options: StartOptions = {}): Promise<TestServer> {
  return startTestServer({ ...options, config: { adminKey: ADMIN_KEY, ...options.config } });
}

/** Calls admin.<name> with the admin key (or the given one). */
export function adminCall(
  server: TestServer,
  name: string,
  params: Record<string, unknown> = {},
  options: { key?: string | null; ip?: string } = {},
): Promise<Answer> {
  const key = options.key === undefined ? ADMIN_KEY : options.key;
  return server.call(`admin.${name}`, params, { headers: key === null ? {} : { 'x-admin-key': key }, ip: options.ip });
}

/** Calls admin.<name>, asserts success and that `data` matches the method's published result schema. */
export async function admin(server: TestServer, name: string, params: Record<string, unknown> = {}): Promise<any> {
  const data = ok(await adminCall(server, name, params));
  const checker = checkers.get(`admin.${name}`);
  assert.ok(checker, `admin.${name} declares a result schema`);
  if (!checker.Check(data))
    assert.fail(`admin.${name} answered outside its schema: ${JSON.stringify([...checker.Errors(data)].slice(0, 3))}`);
  return data;
}

/** Asserts an error answer with the code, returning the body. */
export function fails(answer: Answer, code: number): Answer['body'] {
  assert.equal(answer.body.code, code, `expected code ${code}, got ${JSON.stringify(answer.body)}`);
  return answer.body;
}

let passwordHash: Promise<string> | undefined;
/** The argon2 hash of PASSWORD, computed once per test file. */
export function passwordHashOnce(): Promise<string> {
  passwordHash ??= hashPassword(PASSWORD);
  return passwordHash;
}

/** Users 1 (alice), 2 (bob) and 3 (carol), who sign in with PASSWORD; prototypes 100 (card) and 200 (case); collection 10. */
export async function smallWorld(): Promise<World> {
  const password_hash = await passwordHashOnce();
  return {
    collections: [{ collection_id: 10, title: 'Classics' }],
    item_protos: [
      { item_proto_id: 100, type: 0, title: 'Old Street', quality_id: 1, collection_id: 10, monopoly_id: 1, image: '/i/100.png' },
      { item_proto_id: 101, type: 0, title: 'New Street', quality_id: 1, collection_id: 10, monopoly_id: 1, image: '/i/101.png' },
      { item_proto_id: 200, type: 2, title: 'Case', quality_id: 0, image: '/i/200.png' },
    ],
    users: [
      { user_id: 1, email: 'alice@example.com', password_hash, nick: 'Alice', domain: 'alice' },
      { user_id: 2, email: 'bob@example.com', password_hash, nick: 'Bob', domain: 'bob' },
      { user_id: 3, email: 'carol@example.com', password_hash, nick: 'Carol' },
    ],
  };
}

/** Signs in through the public API and returns the access token. */
export async function signIn(server: TestServer, email: string, password = PASSWORD, ip = '127.0.0.1'): Promise<string> {
  let answer = await server.call('auth.signin', { email, password }, { ip });
  if (answer.body.code === 8) answer = await server.call('auth.signin', { email, password, captcha: 'test-pass' }, { ip });
  const data = ok(answer);
  assert.equal(typeof data.access_token, 'string', `auth.signin gave a session: ${JSON.stringify(data)}`);
  return data.access_token;
}

/** The body of auth.signin (code and data), passing the test captcha when one is asked for. */
export async function signInAnswer(server: TestServer, email: string, password = PASSWORD): Promise<Answer['body']> {
  let answer = await server.call('auth.signin', { email, password });
  if (answer.body.code === 8) answer = await server.call('auth.signin', { email, password, captcha: 'test-pass' });
  return answer.body;
}

/** users.get for one user, full form, as seen by the token's owner (or anonymously). */
export async function publicUser(server: TestServer, userId: number, token?: string): Promise<any> {
  const data = ok(await server.call('users.get', { user_id: userId }, { token, http: 'GET' }));
  assert.equal(data.length, 1);
  return data[0];
}

/** Runs `run` against an admin server with the small world, closed afterwards. */
export async function withAdminServer(run: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startAdminServer({ world: await smallWorld() });
  try {
    await run(server);
  } finally {
    await server.close();
  }
}
