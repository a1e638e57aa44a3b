import { hashPassword } from '../src/auth/passwords.js';
import { postSystemMessage } from '../src/chat/moderation.js';
import { importWorld } from '../src/world/import.js';
import type { World } from '../src/world/schema.js';
import { startTestServer, type TestServer } from './helpers.js';
import { catalogWorld, tokenFor } from './item-fixtures.js';
import type { Fixture, FuzzTarget, Secrets } from './fuzz-support.js';
import { WORLD_CHANGED } from '../src/infra/channels.js';

/** The server the fuzz suites attack: a small world with every kind of thing a method can name. */

const PASSWORD = 'correct horse battery';
const ADMIN_KEY = 'fuzz-admin-key-0123456789';
export const USER = 1;
export const BOT = 5;

function accounts(passwordHash: string): NonNullable<World['users']> {
  return [
    { user_id: 1, email: 'alice@example.com', password_hash: passwordHash, nick: 'Alice', domain: 'alice' },
    { user_id: 2, email: 'bob@example.com', password_hash: passwordHash, nick: 'Bob', domain: 'bob', inventory_privacy: 'friends' },
    { user_id: 3, nick: 'Carol', domain: 'carol', inventory_privacy: 'nobody' },
    { user_id: 4, nick: 'Dave', captcha: 'always', email: 'dave@example.com', password_hash: passwordHash },
    { user_id: BOT, nick: 'AliceBot', bot_owner: 1 },
  ];
}

/** `count` items with consecutive ids from `first`. */
const run = (first: number, count: number, user_id: number, item_proto_id: number) =>
  Array.from({ length: count }, (_, i) => ({ item_id: first + i, user_id, item_proto_id, ts_owned: 100 + i }));

export interface FuzzServer {
  server: TestServer;
  target: FuzzTarget;
  fixture: Fixture;
}

export async function startFuzzServer(): Promise<FuzzServer> {
  const passwordHash = await hashPassword(PASSWORD);
  const users = accounts(passwordHash);
  const world: World = {
    ...catalogWorld,
    users,
    items: [...run(1000, 60, 1, 101), ...run(2000, 10, 1, 601), ...run(3000, 20, 2, 101), ...run(4000, 10, 1, 951)],
    friends: [[1, 2]],
    friend_requests: [{ from: 3, to: 1 }],
    blocks: [{ user_id: 4, blocked_user_id: 1 }],
  };
  const server = await startTestServer({ world, config: { rateLimit: false, adminKey: ADMIN_KEY } });
  const msgId = await postSystemMessage(server.services, { type: 3, user_id: 2, user_id_receiver: 1, item_proto_id: 101 });

  const restore = async (): Promise<Secrets> => {
    // Accounts come back as they were (a run may have banned, muted, renamed or replaced them).
    const stored = await server.db.kysely.selectFrom('users').select(['user_id', 'global_ban', 'muted_until', 'bot_owner_id']).execute();
    const intact = users.every((u) => stored.some((s) => s.user_id === u.user_id && s.global_ban === 0 && s.muted_until === null));
    if (!intact) {
      await importWorld(server.db, { users }, { mode: 'merge', now: Math.floor(server.clock.now() / 1000) });
      await server.services.bus.publish(WORLD_CHANGED, {});
    }
    return { userToken: await tokenFor(server, USER), botToken: await tokenFor(server, BOT, { bot: true }), adminKey: ADMIN_KEY };
  };

  const target: FuzzTarget = {
    db: server.db,
    restore,
    async inject(wire, ip) {
      const response = await server.app.inject({
        method: wire.method,
        url: wire.url,
        headers: wire.headers,
        payload: wire.payload,
        remoteAddress: ip,
      });
      return { status: response.statusCode, text: response.body };
    },
  };
  const fixture: Fixture = {
    userIds: users.map((u) => u.user_id),
    domains: ['alice', 'bob', 'carol', 'nobody-here'],
    itemIds: [1000, 1005, 1050, 2000, 3000, 4000],
    protoIds: catalogWorld.item_protos!.map((p) => p.item_proto_id),
    emails: ['alice@example.com', 'ALICE@example.com', 'dave@example.com', 'nobody@example.com'],
    password: PASSWORD,
    msgIds: [msgId, 'no-such-message'],
  };
  return { server, target, fixture };
}
