import type { AddressInfo } from 'node:net';
import { hashPassword } from '../src/auth/passwords.js';
import type { World } from '../src/world/schema.js';
import { ok, type TestServer } from './helpers.js';

export const PASSWORD = 'transport-test-password';
// Hashed once for the whole file: argon2 is deliberately slow.
const passwordHash = await hashPassword(PASSWORD);

/** Users 1-3 sign in; 4 is a bot of user 1. 30 cards of class 1 (ids 1-30), 5 of class 2 (31-35), two collections. */
export function transportWorld(): World {
  return {
    collections: [
      { collection_id: 1, title: 'Classic' },
      { collection_id: 2, title: 'Neon' },
    ],
    item_protos: [
      ...Array.from({ length: 30 }, (_, i) => ({
        item_proto_id: i + 1,
        type: 0,
        title: `Card ${i + 1}`,
        quality_id: 1,
        collection_id: 1,
        monopoly_id: 1 + (i % 3),
      })),
      ...Array.from({ length: 5 }, (_, i) => ({
        item_proto_id: 31 + i,
        type: 0,
        title: `Neon card ${i + 1}`,
        quality_id: 2,
        collection_id: 2,
        monopoly_id: 1,
      })),
    ],
    users: [
      { user_id: 1, email: 'alice@example.com', password_hash: passwordHash, domain: 'alice', nick: 'Alice', nicks_old: ['Al'] },
      { user_id: 2, email: 'bob@example.com', password_hash: passwordHash, domain: 'bob', nick: 'Bob' },
      { user_id: 3, email: 'carol@example.com', password_hash: passwordHash, domain: 'carol', nick: 'Carol' },
      { user_id: 4, domain: 'robot', nick: 'Robot', bot_owner: 1 },
    ],
    items: [
      { user_id: 1, item_proto_id: 1, copies: 3 },
      { user_id: 1, item_proto_id: 31 },
    ],
    friends: [[1, 2]],
  };
}

/** Signs a user in with auth.signin and returns the access token. */
export async function signIn(server: TestServer, email: string, ip = '127.0.0.1'): Promise<string> {
  const data = ok(await server.call('auth.signin', { email, password: PASSWORD }, { ip }));
  return data.access_token as string;
}

/** Makes the test server listen on a free local port; returns its base URL. */
export async function listen(server: TestServer): Promise<string> {
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = server.app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

export interface WireAnswer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** One request over a real socket. */
export async function wire(url: string, init: RequestInit = {}): Promise<WireAnswer> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

export const json = (value: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(value),
});

export const form = (value: Record<string, string>): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(value).toString(),
});
