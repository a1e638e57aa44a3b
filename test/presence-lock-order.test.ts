import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { DB_KIND, processDatabaseEnv, startTestServer, type TestServer } from './helpers.js';
import { user } from './item-fixtures.js';
import { updateLastSeen } from '../src/users/queries.js';

/*
 * The presence writer records last_seen for many users in one statement. Writers of several
 * users' rows (a trade's parties, a pair of friends) lock them in user id order; the presence
 * writer must too, or the two deadlock, and PostgreSQL aborts one of them (a trade, a ban, a
 * friendship answering 3). Its update alone would take the rows in the order it finds them: on a
 * small table, the order they sit in, which an update of user 1 puts after user 2.
 */

const postgresOnly = { skip: DB_KIND !== 'postgres' && 'PostgreSQL only: SQLite runs one writer at a time and takes no row locks' };

let server: TestServer;
let other: pg.Client;

before(async () => {
  if (DB_KIND !== 'postgres') return;
  server = await startTestServer({ world: { users: [user(1), user(2)] } });
  // User 1's row now sits after user 2's.
  await server.db.kysely.updateTable('users').set({ nick: 'moved' }).where('user_id', '=', 1).execute();
  other = new pg.Client({ connectionString: processDatabaseEnv(server.location).DATABASE_URL });
  await other.connect();
});
after(async () => {
  await other?.end();
  await server?.close();
});

test(
  'last_seen is written with the rows locked in user id order, so it waits for a writer of two users instead of deadlocking',
  postgresOnly,
  async () => {
    // As a trade's offer does: user 1 for update, then user 2.
    await other.query('begin');
    await other.query('select user_id from users where user_id = 1 for update');
    const presence = updateLastSeen(
      server.db,
      new Map([
        [1, 5_000_000],
        [2, 5_000_000],
      ]),
    );
    // The presence writer is waiting now (for user 1, in id order; out of order, it would hold user 2).
    await new Promise((resolve) => setTimeout(resolve, 300));
    await other.query('select user_id from users where user_id = 2 for share');
    await other.query('commit');
    await presence;
    const rows = await server.db.kysely.selectFrom('users').select(['user_id', 'last_seen']).orderBy('user_id').execute();
    assert.deepEqual(rows, [
      { user_id: 1, last_seen: 5_000_000 },
      { user_id: 2, last_seen: 5_000_000 },
    ]);
  },
);
